// The one lookup for probe's shipped data files (data/*.json, installed to share/probe).
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <vector>

namespace probe::detail {

/// Places a data file is looked for, most specific first; empty entries are skipped.
struct DataFileDirs {
  std::string override_file;  ///< a whole-path override for this one file (used even if missing)
  std::string override_dir;   ///< a directory that may hold the file ($PROBE_DATA_DIR)
  std::string installed_dir;  ///< share/probe of the install prefix
  std::string source_dir;     ///< the source tree's data/
};

/// The places for `name` in this process: $PROBE_STANDARDS_FILE (only for precision_standards.json),
/// $PROBE_DATA_DIR, the installed share/probe, the source tree's data/.
DataFileDirs data_file_dirs(std::string_view name);

/// First existing `dir/name` in `dirs` order; an override file wins outright, so a wrong path is an error
/// rather than a silent fallback. Throws probe::Error (Io) naming every place tried when none has it.
std::string resolve_data_file(std::string_view name, const DataFileDirs& dirs);

/// resolve_data_file(name, data_file_dirs(name)).
std::string data_file_path(std::string_view name);

/// Reads and parses a JSON data file (at most 64 MiB). Throws probe::Error naming `path`: Io "cannot open
/// <what>", Format "<what> is too large" or "invalid JSON: <reason> at offset N".
rapidjson::Document parse_data_json(const std::string& path, const std::string& what);

}  // namespace probe::detail
