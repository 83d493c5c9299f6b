// The one data-file lookup (lib/support/DataFiles.h): order, fallthrough, both environment variables.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "precision_compare/Thresholds.h"
#include "probe/error.h"
#include "probe/precision_standard.h"
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
  DataFileDirs dirs() const { return {"", dir("env"), dir("installed"), dir("source")}; }
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
  EXPECT_EQ(resolve_data_file(name, {"", "", "", s.dir("source")}), source);
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
    EXPECT_EQ(fs::path(StandardsConfig::default_path()).parent_path(),
              fs::path(precision_compare::default_thresholds_file()).parent_path());
    EXPECT_TRUE(fs::is_regular_file(StandardsConfig::default_path()));
  }
  {
    // $PROBE_DATA_DIR holding only one of them: that one from there, the other falls through.
    EnvGuard dir("PROBE_DATA_DIR", s.dir("env"));
    const std::string pc = s.put("env", "api_precision_compare.json");
    EXPECT_EQ(precision_compare::default_thresholds_file(), pc);
    EXPECT_NE(fs::path(StandardsConfig::default_path()).parent_path(), fs::path(s.dir("env")));
    const std::string st = s.put("env", "precision_standards.json");
    EXPECT_EQ(StandardsConfig::default_path(), st);
    // $PROBE_STANDARDS_FILE (the older variable) still wins for its file.
    EnvGuard over("PROBE_STANDARDS_FILE", s.put("source", "mine.json"));
    EXPECT_EQ(StandardsConfig::default_path(), (s.root / "source" / "mine.json").string());
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
    EXPECT_EQ(e.message().rfind("invalid JSON: ", 0), 0u) << e.message();
    EXPECT_NE(e.message().find(" at offset "), std::string::npos) << e.message();
    EXPECT_EQ(e.file(), bad);
  }
  std::ofstream(s.root / "ok.json") << "{\"a\": [1, 2]}";
  const rapidjson::Document doc = detail::parse_data_json((s.root / "ok.json").string(), "the x file");
  EXPECT_EQ(doc["a"].Size(), 2u);
}

}  // namespace
}  // namespace probe
