#include "support/WorkerPool.h"

#include <algorithm>

namespace probe::detail {
namespace {

thread_local const WorkerPool* t_current = nullptr;

}  // namespace

WorkerPool::Slot::~Slot() {
  if (pool_) pool_->commit(std::move(*this), {});
}

WorkerPool::WorkerPool(Options options) : o_(std::move(options)) { grow(o_.threads); }

WorkerPool::~WorkerPool() {
  stop();
  {
    std::lock_guard lock(m_);
    exit_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
}

const WorkerPool* WorkerPool::current() { return t_current; }

void WorkerPool::grow(int threads) {
  std::lock_guard lock(m_);
  while (static_cast<int>(workers_.size()) < threads) workers_.emplace_back([this] { loop(); });
}

int WorkerPool::threads() const {
  std::lock_guard lock(m_);
  return static_cast<int>(workers_.size());
}

std::size_t WorkerPool::outstanding() const {
  std::lock_guard lock(m_);
  return outstanding_;
}

std::uint64_t WorkerPool::peak_bytes() const {
  std::lock_guard lock(m_);
  return peak_bytes_;
}

bool WorkerPool::open() const {
  std::lock_guard lock(m_);
  return !closed_ && !stopped_ && !failure_;
}

bool WorkerPool::room(std::uint64_t bytes) const {
  return outstanding_ < o_.max_outstanding && waiting_ < o_.max_waiting &&
         (held_bytes_ == 0 || held_bytes_ + bytes <= o_.max_bytes);
}

std::optional<WorkerPool::Slot> WorkerPool::reserve(std::uint64_t bytes, bool wait,
                                                    const std::function<std::uint64_t()>& on_grant) {
  std::unique_lock lock(m_);
  for (;;) {
    if (closed_ || stopped_ || failure_) return std::nullopt;
    if (room(bytes)) break;
    if (!wait) return std::nullopt;
    room_cv_.wait(lock);
  }
  const std::size_t index = next_slot_++;
  ++outstanding_;
  ++waiting_;
  std::uint64_t held = bytes;
  if (on_grant) {
    try {
      held = std::min(bytes, on_grant());
    } catch (...) {
      if (!failure_) failure_ = std::current_exception();
      work_cv_.notify_all();
      room_cv_.notify_all();
      done_cv_.notify_all();
    }
  }
  held_bytes_ += held;
  peak_bytes_ = std::max(peak_bytes_, held_bytes_);
  return Slot(this, index, held);
}

void WorkerPool::commit(Slot&& slot, Work work) {
  slot.pool_ = nullptr;
  std::unique_lock lock(m_);
  if (stopped_ || failure_) {  // never run: counted as dropped by finish()
    --waiting_;
    held_bytes_ -= slot.bytes_;
    room_cv_.notify_all();
    return;
  }
  if (!work) {
    --waiting_;
    held_bytes_ -= slot.bytes_;
    finished(lock, slot.index_, {});
    return;
  }
  if (workers_.empty()) {  // no threads: run it here
    --waiting_;
    lock.unlock();
    Delivery d;
    try {
      d = work();
    } catch (...) {
      fail(std::current_exception());
      return;
    }
    lock.lock();
    held_bytes_ -= slot.bytes_;
    finished(lock, slot.index_, std::move(d));
    return;
  }
  queue_.push_back(Job{slot.index_, slot.bytes_, std::move(work)});
  work_cv_.notify_one();
}

void WorkerPool::loop() {
  t_current = this;
  for (;;) {
    Job job;
    {
      std::unique_lock lock(m_);
      work_cv_.wait(lock, [&] { return stopped_ || failure_ || exit_ || !queue_.empty(); });
      if (stopped_ || failure_ || queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      --waiting_;
    }
    room_cv_.notify_all();
    Delivery d;
    try {
      d = job.work();
    } catch (...) {
      fail(std::current_exception());
      return;
    }
    job.work = nullptr;  // what the job captured is not needed while its delivery waits for its turn
    std::unique_lock lock(m_);
    held_bytes_ -= job.bytes;
    room_cv_.notify_all();
    finished(lock, job.index, std::move(d));
  }
}

void WorkerPool::finished(std::unique_lock<std::mutex>& lock, std::size_t index, Delivery delivery) {
  if (o_.caller_delivers) {
    ready_.emplace(index, std::move(delivery));
    done_cv_.notify_all();
    return;
  }
  if (o_.order == Order::Slot) {
    ready_.emplace(index, std::move(delivery));
    run_due(lock);
    return;
  }
  if (delivery && !stopped_ && !failure_) {
    lock.unlock();
    try {
      std::lock_guard one(deliver_m_);
      delivery();
    } catch (...) {
      lock.lock();
      if (!failure_) failure_ = std::current_exception();
      lock.unlock();
    }
    lock.lock();
  }
  --outstanding_;
  room_cv_.notify_all();
  done_cv_.notify_all();
  if (failure_) work_cv_.notify_all();
}

// Runs every delivery whose predecessors are delivered; one thread at a time, the lock released while
// delivering. A stop or a failure leaves the rest undelivered.
void WorkerPool::run_due(std::unique_lock<std::mutex>& lock) {
  if (delivering_) return;
  delivering_ = true;
  while (!stopped_ && !failure_) {
    auto it = ready_.find(next_delivery_);
    if (it == ready_.end()) break;
    Delivery d = std::move(it->second);
    ready_.erase(it);
    if (d) {
      lock.unlock();
      try {
        d();
      } catch (...) {
        lock.lock();
        if (!failure_) failure_ = std::current_exception();
        break;
      }
      lock.lock();
    }
    ++next_delivery_;
    --outstanding_;
    room_cv_.notify_all();
    done_cv_.notify_all();
  }
  delivering_ = false;
  done_cv_.notify_all();
  if (failure_) {
    work_cv_.notify_all();
    room_cv_.notify_all();
  }
}

bool WorkerPool::deliver_next() {
  std::unique_lock lock(m_);
  for (;;) {
    if (failure_) std::rethrow_exception(failure_);
    if (outstanding_ == 0 || stopped_) return false;
    auto it = o_.order == Order::Slot ? ready_.find(next_delivery_) : ready_.begin();
    if (it != ready_.end()) {
      Delivery d = std::move(it->second);
      ready_.erase(it);
      ++next_delivery_;
      lock.unlock();
      if (d) d();
      lock.lock();
      --outstanding_;
      room_cv_.notify_all();
      done_cv_.notify_all();
      return true;
    }
    done_cv_.wait(lock);
  }
}

void WorkerPool::fail(std::exception_ptr e) {
  std::lock_guard lock(m_);
  if (!failure_) failure_ = std::move(e);
  work_cv_.notify_all();
  room_cv_.notify_all();
  done_cv_.notify_all();
}

void WorkerPool::wait_idle() {
  std::unique_lock lock(m_);
  done_cv_.wait(lock, [&] { return idle() || stopped_ || failure_; });
}

void WorkerPool::stop() {
  {
    std::lock_guard lock(m_);
    stopped_ = true;
  }
  work_cv_.notify_all();
  room_cv_.notify_all();
  done_cv_.notify_all();
}

std::size_t WorkerPool::finish() {
  std::unique_lock lock(m_);
  if (!joined_) {
    closed_ = true;
    room_cv_.notify_all();
    done_cv_.wait(lock, [&] { return idle() || stopped_ || failure_; });
    exit_ = true;
    work_cv_.notify_all();
    lock.unlock();
    for (auto& t : workers_)
      if (t.joinable()) t.join();
    lock.lock();
    // A committing thread may be delivering what became due behind its slot.
    done_cv_.wait(lock, [&] { return !delivering_; });
    joined_ = true;
    dropped_ = outstanding_;
  }
  return dropped_;
}

std::exception_ptr WorkerPool::failure() const {
  std::lock_guard lock(m_);
  return failure_;
}

}  // namespace probe::detail
