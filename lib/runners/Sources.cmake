probe_component(runners USES dump support
  SOURCES
  Autograd.cpp
  LazyBlas.cpp
  NdIndex.cpp
  Schema.cpp
  RunnerKit.cpp
  Registry.cpp
  Builtins.cpp
  Ops.cpp
  Elementwise.cpp
  Activations.cpp
  Reductions.cpp
  Shape.cpp
  Indexing.cpp
  Joining.cpp
  Creation.cpp
  Linalg.cpp
  # neural-network runners
  NnKit.cpp
  Conv.cpp
  Pooling.cpp
  Norms.cpp
  Losses.cpp
  Attention.cpp
)
