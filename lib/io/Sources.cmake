probe_component(io USES support
  SOURCES
  Npy.cpp
  Pickle.cpp
  Pt.cpp
  Strided.cpp
  TensorFile.cpp
  Zip.cpp
)
