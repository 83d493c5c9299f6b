// Internal: the run record beside run_ut's CSV files, accuracy_checking_run_<ts>.jsonl. Its first line is the
// fingerprint of the run (what the verdicts depend on); every later line is a checkpoint written after an
// API's rows reached the files: both files' sizes and hashes of their bytes. A resume proves from it that
// the files belong to this dump and these options and that nobody changed the rows since they were written.
// msprobe's CSV bytes stay as they are: the record is a file of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "run_ut/OutputFiles.h"

namespace probe::rut {

/// One input of the verdicts, compared on resume by name and value.
struct RunField {
  std::string name, value;
};
using RunFingerprint = std::vector<RunField>;

/// `<dir of the result file>/accuracy_checking_run_<ts>.jsonl`.
std::string run_record_path(const OutputPaths& paths);

/// 64-bit FNV-1a of `bytes`, continuing from `h`: detects changed rows, cheap enough to rehash the files.
inline constexpr std::uint64_t kFnvBasis = 14695981039346656037ull;
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnvBasis);
/// 16 lowercase hex digits.
std::string hex64(std::uint64_t v);

/// Writes the record with `fingerprint` (a temporary renamed into place, so a kill leaves no record or a
/// whole one) and, with `adopt_files`, a checkpoint of the files as they are (a resume of files without a
/// record, whose rows a later resume must not cut). Replaces a stale record of files that no longer exist.
void create_run_record(const OutputPaths& paths, const RunFingerprint& fingerprint, bool adopt_files = false);

/// Resume of files that have a record: throws InvalidArgument naming the first field of `current` whose
/// recorded value differs (another dump, other tensor files, other options, another probe), Format naming
/// the file and row when bytes a checkpoint covers were changed; then cuts both files and the record back
/// to the last checkpoint the files reach (what a kill wrote after it is checked again).
void verify_and_rewind(const OutputPaths& paths, const RunFingerprint& current);

/// Appends checkpoints to the record of `paths`, hashing the bytes the files gained since the last one.
class RunJournal {
 public:
  /// Starts from the files' current bytes (called once the headers are written).
  explicit RunJournal(const OutputPaths& paths);
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;
  /// Records the files as they are now; throws Io naming the record when it cannot be written.
  void checkpoint();

 private:
  struct Tracked {
    std::string path;
    std::uint64_t size = 0, hash = kFnvBasis;
  };
  void advance(Tracked& t);
  std::string record_;
  Tracked result_, details_;
  int fd_ = -1;
};

}  // namespace probe::rut
