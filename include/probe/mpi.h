// probe::mpi, the optional component (find_package(probe COMPONENTS mpi), target probe::mpi) that runs
// probe's entry points across the ranks of an MPI job: a probe::Distributed over an MPI communicator.
// libprobe itself never links MPI.
#pragma once

#include <mpi.h>

#include <memory>

#include "probe/distributed.h"

namespace probe::mpi {

/// A group over `comm` (not owned; it must outlive the group). Duplicates the communicator, so probe's
/// messages never meet the embedder's, and opens the shared counter (collective over `comm`). MPI must be
/// initialised with at least MPI_THREAD_SERIALIZED; the group serialises its own calls.
std::unique_ptr<Distributed> group_over(MPI_Comm comm);

/// True when this process was started by an MPI launcher (mpirun, srun, an MPI operator's launcher), so a
/// program can stay a plain process otherwise (no MPI_Init, no singleton runtime).
bool launched_by_mpi() noexcept;

/// MPI_Init_thread (MPI_THREAD_SERIALIZED) unless MPI is already initialised, and MPI_Finalize on
/// destruction when this session initialised it; world() is the group over MPI_COMM_WORLD.
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Distributed& world() { return *world_; }

 private:
  bool owns_ = false;
  std::unique_ptr<Distributed> world_;
};

}  // namespace probe::mpi
