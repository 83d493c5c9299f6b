// The one data-file lookup (lib/support/DataFiles.h): order, fallthrough, both environment variables.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "common/Slurp.h"
#include "probe/error.h"
#include "probe/precision_standard.h"
#include "standards/Thresholds.h"
#include "support/DataFiles.h"

namespace probe {
namespace {

namespace fs = std::filesystem;
using detail::DataFileDirs;
using detail::resolve_data_file;

struct Scratch {
  fs::path root = fs::temp_directory_path() / ("probe_datafiles_" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(root);
    for (const char* d : {"env", "installed", "source"}) fs::create_directories(root / d);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  std::string dir(const char* d) const { return (root / d).string(); }
  std::string put(const char* d, const std::string& name) const {
    std::ofstream(root / d / name) << "{}";
    return (root / d / name).string();
  }
  DataFileDirs dirs() const {
    DataFileDirs d;
    d.override_dir = dir("env");
    d.installed_dir = dir("installed");
    d.source_dir = dir("source");
    return d;
  }
};

// Sets an environment variable for one test and restores the previous value.
class EnvGuard {
 public:
  EnvGuard(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DataFiles, OverrideDirThenInstalledThenSource) {
  Scratch s;
  const std::string name = "x.json";
  const std::string env = s.put("env", name), installed = s.put("installed", name),
                    source = s.put("source", name);
  EXPECT_EQ(resolve_data_file(name, s.dirs()), env);
  fs::remove(env);
  EXPECT_EQ(resolve_data_file(name, s.dirs()), installed);
  fs::remove(installed);
  EXPECT_EQ(resolve_data_file(name, s.dirs()), source);
  // Unset places are skipped, not tried as the current directory.
  DataFileDirs only_source;
  only_source.source_dir = s.dir("source");
  EXPECT_EQ(resolve_data_file(name, only_source), source);
}

// A moved install: share/probe beside libprobe's own file comes right after $PROBE_DATA_DIR, before the
// prefix configured at build time (which, after a move, may hold another version's files).
TEST(DataFiles, BesideTheLibraryComesBeforeTheConfiguredPrefix) {
  Scratch s;
  fs::create_directories(s.root / "moved");
  const std::string name = "x.json";
  const std::string moved = s.put("moved", name), installed = s.put("installed", name);
  DataFileDirs d = s.dirs();
  d.relocated_dir = s.dir("moved");
  EXPECT_EQ(resolve_data_file(name, d), moved);
  const std::string env = s.put("env", name);
  EXPECT_EQ(resolve_data_file(name, d), env);
}

// The two files every run needs are compiled in: with no place holding them, the lookup names the
// compiled-in copy and parse_data_json reads it; any other file is still an error.
TEST(DataFiles, CompiledInCopiesAreTheLastResort) {
  Scratch s;
  DataFileDirs d = s.dirs();
  d.builtin_fallback = detail::embedded_data_file("precision_standards.json").has_value();
  ASSERT_TRUE(d.builtin_fallback);
  EXPECT_FALSE(detail::embedded_data_file("online_dispatch.json").has_value());
  const std::string path = resolve_data_file("precision_standards.json", d);
  EXPECT_EQ(path, "<builtin>/precision_standards.json");
  // The same bytes as data/ (generated from it at configure time).
  const std::string on_disk =
      testing::slurp(std::string(PROBE_SOURCE_DIR) + "/data/precision_standards.json");
  EXPECT_EQ(*detail::embedded_data_file("precision_standards.json"), on_disk);
  EXPECT_TRUE(detail::embedded_data_file("api_precision_compare.json").has_value());
  EXPECT_TRUE(detail::parse_data_json(path, "standards")["profiles"].IsObject());
  // Standards::parse on the same text gives the thresholds of the file (probe profile: D3's 0.0001).
  const Standards st = Standards::parse(on_disk, Profile::Probe, "mine");
  EXPECT_EQ(st.profile(), Profile::Probe);
  EXPECT_EQ(st.mindspore_max_abs, 0.0001);
  try {
    (void)Standards::parse("{\"profiles\": {}}", Profile::Probe, "mine");
    ADD_FAILURE() << "a file without the profile was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "mine");
  }
}

TEST(DataFiles, OverrideFileWinsEvenWhenMissing) {
  Scratch s;
  s.put("env", "x.json");
  DataFileDirs d = s.dirs();
  d.override_file = (s.root / "custom.json").string();
  // A wrong explicit path must surface as an error when it is opened, not fall back silently.
  EXPECT_EQ(resolve_data_file("x.json", d), d.override_file);
}

TEST(DataFiles, NotFoundIsAnIoErrorListingEveryPlace) {
  Scratch s;
  s.put("env", "other.json");  // a directory, or another file, is not the file
  fs::create_directories(s.root / "installed" / "x.json");
  try {
    resolve_data_file("x.json", s.dirs());
    FAIL() << "expected probe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    for (const char* d : {"env", "installed", "source"})
      EXPECT_NE(e.message().find((s.root / d / "x.json").string()), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("PROBE_DATA_DIR"), std::string::npos);
  }
}

TEST(DataFiles, EnvironmentVariablesMapToTheirPlaces) {
  EnvGuard file("PROBE_STANDARDS_FILE", "/elsewhere/standards.json");
  EnvGuard dir("PROBE_DATA_DIR", "/elsewhere/data");
  const DataFileDirs st = detail::data_file_dirs("precision_standards.json");
  EXPECT_EQ(st.override_file, "/elsewhere/standards.json");
  EXPECT_EQ(st.override_dir, "/elsewhere/data");
  EXPECT_EQ(st.source_dir, PROBE_SOURCE_DIR "/data");
  EXPECT_EQ(fs::path(st.installed_dir).filename(), "probe");
  // PROBE_STANDARDS_FILE names one file; it does not redirect the other data files.
  const DataFileDirs pc = detail::data_file_dirs("api_precision_compare.json");
  EXPECT_EQ(pc.override_file, "");
  EXPECT_EQ(pc.override_dir, "/elsewhere/data");
}

TEST(DataFiles, BothShippedFilesFollowTheSameLookup) {
  Scratch s;
  EnvGuard file("PROBE_STANDARDS_FILE", std::nullopt);
  {
    // Without overrides both come from the same place: installed share/probe, else the source data/.
    EnvGuard dir("PROBE_DATA_DIR", std::nullopt);
    EXPECT_EQ(fs::path(Standards::default_path()).parent_path(),
              fs::path(precision_compare::default_thresholds_file()).parent_path());
    EXPECT_TRUE(fs::is_regular_file(Standards::default_path()));
  }
  {
    // $PROBE_DATA_DIR holding only one of them: that one from there, the other falls through.
    EnvGuard dir("PROBE_DATA_DIR", s.dir("env"));
    const std::string pc = s.put("env", "api_precision_compare.json");
    EXPECT_EQ(precision_compare::default_thresholds_file(), pc);
    EXPECT_NE(fs::path(Standards::default_path()).parent_path(), fs::path(s.dir("env")));
    const std::string st = s.put("env", "precision_standards.json");
    EXPECT_EQ(Standards::default_path(), st);
    // $PROBE_STANDARDS_FILE (the older variable) still wins for its file.
    EnvGuard over("PROBE_STANDARDS_FILE", s.put("source", "mine.json"));
    EXPECT_EQ(Standards::default_path(), (s.root / "source" / "mine.json").string());
    EXPECT_EQ(precision_compare::default_thresholds_file(), pc);
  }
}

TEST(DataFiles, ParseDataJsonNamesTheFileOnEveryFailure) {
  Scratch s;
  const std::string missing = (s.root / "missing.json").string();
  try {
    detail::parse_data_json(missing, "the x file");
    FAIL() << "expected probe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_EQ(e.message(), "cannot open the x file");
    EXPECT_EQ(e.file(), missing);
  }
  const std::string bad = (s.root / "bad.json").string();
  std::ofstream(bad) << "{\"a\": [1, 2}";
  try {
    detail::parse_data_json(bad, "the x file");
    FAIL() << "expected probe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    // '}' is the 12th character of the line: the array still wanted ',' or ']'.
    EXPECT_EQ(
        e.message(),
        "invalid JSON at line 1, column 12 (byte offset 11): Missing a comma or ']' after an array element.");
    EXPECT_EQ(e.file(), bad);
  }
  // Lines are counted from 1 after each '\n'; the value of "b" is missing at its 8th column.
  try {
    detail::parse_data_json_text("{\n  \"a\": 1,\n  \"b\": }", "config.json", "the x file");
    FAIL() << "expected probe::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "invalid JSON at line 3, column 8 (byte offset 19): Invalid value.");
    EXPECT_EQ(e.file(), "config.json");
  }
  std::ofstream(s.root / "ok.json") << "{\"a\": [1, 2]}";
  const rapidjson::Document doc = detail::parse_data_json((s.root / "ok.json").string(), "the x file");
  EXPECT_EQ(doc["a"].Size(), 2u);
}

}  // namespace
}  // namespace probe
