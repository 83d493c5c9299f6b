// One way to read a whole JSON text into a RapidJSON DOM, for the small configuration and mapping files
// (config.json, name mappings, compare.json, data files): the same parse flags and one error message.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace probe::detail {

/// Parses `text` (numbers at full double precision). Throws probe::Error Format naming `origin`:
/// "invalid JSON at line L, column C (byte offset O): <reason>".
rapidjson::Document parse_json_document(std::string_view text, const std::string& origin);

/// "line L, column C (byte offset O)" of `offset` in `text` (1-based line and column; clamped to the text).
std::string describe_json_position(std::string_view text, std::size_t offset);

/// Member `key` of the object `obj` read from `origin`; throws probe::Error Format "missing key" naming
/// `origin` and `key`.
const rapidjson::Value& json_member(const rapidjson::Value& obj, const char* key, const std::string& origin);

/// Member `key` as a list of strings; throws Format "expected an array of strings" naming `origin` and `key`.
std::vector<std::string> json_strings(const rapidjson::Value& obj, const char* key,
                                      const std::string& origin);

}  // namespace probe::detail
