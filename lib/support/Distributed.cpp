// One process as a Distributed group, and the cost-ordered work queue on top of any group.
#include "probe/distributed.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>

#include "probe/error.h"

namespace probe {

Distributed::~Distributed() = default;

namespace {

class SingleProcess final : public Distributed {
 public:
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  void broadcast(std::string&, int root) override { check_root(root); }
  std::vector<std::string> gather(const std::string& bytes, int root) override {
    check_root(root);
    return {bytes};
  }
  void barrier() override {}
  void reset_counter() override { counter_.store(0); }
  std::int64_t fetch_add(std::int64_t n) override { return counter_.fetch_add(n); }
  [[noreturn]] void abort(int code) noexcept override { std::_Exit(code); }

 private:
  static void check_root(int root) {
    if (root != 0)
      throw Error(ErrorKind::InvalidArgument, "root rank " + std::to_string(root) + " of a group of 1");
  }
  std::atomic<std::int64_t> counter_{0};
};

}  // namespace

Distributed& single_process() {
  static SingleProcess group;
  return group;
}

std::vector<std::size_t> largest_first(std::span<const double> weights) {
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // A NaN weight (no estimate) sorts as 0: stable_sort needs a strict weak order.
  auto key = [&](std::size_t i) { return weights[i] == weights[i] ? weights[i] : 0.0; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
  return order;
}

WorkPlan simulate_queue(std::span<const double> weights, std::span<const std::size_t> order, int workers) {
  if (workers < 1) throw Error(ErrorKind::InvalidArgument, "simulate_queue: workers must be >= 1");
  WorkPlan plan;
  plan.worker_of.assign(weights.size(), -1);
  plan.load.assign(static_cast<std::size_t>(workers), 0.0);
  for (std::size_t i : order) {
    if (i >= weights.size())
      throw Error(ErrorKind::InvalidArgument, "simulate_queue: order names a missing item");
    // The worker that becomes idle first is the one with the least work so far.
    auto idle = std::min_element(plan.load.begin(), plan.load.end());
    plan.worker_of[i] = static_cast<int>(idle - plan.load.begin());
    *idle += weights[i];
  }
  return plan;
}

std::vector<std::size_t> run_work_queue(Distributed& group, std::span<const double> weights,
                                        const std::function<void(std::size_t)>& run, int threads) {
  const std::vector<std::size_t> order = largest_first(weights);
  group.reset_counter();
  std::mutex m;
  std::vector<std::size_t> mine;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto claim_and_run = [&] {
    while (!failed.load()) {
      const std::int64_t next = group.fetch_add(1);
      if (next < 0 || static_cast<std::size_t>(next) >= order.size()) return;
      const std::size_t item = order[static_cast<std::size_t>(next)];
      {
        std::lock_guard lock(m);
        mine.push_back(item);
      }
      try {
        run(item);
      } catch (...) {
        std::lock_guard lock(m);
        if (!failure) failure = std::current_exception();
        failed.store(true);
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(claim_and_run);
  claim_and_run();
  for (auto& t : helpers) t.join();
  if (failure) std::rethrow_exception(failure);
  return mine;
}

}  // namespace probe
