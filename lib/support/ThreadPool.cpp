#include "support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "probe/error.h"
#include "probe/parallel.h"
#include "support/WorkerPool.h"

namespace probe {
namespace detail {
namespace {

// The process-wide workers of parallel_for: a WorkerPool grown to the thread count less one (the caller
// works too), in completion order without deliveries.
class Pool {
 public:
  static Pool& instance() {
    static Pool pool;
    return pool;
  }
  int size() const noexcept { return threads_.load(); }
  void resize(int n) { threads_.store(std::max(1, n)); }
  bool on_worker() const { return WorkerPool::current() == &workers_; }

  void submit(std::function<void()> task) {
    workers_.grow(threads_.load() - 1);
    std::optional<WorkerPool::Slot> slot = workers_.reserve(0, true);
    if (!slot) {  // only while the process exits
      task();
      return;
    }
    workers_.commit(std::move(*slot), [task = std::move(task)]() -> WorkerPool::Delivery {
      task();
      return {};
    });
  }

 private:
  Pool() : threads_(std::max(1u, std::thread::hardware_concurrency())), workers_(WorkerPool::Options{0}) {}

  std::atomic<int> threads_;
  WorkerPool workers_;
};

}  // namespace

int parallel_chunks(std::int64_t n, std::int64_t grain) {
  if (n <= 0) return 0;
  grain = std::max<std::int64_t>(grain, 1);
  std::int64_t by_grain = (n + grain - 1) / grain;
  int threads = Pool::instance().on_worker() ? 1 : Pool::instance().size();
  return static_cast<int>(std::min<std::int64_t>(by_grain, threads));
}

void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, const RangeFn& fn) {
  std::int64_t n = end - begin;
  int chunks = parallel_chunks(n, grain);
  if (chunks <= 0) return;
  if (chunks == 1) {
    fn(begin, end, 0);
    return;
  }
  // Ranges are handed out on demand rather than one fixed share per thread: a core that is slowed
  // (another process, a hypervisor, a larger row) would otherwise hold up the whole call. Ranges are
  // `grain` to kMaxRangeGrains grains long, at most 64 per thread where that allows.
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t piece =
      std::clamp((n + 64 * chunks - 1) / (64 * std::int64_t{chunks}), grain, kMaxRangeGrains * grain);
  const std::int64_t pieces = (n + piece - 1) / piece;
  std::atomic<std::int64_t> next{0};
  std::mutex m;
  std::condition_variable done_cv;
  int remaining = chunks - 1;
  std::exception_ptr first_error;
  auto run_slot = [&](int slot) {
    try {
      for (std::int64_t k = next.fetch_add(1, std::memory_order_relaxed); k < pieces;
           k = next.fetch_add(1, std::memory_order_relaxed)) {
        std::int64_t b = begin + k * piece;
        fn(b, std::min(end, b + piece), slot);
      }
    } catch (...) {
      next.store(pieces, std::memory_order_relaxed);  // the others stop at their next piece
      std::lock_guard lock(m);
      if (!first_error) first_error = std::current_exception();
    }
  };
  for (int c = 1; c < chunks; ++c) {
    Pool::instance().submit([&, c] {
      run_slot(c);
      std::lock_guard lock(m);
      if (--remaining == 0) done_cv.notify_one();
    });
  }
  run_slot(0);
  std::unique_lock lock(m);
  done_cv.wait(lock, [&] { return remaining == 0; });
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace detail

void set_num_threads(int n) {
  if (n < 1) throw Error(ErrorKind::InvalidArgument, "thread count must be at least 1");
  detail::Pool::instance().resize(n);
}

int num_threads() noexcept { return detail::Pool::instance().size(); }

}  // namespace probe
