// Internal: runs work(i) for i in [0, n) on worker threads and hands the results to sink(i, r)
// on the calling thread strictly in index order (a reorder buffer). At most `window` results are
// in flight or waiting, which bounds memory whatever the thread count.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace probe::rut {

template <class R>
void ordered_parallel(std::size_t n, int threads, std::size_t window,
                      const std::function<R(std::size_t)>& work,
                      const std::function<void(std::size_t, R&&)>& sink) {
  if (n == 0) return;
  threads = std::max(1, threads);
  window = std::max<std::size_t>(window, static_cast<std::size_t>(threads));
  if (threads == 1) {
    for (std::size_t i = 0; i < n; ++i) sink(i, work(i));
    return;
  }
  std::mutex m;
  std::condition_variable cv;
  std::map<std::size_t, std::optional<R>> ready;
  std::size_t next_take = 0, next_sink = 0;
  std::exception_ptr failure;
  bool stop = false;

  auto worker = [&] {
    for (;;) {
      std::size_t i;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return stop || next_take >= n || next_take < next_sink + window; });
        if (stop || next_take >= n) return;
        i = next_take++;
      }
      std::optional<R> r;
      try {
        r.emplace(work(i));
      } catch (...) {
        std::lock_guard lock(m);
        if (!failure) failure = std::current_exception();
        stop = true;
        cv.notify_all();
        return;
      }
      std::lock_guard lock(m);
      ready[i] = std::move(r);
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);

  try {
    while (next_sink < n) {
      std::optional<R> r;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return stop || ready.count(next_sink); });
        if (stop) break;
        auto it = ready.find(next_sink);
        r = std::move(it->second);
        ready.erase(it);
      }
      sink(next_sink, std::move(*r));
      {
        std::lock_guard lock(m);
        ++next_sink;
      }
      cv.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(m);
    if (!failure) failure = std::current_exception();
    stop = true;
  }
  {
    std::lock_guard lock(m);
    stop = true;
  }
  cv.notify_all();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace probe::rut
