#include "run_ut/OutputFiles.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "probe/error.h"
#include "run_ut/RunRecord.h"
#include "support/Timestamp.h"

namespace probe::rut {
namespace fs = std::filesystem;

OutputPaths new_output_paths(const std::string& out_dir, const std::string& timestamp) {
  if (!detail::is_timestamp(timestamp))
    throw Error(ErrorKind::InvalidArgument,
                "timestamp must be 14 digits (YYYYmmddHHMMSS), got '" + timestamp + "'");
  fs::path dir = out_dir.empty() ? fs::path(".") : fs::path(out_dir);
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(dir, ec)) && !fs::exists(dir, ec))
    throw Error(ErrorKind::Io, "output directory is a symbolic link to a missing target", dir.string(), "-o");
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) throw Error(ErrorKind::Io, "cannot create output directory: " + ec.message(), dir.string());
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec, ec);
  }
  if (!fs::is_directory(dir, ec)) throw Error(ErrorKind::Io, "output path is not a directory", dir.string());
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::Io, "output directory is not writable", dir.string());
  OutputPaths p;
  p.timestamp = timestamp;
  p.result = (dir / ("accuracy_checking_result_" + timestamp + ".csv")).string();
  p.details = (dir / ("accuracy_checking_details_" + timestamp + ".csv")).string();
  return p;
}

namespace {
// A new run creates the result file, then the details file: killed in between, it leaves an empty result file
// alone. Any other missing details file means rows were lost.
bool details_never_created(const OutputPaths& p) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(p.details, ec))) return false;
  return fs::file_size(p.result, ec) == 0 && !ec;
}
}  // namespace

OutputPaths resume_output_paths(const std::string& result_csv) {
  static constexpr std::string_view kPrefix = "accuracy_checking_result_", kSuffix = ".csv";
  fs::path path(result_csv);
  std::string base = path.filename().string();
  bool named = base.size() == kPrefix.size() + 14 + kSuffix.size() && base.starts_with(kPrefix) &&
               base.ends_with(kSuffix) && detail::is_timestamp(base.substr(kPrefix.size(), 14));
  if (!named)
    throw Error(ErrorKind::InvalidArgument,
                "-csv_path must name an accuracy_checking_result_<14 digits>.csv file", result_csv);
  std::error_code ec;
  if (fs::is_symlink(path, ec))
    throw Error(ErrorKind::Security, "-csv_path must not be a symbolic link", result_csv);
  if (!fs::is_regular_file(path, ec))
    throw Error(ErrorKind::Io, "result file to resume does not exist", result_csv);
  if (::access(path.c_str(), R_OK | W_OK) != 0)
    throw Error(ErrorKind::Io, "result file to resume must be readable and writable", result_csv);
  OutputPaths p;
  p.timestamp = base.substr(kPrefix.size(), 14);
  p.result = path.string();
  p.details = (path.parent_path() / ("accuracy_checking_details_" + p.timestamp + ".csv")).string();
  if (details_never_created(p)) return p;  // claim_outputs() creates it
  if (!fs::is_regular_file(p.details, ec))
    throw Error(ErrorKind::Io, "details file of the resumed result file does not exist", p.details);
  if (::access(p.details.c_str(), R_OK | W_OK) != 0)
    throw Error(ErrorKind::Io, "details file to resume must be readable and writable", p.details);
  return p;
}

bool result_has_rows(const OutputPaths& paths) {
  const std::string text = detail::read_whole_file(paths.result, "cannot open", true);
  const std::size_t nl = text.find('\n');
  return nl != std::string::npos && nl + 1 < text.size();
}

std::string full_name_of_details_row(const std::string& row_name) {
  // DECISIONS D17: a parameter gradient's row is `<parameters_grad entry key>.<parameter>`.
  if (row_name.find(".parameters_grad") != std::string::npos && row_name.rfind('.') != std::string::npos)
    return row_name.substr(0, row_name.rfind('.'));
  // `<full>.<forward|backward>.output.<i>`: the full name itself may contain dots.
  std::size_t pos = row_name.size();
  for (int i = 0; i < 3; ++i) {
    if (pos == 0) return row_name;
    pos = row_name.rfind('.', pos - 1);
    if (pos == std::string::npos) return row_name;
  }
  return row_name.substr(0, pos);
}

namespace {

// A CSV record's byte span; records end with a line break outside quotes.
struct Record {
  std::size_t begin, end;
};

// Complete records of `text` (after the BOM). A torn tail (no terminator, or an open quote) is
// not returned; its start is `*complete_end`.
std::vector<Record> scan_records(const std::string& text, std::size_t start, std::size_t* complete_end) {
  std::vector<Record> out;
  bool in_quotes = false;
  std::size_t rec_begin = start;
  for (std::size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      in_quotes = !in_quotes;  // a doubled "" toggles twice
    } else if (c == '\n' && !in_quotes) {
      out.push_back({rec_begin, i + 1});
      rec_begin = i + 1;
    }
  }
  *complete_end = rec_begin;
  return out;
}

