set(PROBE_SOURCES
  Npy.cpp
  Pickle.cpp
  Pt.cpp
  Strided.cpp
  TensorFile.cpp
  Zip.cpp
)
