// probe::Distributed over an MPI communicator: collectives for broadcast/gather/barrier and a one-sided
// counter (MPI_Fetch_and_op on a window held by rank 0) for the work queue, so no rank has to serve requests.
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>

#include "probe/error.h"
#include "probe/mpi.h"

namespace probe::mpi {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ErrorKind::Io,
              std::string("MPI: ") + what + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

// Messages above this many bytes go in pieces: MPI counts are int.
constexpr std::size_t kPiece = std::size_t{1} << 30;

class MpiGroup final : public Distributed {
 public:
  explicit MpiGroup(MPI_Comm comm) {
    check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    const MPI_Aint bytes = rank_ == 0 ? static_cast<MPI_Aint>(sizeof(std::int64_t)) : 0;
    check(MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm_, &counter_base_, &window_),
          "MPI_Win_allocate");
    if (rank_ == 0) *static_cast<std::int64_t*>(counter_base_) = 0;
    check(MPI_Win_lock_all(0, window_), "MPI_Win_lock_all");
    check(MPI_Barrier(comm_), "MPI_Barrier");
  }
  ~MpiGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
    MPI_Comm_free(&comm_);
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }

  void broadcast(std::string& bytes, int root) override {
    std::lock_guard lock(mutex_);
    check_root(root);
    unsigned long long n = bytes.size();
    check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, comm_), "MPI_Bcast");
    bytes.resize(static_cast<std::size_t>(n));
    for (std::size_t at = 0; at < bytes.size(); at += kPiece) {
      const int piece = static_cast<int>(std::min(kPiece, bytes.size() - at));
      check(MPI_Bcast(bytes.data() + at, piece, MPI_CHAR, root, comm_), "MPI_Bcast");
    }
  }

  std::vector<std::string> gather(const std::string& bytes, int root) override {
    std::lock_guard lock(mutex_);
    check_root(root);
    // Rows of one round are small; a rank's share above 2 GiB would need pieces, which nothing sends.
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
      throw Error(ErrorKind::Unsupported,
                  "MPI gather of " + std::to_string(bytes.size()) + " bytes from one rank");
    int n = static_cast<int>(bytes.size());
    std::vector<int> counts(rank_ == root ? static_cast<std::size_t>(size_) : 0);
    check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
    std::vector<int> displs(counts.size());
    long long total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (total > INT_MAX) throw Error(ErrorKind::Unsupported, "MPI gather of more than 2 GiB at the root");
      displs[r] = static_cast<int>(total);
      total += counts[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Gatherv(bytes.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, root,
                      comm_),
          "MPI_Gatherv");
    std::vector<std::string> out;
    for (std::size_t r = 0; r < counts.size(); ++r)
      out.emplace_back(all, static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(counts[r]));
    return out;
  }

  void barrier() override {
    std::lock_guard lock(mutex_);
    check(MPI_Barrier(comm_), "MPI_Barrier");
  }

  void reset_counter() override {
    std::lock_guard lock(mutex_);
    // Every rank has stopped claiming from the previous queue before rank 0 clears it, and nobody claims from
    // the new one before it is clear.
    check(MPI_Barrier(comm_), "MPI_Barrier");
    if (rank_ == 0) {
      const std::int64_t zero = 0;
      std::int64_t old = 0;
      check(MPI_Fetch_and_op(&zero, &old, MPI_INT64_T, 0, 0, MPI_REPLACE, window_), "MPI_Fetch_and_op");
      check(MPI_Win_flush(0, window_), "MPI_Win_flush");
    }
    check(MPI_Barrier(comm_), "MPI_Barrier");
  }

  std::int64_t fetch_add(std::int64_t n) override {
    std::lock_guard lock(mutex_);
    std::int64_t old = 0;
    check(MPI_Fetch_and_op(&n, &old, MPI_INT64_T, 0, 0, MPI_SUM, window_), "MPI_Fetch_and_op");
    check(MPI_Win_flush(0, window_), "MPI_Win_flush");
    return old;
  }

  [[noreturn]] void abort(int code) noexcept override {
    MPI_Abort(comm_, code);
    std::_Exit(code);
  }

 private:
  void check_root(int root) const {
    if (root < 0 || root >= size_)
      throw Error(ErrorKind::InvalidArgument,
                  "root rank " + std::to_string(root) + " of a group of " + std::to_string(size_));
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  void* counter_base_ = nullptr;
  int rank_ = 0, size_ = 1;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Distributed> group_over(MPI_Comm comm) { return std::make_unique<MpiGroup>(comm); }

bool launched_by_mpi() noexcept {
  // Open MPI's mpirun, PMIx launchers (srun --mpi=pmix, the MPI operator's mpirun) and PMI-1/2 (srun, MPICH's
  // hydra) each set one of these in every rank's environment.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

Session::Session(int* argc, char*** argv) {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    owns_ = true;
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      throw Error(ErrorKind::Unsupported, "this MPI library provides no MPI_THREAD_SERIALIZED");
    }
  }
  world_ = group_over(MPI_COMM_WORLD);
}

Session::~Session() {
  world_.reset();
  if (owns_) MPI_Finalize();
}

}  // namespace probe::mpi