// A quote opened mid-file (a hand edit, or not a CSV this writer made) joins the rows after it into one
// record, up to the next quote, or leaves them all in the "torn" tail; cutting or keeping that would drop
// or merge rows. Rows end with CRLF and no cell holds one, so a record with a CRLF before its end, or a torn
// tail holding one, is refused: only a torn last row may be repaired.
void check_quotes(const std::string& text, const std::vector<Record>& records, std::size_t complete_end,
                  const std::string& path) {
  // Rows are counted by their CRLFs: a stray quote lets a message's embedded line break end a record.
  auto refuse = [&](std::size_t offset, const char* what) {
    std::size_t row = 1;
    for (std::size_t p = text.find("\r\n"); p != std::string::npos && p < offset;
         p = text.find("\r\n", p + 2))
      ++row;
    const std::string where = "row " + std::to_string(row);
    throw Error(ErrorKind::Format, where + what + "; refusing to resume this file", path, where);
  };
  for (std::size_t i = 0; i < records.size(); ++i)
    if (const std::size_t crlf = text.find("\r\n", records[i].begin);
        crlf != std::string::npos && crlf + 2 < records[i].end)
      refuse(records[i].begin,
             " opens a quote that joins it with the rows after it (only a torn last row can be repaired)");
  if (text.find("\r\n", complete_end) != std::string::npos)
    refuse(complete_end, " opens a quote that no later row closes (only a torn last row can be repaired)");
}

CsvRow parse_record(const std::string& text, const Record& r, const std::string& path) {
  auto rows = csv_parse(std::string_view(text).substr(r.begin, r.end - r.begin), path);
  return rows.empty() ? CsvRow{} : rows.front();
}

void replace_file(const std::string& path, const std::string& content) {
  std::string tmp = path + ".probe-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::Io, std::string("cannot write: ") + std::strerror(errno), tmp);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) throw Error(ErrorKind::Io, "write failed", tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot replace file: " + ec.message(), path);
  ::chmod(path.c_str(), 0640);
}

bool header_matches(const CsvRow& got, const CsvRow& want) {
  if (got.size() < want.size()) return false;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) return false;
  return true;
}

}  // namespace

detail::LockedFile claim_outputs(const OutputPaths& paths, bool resume) {
  if (resume) {
    detail::LockedFile lock = detail::LockedFile::open_existing(paths.result);
    if (details_never_created(paths) && !detail::LockedFile::create_new(paths.details).is_open())
      throw Error(ErrorKind::Io, "details file appeared while resuming; another run is using it",
                  paths.details);
    return lock;
  }
  detail::LockedFile lock = detail::LockedFile::create_new(paths.result);
  if (!lock.is_open()) return lock;
  if (!detail::LockedFile::create_new(paths.details).is_open()) {
    ::unlink(paths.result.c_str());  // ours, still empty
    return {};
  }
  return lock;
}

Error outputs_exist_error(const OutputPaths& paths) {
  return Error(ErrorKind::InvalidArgument,
               "output files exist (an earlier run, or another run with the same timestamp); refusing to mix "
               "two runs in one file: pass another --timestamp or -o, or -csv_path to resume them",
               paths.result);
}

namespace {

void truncate_file(const std::string& path, std::size_t size) {
  // In place, not by renaming a copy: the result file's inode carries the run's lock.
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0)
    throw Error(ErrorKind::Io, std::string("cannot truncate: ") + std::strerror(errno), path);
}

bool known_status(const std::string& s) { return s.empty() || s == kSpace || parse_status(s); }

}  // namespace

