// Internal: which records of an online stream are checked. One rank's files belong to one run; a name is
// checked once; a resend of the same bytes is dropped and other content under a checked name is a
// conflict. The digests of checked records are kept in a text file beside the CSVs so that a resumed
// server still tells a resend from a conflict.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace probe::rut {

using RecordDigest = std::array<std::uint8_t, 32>;

/// What becomes of one record.
enum class Admission {
  Check,     ///< first record under its name: checked, and its digest kept
  Repeat,    ///< the same bytes again (or a name written before digests were kept): dropped
  Conflict,  ///< other bytes under a name already taken: refused
  OtherRun,  ///< another run's record: refused
  Ignored,   ///< of this run, but not a record checked on its own (module, backward keys)
};

/// Not thread-safe: the stream calls it under its lock.
class RecordBook {
 public:
  /// A resumed stream: `run_id` is the files' run (nullopt: not known yet), `done` the names already
  /// written, `digests` the text of the digests file (a line that does not parse, such as the torn tail
  /// of a killed server, is skipped: its name then compares as a resend). Returns how many leading bytes
  /// of `digests` are whole lines: the caller cuts the file there before appending, or a torn tail would
  /// swallow the next line.
  std::size_t resume(std::optional<std::string> run_id, const std::vector<std::string>& done,
                     std::string_view digests);

  /// Decides one record. The first record fixes the run (`*fixed_run` set true then, so the caller keeps
  /// the run id beside the files). `api` is the name it is checked under, nullopt for a record that is not
  /// checked on its own (only its run is looked at).
  Admission admit(const std::string& run_id, const std::optional<std::string>& api,
                  const RecordDigest& digest, bool* fixed_run = nullptr);

  const std::optional<std::string>& run_id() const { return run_id_; }

  /// The digests file's line for a record admitted as Check (names are escaped so that any byte survives).
  static std::string digest_line(std::string_view api, const RecordDigest& digest);

 private:
  std::optional<std::string> run_id_;
  std::unordered_map<std::string, std::optional<RecordDigest>> seen_;
};

/// 64 lower-case hex digits.
std::string hex_of(const RecordDigest& d);

}  // namespace probe::rut
