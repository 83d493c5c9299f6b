// The one lookup for probe's shipped data files (data/*.json, installed to share/probe).
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/export.h"

namespace probe::detail {

/// Places a data file is looked for, most specific first; empty entries are skipped.
struct DataFileDirs {
  std::string override_file;  ///< a whole-path override for this one file (used even if missing)
  std::string override_dir;   ///< a directory that may hold the file ($PROBE_DATA_DIR)
  std::string installed_dir;  ///< share/probe of the install prefix
  std::string source_dir;     ///< the source tree's data/
  /// share/probe found relative to the file holding libprobe (the shared library, or the executable it is
  /// linked into), so that a relocated install finds its data; searched right after override_dir.
  std::string relocated_dir;
  bool builtin_fallback = false;  ///< when no place has the file, use the copy compiled into libprobe
};

/// The places for `name` in this process: $PROBE_STANDARDS_FILE (only for precision_standards.json),
/// $PROBE_DATA_DIR, share/probe beside libprobe's file, the configured share/probe, the source tree's data/,
/// then the compiled-in copy (precision_standards.json, api_precision_compare.json).
DataFileDirs data_file_dirs(std::string_view name);

/// Path prefix of a compiled-in data file: parse_data_json reads "<builtin>/NAME" from libprobe itself.
inline constexpr std::string_view kBuiltinDataPrefix = "<builtin>/";
/// The compiled-in text of a shipped data file, or nullopt (generated from data/ at configure time).
std::optional<std::string_view> embedded_data_file(std::string_view name) noexcept;

/// First existing `dir/name` in `dirs` order; an override file wins outright, so a wrong path is an error
/// rather than a silent fallback. With builtin_fallback, "<builtin>/name" when no place has it; otherwise
/// throws probe::Error (Io) naming every place tried.
std::string resolve_data_file(std::string_view name, const DataFileDirs& dirs);

/// resolve_data_file(name, data_file_dirs(name)). Exported for the LibTorch adapter (libprobe_torch).
PROBE_API std::string data_file_path(std::string_view name);

/// Reads and parses a JSON data file (at most 64 MiB). Throws probe::Error naming `path`: Io "cannot open
/// <what>", Format "<what> is too large" or parse_json_document's "invalid JSON at line L, column C ...".
/// Exported for the LibTorch adapter (libprobe_torch).
PROBE_API rapidjson::Document parse_data_json(const std::string& path, const std::string& what);
/// The same for text in memory; errors name `origin`.
rapidjson::Document parse_data_json_text(std::string_view text, const std::string& origin,
                                         const std::string& what);

/// Member `key` of the data file `root` (read from `origin`) as a list of strings or as a {name: name} table;
/// when the member is {"from": "<data file>"}, the same member of that data file (found by data_file_path),
/// so that a list two data files share is kept in one. Throws probe::Error Format naming the file and key
/// (a missing key, another shape, a "from" whose member is itself a "from"), Io for a missing file.
std::vector<std::string> data_strings(const rapidjson::Value& root, const char* key,
                                      const std::string& origin);
std::map<std::string, std::string> data_string_table(const rapidjson::Value& root, const char* key,
                                                     const std::string& origin);

}  // namespace probe::detail
