// The job the CLI runs in: the ranks of an MPI launch (mpirun, srun) when the CLI was built with probe::mpi
// and started by a launcher, else this process alone.
#pragma once

#include <memory>

#include "probe/distributed.h"

namespace probe::cli {

/// Joins the job for the lifetime of main (MPI_Init / MPI_Finalize under a launcher).
class JobScope {
 public:
  JobScope(int* argc, char*** argv);
  ~JobScope();
  JobScope(const JobScope&) = delete;
  JobScope& operator=(const JobScope&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The group of the job (single_process() outside a JobScope or without a launcher).
Distributed& job();

}  // namespace probe::cli
