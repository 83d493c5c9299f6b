// Internal: what probe's entry points share to run across the ranks of a probe::Distributed group: a byte
// encoding for what ranks exchange, an error carried from the rank that hit it to every rank (so each throws
// it instead of waiting in a collective), and map_on_ranks, the work queue whose results meet at rank 0.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "probe/distributed.h"
#include "probe/error.h"

namespace probe::detail {

/// Length-prefixed fields, read back in the order written (only between ranks of one build).
class WireOut {
 public:
  void u64(std::uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void f64(double v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes_ += s;
  }
  void strs(const std::vector<std::string>& v) {
    u64(v.size());
    for (const std::string& s : v) str(s);
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class WireIn {
 public:
  explicit WireIn(const std::string& bytes) : bytes_(bytes) {}
  std::uint64_t u64() {
    std::uint64_t v;
    take(&v, sizeof v);
    return v;
  }
  double f64() {
    double v;
    take(&v, sizeof v);
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> v(u64());
    for (std::string& s : v) s = str();
    return v;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void take(void* out, std::size_t n) {
    need(n);
    std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
  }
  void need(std::uint64_t n) const {
    if (n > bytes_.size() - at_) throw Error(ErrorKind::Internal, "truncated message from another rank");
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

/// Writes the exception `e` (probe::Error keeps its kind and fields; others become Internal).
void put_error(WireOut& out, std::exception_ptr e);
/// Reads one back; `rank` > 0 prefixes the message with the rank that hit it.
Error get_error(WireIn& in, int rank);

/// Runs `work(i)` for the items [0, weights.size()) across `group`'s ranks, heaviest first (run_work_queue,
/// `threads` per rank), and returns every item's result in item order at rank 0, and also on the other ranks
/// when `everywhere`; otherwise an empty vector there. An exception on any rank is rethrown on every rank
/// (the first by rank). Collective.
std::vector<std::string> map_on_ranks(Distributed& group, std::span<const double> weights,
                                      const std::function<std::string(std::size_t)>& work, int threads = 1,
                                      bool everywhere = false);

/// Runs `step` on rank 0 and then, on every rank, returns what it returned or throws what it threw. For what
/// rank 0 alone decides (file names, a resume's done-set), read once.
std::string decide_on_root(Distributed& group, const std::function<std::string()>& step);

}  // namespace probe::detail