ResumeState load_and_repair(const OutputPaths& paths, const RunUtLayout& format,
                            const std::vector<std::string>& dump_apis) {
  // Names as the writer put them into the file.
  std::vector<std::string> apis;
  apis.reserve(dump_apis.size());
  for (const auto& a : dump_apis) apis.push_back(csv_escape_formula(a));
  ResumeState st;
  std::string text = detail::read_whole_file(paths.result, "cannot open", true);
  std::size_t bom = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::size_t complete_end = 0;
  auto records = scan_records(text, bom, &complete_end);
  check_quotes(text, records, complete_end, paths.result);
  struct Done {
    std::string name;
    std::size_t begin;  // byte offset of its result record
    bool needs_details;
  };
  std::vector<Done> rows;
  if (records.empty()) {
    // Killed before even the header was complete: start the file afresh.
    if (!text.empty()) truncate_file(paths.result, 0);
  } else {
    const CsvRow& want = format.result_header();
    CsvRow header = parse_record(text, records.front(), paths.result);
    if (!header_matches(header, want))
      throw Error(ErrorKind::Format,
                  "not a " + std::string(format.name()) + " run_ut result file (header differs)",
                  paths.result);
    std::size_t pos = 0;  // next candidate in `apis`
    for (std::size_t i = 1; i < records.size(); ++i) {
      CsvRow row = parse_record(text, records[i], paths.result);
      const std::string where = "row " + std::to_string(i + 1);
      if (row.size() < 3 || row.size() > want.size() || !known_status(row[1]) || !known_status(row[2]))
        throw Error(ErrorKind::Format, where + " is not a run_ut result row; refusing to resume this file",
                    paths.result, where);
      const std::string& name = row[0];
      if (st.done.count(name))
        throw Error(ErrorKind::Format, where + " repeats API " + name + "; refusing to resume this file",
                    paths.result, where, name);
      // PyTorch writes a row for every API, MindSpore none for an API with nothing to compare.
      std::size_t found = pos;
      if (!format.result_row_per_api()) {
        while (found < apis.size() && apis[found] != name) ++found;
      } else if (found < apis.size() && apis[found] != name) {
        found = apis.size();
      }
      if (found >= apis.size()) {
        const bool in_dump = std::find(apis.begin(), apis.end(), name) != apis.end();
        throw Error(ErrorKind::Format,
                    where + " holds API " + name +
                        (in_dump ? " out of the dump's order"
                                 : " which this dump (with these options) does not check") +
                        (pos < apis.size() ? "; the dump's next API is " + apis[pos] : "") +
                        ": the file belongs to another dump or selection; refusing to resume it",
                    paths.result, where, name);
      }
      pos = found + 1;
      st.done.insert(name);
      const std::optional<Status> forward = parse_status(row[1]);
      st.statuses.emplace_back(forward, parse_status(row[2]));
      rows.push_back({name, records[i].begin, format.result_has_details(forward)});
      st.next = pos;
    }
    if (complete_end != text.size()) truncate_file(paths.result, complete_end);
  }

  std::string dtext = detail::read_whole_file(paths.details, "cannot open", true);
  std::size_t dbom = dtext.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::size_t dcomplete = 0;
  auto drecs = scan_records(dtext, dbom, &dcomplete);
  check_quotes(dtext, drecs, dcomplete, paths.details);
  std::unordered_set<std::string> with_details;
  std::vector<CsvRow> drows;
  if (!drecs.empty()) {
    CsvRow dheader = parse_record(dtext, drecs.front(), paths.details);
    if (!header_matches(dheader, format.details_header()))
      throw Error(ErrorKind::Format, "not a run_ut details file (header differs)", paths.details);
    for (std::size_t i = 1; i < drecs.size(); ++i) {
      drows.push_back(parse_record(dtext, drecs[i], paths.details));
      // More cells than the header: quotes pair up across rows and merged them into one record.
      if (drows.back().size() > dheader.size()) {
        const std::string where = "row " + std::to_string(i + 1);
        throw Error(ErrorKind::Format,
                    where + " has " + std::to_string(drows.back().size()) + " cells, the header " +
                        std::to_string(dheader.size()) +
                        " (an unbalanced quote joins rows); refusing to resume this file",
                    paths.details, where);
      }
      if (!drows.back().empty()) with_details.insert(full_name_of_details_row(drows.back()[0]));
    }
  }
  // Result rows written without their details rows (the details file lost its tail): check those APIs
  // again. Only a trailing run of them is cut, since an API may legitimately have no details row;
  // checking such an API again gives the same rows.
  std::size_t k = rows.size();
  while (k > 0 && !with_details.count(rows[k - 1].name)) --k;
  bool lacks = false;
  for (std::size_t j = k; j < rows.size(); ++j) lacks = lacks || rows[j].needs_details;
  if (lacks) {
    truncate_file(paths.result, rows[k].begin);
    for (std::size_t j = k; j < rows.size(); ++j) st.done.erase(rows[j].name);
    st.statuses.resize(k);
    st.next =
        k == 0
            ? 0
            : static_cast<std::size_t>(std::find(apis.begin(), apis.end(), rows[k - 1].name) - apis.begin()) +
                  1;
  }
  if (drecs.empty()) {
    if (!dtext.empty()) replace_file(paths.details, "");
    return st;
  }
  // Keep the original bytes of every row that belongs to a finished API.
  std::string kept = dtext.substr(0, drecs.front().end);
  bool changed = dcomplete != dtext.size();
  for (std::size_t i = 1; i < drecs.size(); ++i) {
    const CsvRow& row = drows[i - 1];
    if (!row.empty() && st.done.count(full_name_of_details_row(row[0]))) {
      kept.append(dtext, drecs[i].begin, drecs[i].end - drecs[i].begin);
    } else {
      changed = true;
    }
  }
  if (changed) replace_file(paths.details, kept);
  return st;
}

