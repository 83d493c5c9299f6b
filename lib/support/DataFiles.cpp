#include "support/DataFiles.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "probe/error.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"

namespace probe::detail {
namespace {

std::string env(const char* var) {
  const char* v = std::getenv(var);
  return v ? v : "";
}

// share/probe relative to the file that holds this code: libprobe.so in <prefix>/<libdir>, or an executable
// in <prefix>/<bindir> that libprobe.a was linked into. The relative paths come from the install layout.
std::string relocated_data_dir() {
  namespace fs = std::filesystem;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&relocated_data_dir), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const fs::path here = fs::canonical(fs::path(info.dli_fname), ec).parent_path();
  if (ec) return {};
  for (const char* rel : {PROBE_DATA_FROM_LIBDIR, PROBE_DATA_FROM_BINDIR}) {
    const fs::path dir = (here / rel).lexically_normal();
    if (fs::is_directory(dir, ec)) return dir.string();
  }
  return {};
}

}  // namespace

DataFileDirs data_file_dirs(std::string_view name) {
  DataFileDirs d;
  // PROBE_STANDARDS_FILE predates PROBE_DATA_DIR and names the file itself; both stay supported.
  if (name == "precision_standards.json") d.override_file = env("PROBE_STANDARDS_FILE");
  d.override_dir = env("PROBE_DATA_DIR");
  d.installed_dir = PROBE_DATA_DIR;
  d.source_dir = PROBE_SOURCE_DATA_DIR;
  static const std::string relocated = relocated_data_dir();
  d.relocated_dir = relocated;
  d.builtin_fallback = embedded_data_file(name).has_value();
  return d;
}

std::string resolve_data_file(std::string_view name, const DataFileDirs& dirs) {
  namespace fs = std::filesystem;
  if (!dirs.override_file.empty()) return dirs.override_file;
  std::string tried;
  std::error_code ec;
  for (const std::string* dir :
       {&dirs.override_dir, &dirs.relocated_dir, &dirs.installed_dir, &dirs.source_dir}) {
    if (dir->empty()) continue;
    const fs::path p = fs::path(*dir) / name;
    if (fs::is_regular_file(p, ec)) return p.string();
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  if (dirs.builtin_fallback) return std::string(kBuiltinDataPrefix) + std::string(name);
  throw Error(ErrorKind::Io,
              "probe's data file " + std::string(name) + " was not found (tried " + tried +
                  "; set PROBE_DATA_DIR to the directory that holds it)",
              std::string(name));
}

std::string data_file_path(std::string_view name) { return resolve_data_file(name, data_file_dirs(name)); }

rapidjson::Document parse_data_json(const std::string& path, const std::string& what) {
  if (std::string_view(path).starts_with(kBuiltinDataPrefix)) {
    if (auto text = embedded_data_file(std::string_view(path).substr(kBuiltinDataPrefix.size())))
      return parse_data_json_text(*text, path, what);
    throw Error(ErrorKind::Io, "libprobe has no compiled-in " + what, path);
  }
  return parse_data_json_text(read_whole_file(path, "cannot open " + what), path, what);
}

rapidjson::Document parse_data_json_text(std::string_view text, const std::string& origin,
                                         const std::string& what) {
  if (text.size() > (64u << 20)) throw Error(ErrorKind::Format, what + " is too large", origin);
  return parse_json_document(text, origin);
}

namespace {

// `key` of `root`, or of the data file its {"from": FILE} names (parsed into `holder`); `where` becomes the
// file the member was read from.
const rapidjson::Value& shared_member(const rapidjson::Value& root, const char* key,
                                      const std::string& origin, rapidjson::Document& holder,
                                      std::string& where) {
  where = origin;
  const rapidjson::Value& v = json_member(root, key, origin);
  if (!v.IsObject() || !v.HasMember("from")) return v;
  const rapidjson::Value& from = v["from"];
  if (!from.IsString() || v.MemberCount() != 1)
    throw Error(ErrorKind::Format, "expected {\"from\": \"<data file>\"}", origin, key);
  where = data_file_path(from.GetString());
  holder = parse_data_json(where, std::string("the data file ") + key + " refers to");
  if (!holder.IsObject()) throw Error(ErrorKind::Format, "expected a JSON object", where);
  const rapidjson::Value& h = holder;
  const rapidjson::Value& shared = json_member(h, key, where);
  if (shared.IsObject() && shared.HasMember("from"))
    throw Error(ErrorKind::Format, "a list taken from another file must be there, not refer on", where, key);
  return shared;
}

}  // namespace

std::vector<std::string> data_strings(const rapidjson::Value& root, const char* key,
                                      const std::string& origin) {
  rapidjson::Document holder;
  std::string where;
  shared_member(root, key, origin, holder, where);
  if (!holder.IsObject()) return json_strings(root, key, origin);
  const rapidjson::Value& h = holder;
  return json_strings(h, key, where);
}

std::map<std::string, std::string> data_string_table(const rapidjson::Value& root, const char* key,
                                                     const std::string& origin) {
  rapidjson::Document holder;
  std::string where;
  const rapidjson::Value& v = shared_member(root, key, origin, holder, where);
  if (!v.IsObject()) throw Error(ErrorKind::Format, "expected {name: name}", where, key);
  std::map<std::string, std::string> out;
  for (const auto& m : v.GetObject()) {
    if (!m.value.IsString()) throw Error(ErrorKind::Format, "expected a string", where, key);
    out[m.name.GetString()] = m.value.GetString();
  }
  return out;
}

}  // namespace probe::detail
