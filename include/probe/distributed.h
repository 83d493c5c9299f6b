// Processes that share one job (the ranks of an MPI job, or one process alone) as probe's entry points see
// them: rank and size, moving byte buffers between ranks, and the shared counter a work queue hands items
// out with. No MPI types here: libprobe implements one process (single_process()); the optional component
// probe::mpi (probe/mpi.h) implements it over an MPI communicator, and an embedder may implement it over
// its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "probe/export.h"

namespace probe {

/// A group of ranks. The collective calls (broadcast, gather, barrier, reset_counter) must be made by every
/// rank in the same order; fetch_add is one-sided. Calls may come from any one thread at a time.
class PROBE_API Distributed {
 public:
  virtual ~Distributed();
  /// This process's rank, 0 .. size() - 1; rank 0 writes the output files.
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  /// Makes `bytes` on every rank equal to `root`'s.
  virtual void broadcast(std::string& bytes, int root = 0) = 0;
  /// Every rank's `bytes`, indexed by rank, at `root`; an empty vector on the other ranks.
  virtual std::vector<std::string> gather(const std::string& bytes, int root = 0) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
  /// Sets the shared counter to 0 on every rank's view (a barrier on both sides).
  virtual void reset_counter() = 0;
  /// Adds `n` to the shared counter atomically and returns its value before: how ranks claim work.
  virtual std::int64_t fetch_add(std::int64_t n) = 0;
  /// Ends the whole job with `code`: for a rank that cannot go on while others may wait for it in a
  /// collective (applications call it; probe's library functions never do).
  [[noreturn]] virtual void abort(int code) noexcept = 0;
};

/// The group of this process alone (rank 0 of 1): what the entry points use when given no group.
PROBE_API Distributed& single_process();

/// The order a work queue hands items out in: indices of `weights` heaviest first, equal weights in index
/// order, so a huge item starts first instead of ending the run alone.
PROBE_API std::vector<std::size_t> largest_first(std::span<const double> weights);

/// Where items land when `workers` take them in `order`, each idle worker the next (the least-loaded worker
/// takes it; ties to the lowest worker): the worker of each item and the load (sum of weights) of each
/// worker.
struct PROBE_API WorkPlan {
  std::vector<int> worker_of;
  std::vector<double> load;
};
PROBE_API WorkPlan simulate_queue(std::span<const double> weights, std::span<const std::size_t> order,
                                  int workers);

/// Runs `run(i)` for the items [0, weights.size()) that this rank claims from `group`'s shared counter in
/// largest_first order, until none remain; every item runs on exactly one rank. `threads` threads of this
/// rank claim and run items concurrently (`run` must then be thread-safe). Collective (it resets the counter
/// first). Returns the indices this rank ran. When `run` throws, this rank
/// stops claiming and the first exception is rethrown once its threads have ended (other ranks take the
/// rest).
PROBE_API std::vector<std::size_t> run_work_queue(Distributed& group, std::span<const double> weights,
                                                  const std::function<void(std::size_t)>& run,
                                                  int threads = 1);

}  // namespace probe
