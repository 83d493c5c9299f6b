// Internal: the one pool of worker threads behind run_ut's engine, RunUtStream (and so the online server),
// OnlineChecker and parallel_for. Work is given in slots: a slot is reserved (bounded, waiting or refused
// when full), then committed with the job to run. A committed job's result is a delivery (a closure) run
// one at a time: in slot order (a reorder buffer) for Order::Slot, as each job finishes for
// Order::Completion. Deliveries run on the worker that made them due, or, with `caller_delivers`, only in
// deliver_next() on the owner's thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace probe::detail {

class WorkerPool {
 public:
  using Delivery = std::function<void()>;
  /// A job: runs on a worker and returns its delivery (may be empty).
  using Work = std::function<Delivery()>;
  enum class Order { Completion, Slot };

  struct Options {
    /// Worker threads; 0: no threads, a committed job runs at once on the committing thread.
    int threads = 1;
    Order order = Order::Completion;
    /// Only deliver_next() runs deliveries (on the caller's thread), never a worker.
    bool caller_delivers = false;
    /// Slots reserved and not yet delivered (waiting, running or waiting for their turn).
    std::size_t max_outstanding = std::numeric_limits<std::size_t>::max();
    /// Slots reserved and not yet running.
    std::size_t max_waiting = std::numeric_limits<std::size_t>::max();
    /// Bytes held by slots reserved and not yet finished running (a job alone always fits).
    std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
  };

  /// A reserved place in the pool; given back when destroyed without commit().
  class Slot {
   public:
    Slot(Slot&& o) noexcept : pool_(o.pool_), index_(o.index_), bytes_(o.bytes_) { o.pool_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    std::size_t index() const { return index_; }

   private:
    friend class WorkerPool;
    Slot(WorkerPool* pool, std::size_t index, std::uint64_t bytes)
        : pool_(pool), index_(index), bytes_(bytes) {}
    WorkerPool* pool_;
    std::size_t index_;
    std::uint64_t bytes_;
  };

  explicit WorkerPool(Options options);
  /// Stops (undelivered results are dropped) and joins the workers.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Reserves a slot of `bytes`: waits while the pool is full when `wait`, else refuses. nullopt once the
  /// pool is stopped, closed or failed, or full without `wait`. `on_grant`, if given, runs under the pool's
  /// lock when the slot is granted (so grants and their bookkeeping happen in slot order) and returns the
  /// bytes the slot really holds (at most `bytes`); it must not call the pool. If it throws, the pool fails.
  std::optional<Slot> reserve(std::uint64_t bytes, bool wait,
                              const std::function<std::uint64_t()>& on_grant = {});
  /// Queues the slot's job; an empty `work` runs nothing and is delivered (nothing) in its turn.
  void commit(Slot&& slot, Work work);

  /// With caller_delivers: runs the next due delivery on this thread, waiting for it; false when nothing
  /// is outstanding. Rethrows the pool's failure (a job or a delivery that threw).
  bool deliver_next();
  /// Waits until every slot is delivered, or the pool stopped or failed.
  void wait_idle();
  /// Takes no more slots and stops running jobs; waiting reservations return nullopt. Idempotent.
  void stop();
  /// Takes no more slots; waits for what is outstanding (unless stopped or failed), joins the workers and
  /// returns the number of slots never delivered. Later calls return the same count.
  std::size_t finish();
  /// The first exception a job, a delivery or a grant threw; null while none did.
  std::exception_ptr failure() const;

  /// Whether reserve() may still succeed (not stopped, closed or failed).
  bool open() const;
  /// Adds workers up to `threads` (never removes any).
  void grow(int threads);
  int threads() const;
  /// Slots reserved and not yet delivered.
  std::size_t outstanding() const;
  std::uint64_t peak_bytes() const;
  /// The pool whose worker runs the calling thread, or null.
  static const WorkerPool* current();

 private:
  struct Job {
    std::size_t index;
    std::uint64_t bytes;
    Work work;
  };
  bool room(std::uint64_t bytes) const;
  void loop();
  void finished(std::unique_lock<std::mutex>& lock, std::size_t index, Delivery delivery);
  void run_due(std::unique_lock<std::mutex>& lock);
  void fail(std::exception_ptr e);
  bool idle() const { return outstanding_ == 0; }

  Options o_;
  mutable std::mutex m_;
  std::condition_variable work_cv_, room_cv_, done_cv_;
  std::deque<Job> queue_;
  std::map<std::size_t, Delivery> ready_;  // finished, waiting for their turn (Order::Slot) or for delivery
  std::size_t next_slot_ = 0, next_delivery_ = 0;
  std::size_t outstanding_ = 0, waiting_ = 0;
  std::uint64_t held_bytes_ = 0, peak_bytes_ = 0;
  std::mutex deliver_m_;  // deliveries of Order::Completion run one at a time
  bool delivering_ = false, closed_ = false, stopped_ = false, exit_ = false, joined_ = false;
  std::size_t dropped_ = 0;
  std::exception_ptr failure_;
  std::vector<std::thread> workers_;
};

/// Runs work(i) for i in [0, n) on `threads` workers and hands each result to sink(i, r) on the calling
/// thread strictly in index order. At most `window` (at least `threads`) results are in flight or waiting,
/// which bounds memory whatever the thread count; one thread runs everything on the caller, one at a time.
/// The first exception of a work or a sink stops the rest and is rethrown.
template <class R>
void ordered_parallel(std::size_t n, int threads, std::size_t window,
                      const std::function<R(std::size_t)>& work,
                      const std::function<void(std::size_t, R&&)>& sink) {
  WorkerPool::Options o;
  o.threads = threads > 1 ? threads : 0;
  o.order = WorkerPool::Order::Slot;
  o.caller_delivers = true;
  o.max_outstanding = threads > 1 ? std::max<std::size_t>(window, static_cast<std::size_t>(threads)) : 1;
  WorkerPool pool(o);
  std::size_t next = 0;
  for (;;) {
    for (; next < n; ++next) {
      std::optional<WorkerPool::Slot> slot = pool.reserve(0, false);
      if (!slot) break;
      pool.commit(std::move(*slot), [&work, &sink, i = next]() -> WorkerPool::Delivery {
        auto r = std::make_shared<R>(work(i));
        return [&sink, i, r] { sink(i, std::move(*r)); };
      });
    }
    if (!pool.deliver_next() && next >= n) return;
  }
}

}  // namespace probe::detail
