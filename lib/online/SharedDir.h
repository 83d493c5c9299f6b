// Internal: online pre-check's shared-directory mode (nfs_path; dump-and-compare §5.4 with the names of
// §5.5): the training side writes each record as `{rank}_{step}_{seq}_{api}.rec` (a precheck frame) through a
// temporary file and an atomic link, plus `start_{rank}` / `end_{rank}` markers; the server polls the
// directory, checks the records of a rank in seq order and deletes each file once it has taken it. Names
// carry rank, step and seq, so ranks and steps never overwrite each other (msprobe's quirk), and an existing
// name is never replaced.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace probe::online::detail {

/// The file a server holds an exclusive flock on while it watches the directory (hidden: listings skip it).
inline constexpr std::string_view kSharedDirLock = ".probe_server.lock";

struct SharedDirName {
  enum class Kind { Start, End, Record };
  Kind kind = Kind::Record;
  std::uint64_t rank = 0, step = 0, seq = 0;
  std::string api;  ///< records only
};
/// What a file name in the directory is; nullopt for anything else (temporaries start with '.').
std::optional<SharedDirName> parse_shared_dir_name(std::string_view file_name);

/// The training side. Not thread-safe (the Client serialises calls).
class SharedDirWriter {
 public:
  /// Throws probe::Error (Io) when `dir` is not a writable directory.
  explicit SharedDirWriter(std::string dir);
  /// Writes start_{rank} the first time a rank is used, then the record; throws InvalidArgument when the
  /// record's name exists (never overwritten) or `api` is not [A-Za-z0-9_.-]+.
  void record(std::uint64_t rank, std::uint64_t step, std::uint64_t seq, std::string_view api,
              std::span<const std::byte> frame);
  /// Writes end_{rank} for every rank started.
  void end_all();
  /// Record files written and since removed by a server (taken), as far as the last check saw.
  std::size_t taken() const { return taken_; }
  /// Polls until every record file written is taken (true) or `deadline` passes (false).
  bool wait_taken(std::chrono::steady_clock::time_point deadline);
  /// Removes the record files and markers still in the directory (no server took them); returns taken().
  std::size_t withdraw();

 private:
  void publish(const std::string& name, std::span<const std::byte> bytes);
  // Drops the taken files from pending_; `all` false checks the oldest few only (cheap, per record).
  void check_taken(bool all);
  std::string dir_;
  std::vector<std::uint64_t> started_;
  std::uint64_t temp_counter_ = 0;
  std::deque<std::string> pending_;   // record files written, not yet seen taken
  std::vector<std::string> markers_;  // start_/end_ files written
  std::size_t taken_ = 0;
};

/// A directory listing (names only, no '.' files), for the server's poll.
std::vector<std::string> list_shared_dir(const std::string& dir);
/// Reads a record file without following symlinks; throws probe::Error (Format) for a non-regular file or one
/// above `max_bytes`, Io when it cannot be read.
std::vector<std::byte> read_shared_file(const std::string& path, std::uint64_t max_bytes);

}  // namespace probe::online::detail
