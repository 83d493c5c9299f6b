// Internals shared by the dump.json parser and the model (not installed).
#pragma once

#include <functional>
#include <string>

#include "probe/dump.h"

namespace probe::dump_detail {

/// Python-like text of a node, for opaque leaves and messages: "npu:0", "[0, 1]", "None".
std::string render(const DumpNode& node);

/// Parses the NUL-terminated, padded, writable `text` of `size` bytes into `dump` (path already set).
/// `original_text` re-supplies the unmodified text to locate a syntax error by line.
void parse_dump_buffer(Dump& dump, char* text, std::size_t size, const DumpParseOptions& options,
                       const std::function<std::string()>& original_text);

}  // namespace probe::dump_detail
