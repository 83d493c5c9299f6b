// A probe::Distributed group whose ranks are threads of this process: the collectives meet at a barrier of
// shared slots, the counter is an atomic. It runs the distributed entry points without MPI, so the sanitizer
// builds (which leave MPI out) check them too.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probe/distributed.h"

namespace probe::testing {

class ThreadJob {
 public:
  explicit ThreadJob(int size) : size_(size), slots_(static_cast<std::size_t>(size)) {}
  int size() const { return size_; }

  // Returns once all `size` ranks have called it (reusable).
  void barrier() {
    std::unique_lock lock(m_);
    const std::uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }
  std::vector<std::string>& slots() { return slots_; }
  std::atomic<std::int64_t>& counter() { return counter_; }

  /// Runs `body(group)` on `size` threads, one rank each; rethrows the first exception of any rank.
  void run(const std::function<void(Distributed&)>& body);

 private:
  int size_;
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<std::string> slots_;
  std::atomic<std::int64_t> counter_{0};
};

class ThreadRank final : public Distributed {
 public:
  ThreadRank(ThreadJob& job, int rank) : job_(job), rank_(rank) {}
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return job_.size(); }
  void broadcast(std::string& bytes, int root) override {
    job_.barrier();
    if (rank_ == root) job_.slots()[0] = bytes;
    job_.barrier();
    bytes = job_.slots()[0];
    job_.barrier();
  }
  std::vector<std::string> gather(const std::string& bytes, int root) override {
    job_.barrier();
    job_.slots()[static_cast<std::size_t>(rank_)] = bytes;
    job_.barrier();
    std::vector<std::string> all;
    if (rank_ == root) all = job_.slots();
    job_.barrier();
    return all;
  }
  void barrier() override { job_.barrier(); }
  void reset_counter() override {
    job_.barrier();
    if (rank_ == 0) job_.counter().store(0);
    job_.barrier();
  }
  std::int64_t fetch_add(std::int64_t n) override { return job_.counter().fetch_add(n); }
  [[noreturn]] void abort(int) noexcept override { std::terminate(); }

 private:
  ThreadJob& job_;
  int rank_;
};

inline void ThreadJob::run(const std::function<void(Distributed&)>& body) {
  std::mutex m;
  std::exception_ptr first;
  std::vector<std::thread> ranks;
  for (int r = 0; r < size_; ++r)
    ranks.emplace_back([&, r] {
      ThreadRank rank(*this, r);
      try {
        body(rank);
      } catch (...) {
        std::lock_guard lock(m);
        if (!first) first = std::current_exception();
      }
    });
  for (auto& t : ranks) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace probe::testing
