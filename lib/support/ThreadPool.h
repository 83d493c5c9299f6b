// Internal: a small fork-join pool. parallel_for splits [begin, end) into ranges of at least
// `grain` items; the calling thread works too, and calls from inside a worker run inline so
// nested parallelism cannot deadlock.
#pragma once

#include <cstdint>
#include <functional>

namespace probe::detail {

using RangeFn = std::function<void(std::int64_t begin, std::int64_t end, int chunk)>;

/// With more than one thread, a range handed out by parallel_for is at most this many grains long,
/// so that how far one thread runs ahead of another stays bounded whatever the total size.
inline constexpr std::int64_t kMaxRangeGrains = 16;
/// Number of chunks parallel_for will use for this range (so callers can size per-chunk state).
int parallel_chunks(std::int64_t n, std::int64_t grain);
/// Runs fn over disjoint ranges covering [begin, end), handed out on demand; the third argument
/// is the id (0..parallel_chunks(n, grain)-1) of the thread running the range, and one id may
/// receive several ranges. Rethrows the first exception a range threw; later ranges are skipped.
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, const RangeFn& fn);

}  // namespace probe::detail