OutputWriter::OutputWriter(const OutputPaths& paths, const RunUtFormat& format, bool journal)
    : format_(format), histograms_path_(error_histogram_path(paths.details)) {
  auto size = [](const std::string& p) {
    std::error_code ec;
    const auto n = fs::file_size(p, ec);
    return ec ? std::uintmax_t{0} : n;
  };
  const std::uintmax_t before = size(paths.details) + size(paths.result);
  details_ = std::make_unique<CsvWriter>(paths.details, format.details_header());
  result_ = std::make_unique<CsvWriter>(paths.result, format.result_header());
  ::chmod(paths.details.c_str(), 0640);
  ::chmod(paths.result.c_str(), 0640);
  if (journal) {
    journal_ = std::make_unique<RunJournal>(paths);
    // The record's last line already describes files this writer found; headers it wrote need one.
    if (size(paths.details) + size(paths.result) != before) journal_->checkpoint();
  }
}

OutputWriter::~OutputWriter() = default;

namespace {

#ifdef PROBE_TEST_HOOKS
// Test hook for the resume tests (tests/run_ut/RunUtE2eTest.cpp), compiled only into test builds
// (PROBE_BUILD_TESTS): PROBE_TEST_KILL_AT=<k> makes the process SIGKILL itself right after the k-th API's
// rows are on disk, <k>d after its details rows but before its result row; <k>i sends it SIGINT (Ctrl-C)
// instead, after the k-th API's rows. A timed kill from outside lands at a different point on every machine
// load; this leaves exactly what a kill at that point leaves (rows are flushed one by one), on every run.
struct KillPoint {
  long after_api = 0;  ///< 1-based; 0: hook off
  bool before_result = false;
  int signal = SIGKILL;
};

KillPoint kill_point_from_env() {
  KillPoint k;
  const char* v = std::getenv("PROBE_TEST_KILL_AT");
  if (v == nullptr) return k;
  char* end = nullptr;
  k.after_api = std::strtol(v, &end, 10);
  k.before_result = end != nullptr && *end == 'd';
  if (end != nullptr && *end == 'i') k.signal = SIGINT;
  return k;
}

void maybe_kill_for_test(long api_number, bool details_only) {
  static const KillPoint k = kill_point_from_env();
  if (k.after_api > 0 && api_number == k.after_api && details_only == k.before_result) {
    ::raise(k.signal);
    // A Ctrl-C lands during an API that takes long next to the thread that turns it into the stop request;
    // on a loaded machine the remaining small APIs of a test dump could all finish before that thread runs.
    if (k.signal == SIGINT) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}
#else
void maybe_kill_for_test(long, bool) {}
#endif

// DECISIONS (CSV injection): msprobe refuses the whole run on a formula-like API name; probe writes every
// cell by the one policy of all writers (csv_escape_formula), as compare does.
CsvRow escaped(const CsvRow& row) {
  CsvRow out = row;
  for (auto& cell : out) cell = csv_escape_formula(std::move(cell));
  return out;
}

}  // namespace

void OutputWriter::write(const ApiRows& rows) {
  static std::atomic<long> apis_written{0};
  const long api_number = ++apis_written;
  // The sidecar first: a kill before the result row makes a resume check the API again and append its
  // histograms once more (the report keeps an output's last line).
  if (!rows.histograms.empty() && !histograms_path_.empty()) {
    if (!histograms_) histograms_ = std::make_unique<CsvWriter>(histograms_path_, error_histogram_header());
    for (const auto& [name, h] : rows.histograms) {
      CsvRow cells{name, std::string(to_string(h.unit)), std::to_string(h.zero), std::to_string(h.below)};
      for (std::int64_t c : h.counts) cells.push_back(std::to_string(c));
      cells.push_back(std::to_string(h.above));
      cells.push_back(std::to_string(h.nonfinite));
      histograms_->write_row(escaped(cells));
    }
  }
  for (const auto& r : rows.details) details_->write_row(escaped(r));
  maybe_kill_for_test(api_number, true);
  if (rows.result) result_->write_row(escaped(format_.result_cells(*rows.result)));
  maybe_kill_for_test(api_number, false);
  if (journal_) journal_->checkpoint();
}

}  // namespace probe::rut
