#include "run_ut/RunRecord.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "probe/error.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"
#include "support/JsonText.h"

namespace probe::rut {
namespace fs = std::filesystem;

std::string run_record_path(const OutputPaths& paths) {
  return (fs::path(paths.result).parent_path() / ("accuracy_checking_run_" + paths.timestamp + ".jsonl"))
      .string();
}

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex64(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = kDigits[v & 0xF];
  return s;
}

namespace {

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(ErrorKind::Io, std::string("cannot write the run record: ") + std::strerror(errno), path);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void truncate_to(const std::string& path, std::uint64_t size) {
  // In place: the result file's inode carries the run's lock.
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0)
    throw Error(ErrorKind::Io, std::string("cannot truncate: ") + std::strerror(errno), path);
}

struct Checkpoint {
  std::uint64_t result = 0, result_hash = 0, details = 0, details_hash = 0;
  std::size_t line_end = 0;  // offset just past the record's line
};

std::optional<std::uint64_t> hex_value(const rapidjson::Value& v) {
  if (!v.IsString() || v.GetStringLength() != 16) return std::nullopt;
  std::uint64_t x = 0;
  for (const char* p = v.GetString(); *p; ++p) {
    const char c = *p;
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    x = x << 4 | static_cast<std::uint64_t>(d);
  }
  return x;
}

Checkpoint parse_checkpoint(std::string_view line, const std::string& record, std::size_t line_no) {
  const std::string where = "line " + std::to_string(line_no);
  const rapidjson::Document doc = detail::parse_json_document(line, record + " " + where);
  const rapidjson::Value& v = doc;
  Checkpoint c;
  auto number = [&](const char* name, std::uint64_t* out) {
    if (!v.IsObject() || !v.HasMember(name) || !v[name].IsUint64()) return false;
    *out = v[name].GetUint64();
    return true;
  };
  auto hash = [&](const char* name, std::uint64_t* out) {
    if (!v.IsObject() || !v.HasMember(name)) return false;
    const auto h = hex_value(v[name]);
    if (h) *out = *h;
    return h.has_value();
  };
  if (!number("result", &c.result) || !number("details", &c.details) ||
      !hash("result_hash", &c.result_hash) || !hash("details_hash", &c.details_hash))
    throw Error(ErrorKind::Format, where + " is not a checkpoint of a run record; refusing to resume", record,
                where);
  return c;
}

// Why a field that differs matters, for the message.
std::string field_hint(const std::string& name) {
  if (name == "dump_json") return " (another dump.json, or this one was changed)";
  if (name == "tensor_files") return " (the dump's tensor files differ: other names or sizes)";
  if (name == "probe_version") return " (another probe may judge differently)";
  return " (another option changes the verdicts)";
}

// 1-based CSV row at byte `offset` of text our writer wrote (every row ends with CRLF, the header is row 1).
std::size_t row_at(std::string_view text, std::uint64_t offset) {
  return static_cast<std::size_t>(
             std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) +
         1;
}

}  // namespace

namespace {

std::string checkpoint_line(std::uint64_t result, std::uint64_t result_hash, std::uint64_t details,
                            std::uint64_t details_hash) {
  return "{\"result\":" + std::to_string(result) + ",\"result_hash\":\"" + hex64(result_hash) +
         "\",\"details\":" + std::to_string(details) + ",\"details_hash\":\"" + hex64(details_hash) + "\"}\n";
}

}  // namespace

void create_run_record(const OutputPaths& paths, const RunFingerprint& fingerprint, bool adopt_files) {
  std::string line = "{";
  for (std::size_t i = 0; i < fingerprint.size(); ++i) {
    if (i) line += ',';
    line += detail::json_quote(fingerprint[i].name);
    line += ':';
    line += detail::json_quote(fingerprint[i].value);
  }
  line += "}\n";
  if (adopt_files) {
    const std::string res = detail::read_whole_file(paths.result, "cannot open", true);
    const std::string det = detail::read_whole_file(paths.details, "cannot open", true);
    line += checkpoint_line(res.size(), fnv1a(res), det.size(), fnv1a(det));
  }
  const std::string record = run_record_path(paths), tmp = record + ".probe-tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0)
    throw Error(ErrorKind::Io, std::string("cannot create the run record: ") + std::strerror(errno), tmp);
  try {
    write_all(fd, line, tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), record.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::Io, std::string("cannot create the run record: ") + std::strerror(err), record);
  }
}

