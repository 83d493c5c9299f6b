#include "support/RankWork.h"

#include <map>
#include <mutex>
#include <new>

namespace probe::detail {

void put_error(WireOut& out, std::exception_ptr e) {
  auto other = [&](const std::string& message) {
    out.u64(static_cast<std::uint64_t>(ErrorKind::Internal));
    out.str(message);
    for (int i = 0; i < 3; ++i) out.str("");
  };
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    out.u64(static_cast<std::uint64_t>(err.kind()));
    out.str(err.message());
    out.str(err.file());
    out.str(err.field());
    out.str(err.api());
  } catch (const std::bad_alloc&) {
    other("out of memory");
  } catch (const std::exception& ex) {
    other(ex.what());
  } catch (...) {
    other("unknown exception");
  }
}

Error get_error(WireIn& in, int rank) {
  const auto kind = static_cast<ErrorKind>(in.u64());
  std::string message = in.str();
  std::string file = in.str(), field = in.str(), api = in.str();
  if (rank > 0) message = "rank " + std::to_string(rank) + ": " + message;
  return Error(kind, std::move(message), std::move(file), std::move(field), std::move(api));
}

std::string decide_on_root(Distributed& group, const std::function<std::string()>& step) {
  WireOut out;
  if (group.rank() == 0) {
    try {
      std::string result = step();
      out.u64(0);
      out.str(result);
    } catch (...) {
      WireOut failed;
      failed.u64(1);
      put_error(failed, std::current_exception());
      out = std::move(failed);
    }
  }
  group.broadcast(out.bytes());
  WireIn in(out.bytes());
  if (in.u64() != 0) throw get_error(in, 0);
  return in.str();
}

std::vector<std::string> map_on_ranks(Distributed& group, std::span<const double> weights,
                                      const std::function<std::string(std::size_t)>& work, int threads,
                                      bool everywhere) {
  std::map<std::size_t, std::string> mine;
  std::mutex m;
  std::exception_ptr failure;
  try {
    run_work_queue(
        group, weights,
        [&](std::size_t i) {
          std::string r = work(i);
          std::lock_guard lock(m);
          mine.emplace(i, std::move(r));
        },
        threads);
  } catch (...) {
    failure = std::current_exception();
  }
  WireOut out;
  out.u64(failure ? 1 : 0);
  if (failure) {
    put_error(out, failure);
  } else {
    out.u64(mine.size());
    for (const auto& [i, r] : mine) {
      out.u64(i);
      out.str(r);
    }
  }
  const std::vector<std::string> all = group.gather(out.bytes());
  // Rank 0 puts the results in item order, or names the first rank's error; then every rank learns which.
  WireOut verdict;
  std::vector<std::string> results;
  if (group.rank() == 0) {
    try {
      results.resize(weights.size());
      std::vector<bool> seen(weights.size());
      for (std::size_t r = 0; r < all.size(); ++r) {
        WireIn in(all[r]);
        if (in.u64() != 0) throw get_error(in, static_cast<int>(r));
        for (std::uint64_t n = in.u64(); n > 0; --n) {
          const std::uint64_t i = in.u64();
          if (i >= results.size() || seen[i]) throw Error(ErrorKind::Internal, "an item came back twice");
          seen[i] = true;
          results[i] = in.str();
        }
      }
      for (bool s : seen)
        if (!s) throw Error(ErrorKind::Internal, "an item came back from no rank");
      verdict.u64(0);
    } catch (...) {
      verdict.u64(1);
      put_error(verdict, std::current_exception());
    }
  }
  group.broadcast(verdict.bytes());
  WireIn v(verdict.bytes());
  if (v.u64() != 0) throw get_error(v, 0);
  if (!everywhere || group.size() == 1) return results;
  WireOut packed;
  if (group.rank() == 0) packed.strs(results);
  group.broadcast(packed.bytes());
  WireIn in(packed.bytes());
  return in.strs();
}

}  // namespace probe::detail
