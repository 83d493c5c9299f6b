// The CLI's job group. Only this file sees MPI (PROBE_CLI_MPI, set when probe::mpi is built), so every other
// CLI object is the same with and without MPI.
#include "Cluster.h"

#include <cstdio>

#ifdef PROBE_CLI_MPI
#include "probe/mpi.h"
#endif

namespace probe::cli {
namespace {
Distributed* current = nullptr;
}

struct JobScope::State {
#ifdef PROBE_CLI_MPI
  std::unique_ptr<mpi::Session> session;
#endif
};

JobScope::JobScope([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv)
    : state_(std::make_unique<State>()) {
#ifdef PROBE_CLI_MPI
  // A plain `probe ...` stays a plain process: MPI's singleton start would cost time and spawn a daemon.
  if (mpi::launched_by_mpi()) {
    state_->session = std::make_unique<mpi::Session>(argc, argv);
    current = &state_->session->world();
    // Rank 0 reports for the job; the others' stdout (summaries, tables) would repeat it. Their errors still
    // reach stderr.
    if (current->rank() != 0) std::freopen("/dev/null", "w", stdout);
  }
#endif
}

JobScope::~JobScope() { current = nullptr; }

Distributed& job() { return current ? *current : single_process(); }

}  // namespace probe::cli