void verify_and_rewind(const OutputPaths& paths, const RunFingerprint& current) {
  const std::string record = run_record_path(paths);
  const std::string text = detail::read_whole_file(record, "cannot open the run record", true);
  // Complete lines only: a kill may tear the last checkpoint, which then does not count.
  std::vector<std::pair<std::size_t, std::size_t>> lines;  // [begin, end) without the '\n'
  for (std::size_t pos = 0;;) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    lines.emplace_back(pos, nl);
    pos = nl + 1;
  }
  if (lines.empty())
    throw Error(ErrorKind::Format, "the run record has no fingerprint line; refusing to resume", record);
  const std::string_view view(text);
  const rapidjson::Document fp =
      detail::parse_json_document(view.substr(lines[0].first, lines[0].second - lines[0].first), record);
  const rapidjson::Value& root = fp;
  if (!root.IsObject())
    throw Error(ErrorKind::Format, "the run record's first line is not a fingerprint object", record);
  for (const RunField& f : current) {
    const std::string recorded = root.HasMember(f.name.c_str()) && root[f.name.c_str()].IsString()
                                     ? std::string(root[f.name.c_str()].GetString())
                                     : std::string("(not recorded)");
    if (recorded != f.value)
      throw Error(ErrorKind::InvalidArgument,
                  "cannot resume: the files were written with " + f.name + " " + recorded +
                      ", this run has " + f.name + " " + f.value + field_hint(f.name) +
                      "; resume with the dump and options of that run, or start a new run",
                  paths.result, f.name);
  }

  const std::string res = detail::read_whole_file(paths.result, "cannot open", true);
  const std::string det = detail::read_whole_file(paths.details, "cannot open", true);
  std::uint64_t rh = kFnvBasis, dh = kFnvBasis, rpos = 0, dpos = 0;
  std::optional<Checkpoint> last;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    Checkpoint c =
        parse_checkpoint(view.substr(lines[i].first, lines[i].second - lines[i].first), record, i + 1);
    c.line_end = lines[i].second + 1;
    if (c.result < rpos || c.details < dpos)
      throw Error(ErrorKind::Format, "checkpoints of the run record go backwards; refusing to resume", record,
                  "line " + std::to_string(i + 1));
    // The files may have lost a tail (a cut, a kill before the rows reached the disk): the last checkpoint
    // they still reach is where the run continues.
    if (c.result > res.size() || c.details > det.size()) break;
    rh = fnv1a(std::string_view(res).substr(rpos, c.result - rpos), rh);
    dh = fnv1a(std::string_view(det).substr(dpos, c.details - dpos), dh);
    auto changed = [&](const std::string& file, std::string_view bytes, std::uint64_t from) {
      const std::string row = "row " + std::to_string(row_at(bytes, from));
      return Error(ErrorKind::Format,
                   row + " (or a row after it, up to byte " + std::to_string(bytes.size()) +
                       ") differs from what probe wrote: the file was changed after the run; refusing to "
                       "resume it",
                   file, row);
    };
    if (rh != c.result_hash) throw changed(paths.result, std::string_view(res).substr(0, c.result), rpos);
    if (dh != c.details_hash) throw changed(paths.details, std::string_view(det).substr(0, c.details), dpos);
    rpos = c.result;
    dpos = c.details;
    last = c;
  }
  // Whatever follows the last checkpoint was written by a run killed before recording it: it is checked
  // again, which writes the same bytes.
  const std::uint64_t keep_res = last ? last->result : 0, keep_det = last ? last->details : 0;
  if (res.size() != keep_res) truncate_to(paths.result, keep_res);
  if (det.size() != keep_det) truncate_to(paths.details, keep_det);
  const std::size_t keep_record = last ? last->line_end : lines[0].second + 1;
  if (text.size() != keep_record) truncate_to(record, keep_record);
}

RunJournal::RunJournal(const OutputPaths& paths) : record_(run_record_path(paths)) {
  result_.path = paths.result;
  details_.path = paths.details;
  fd_ = ::open(record_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd_ < 0)
    throw Error(ErrorKind::Io, std::string("cannot open the run record: ") + std::strerror(errno), record_);
  advance(result_);
  advance(details_);
}

RunJournal::~RunJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void RunJournal::advance(Tracked& t) {
  const int fd = ::open(t.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Io, std::string("cannot read back: ") + std::strerror(errno), t.path);
  std::string buf(1 << 16, '\0');
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(t.size));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error(ErrorKind::Io, std::string("cannot read back: ") + std::strerror(err), t.path);
    }
    if (n == 0) break;
    t.hash = fnv1a(std::string_view(buf.data(), static_cast<std::size_t>(n)), t.hash);
    t.size += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
}

void RunJournal::checkpoint() {
  advance(result_);
  advance(details_);
  write_all(fd_, checkpoint_line(result_.size, result_.hash, details_.size, details_.hash), record_);
}

}  // namespace probe::rut
