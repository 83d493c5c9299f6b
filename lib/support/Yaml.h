// The one YAML reader of libprobe: user mapping files (compare -dm/-cm/-am/-lm) and shipped name tables.
// libyaml's event parser builds a small tree of scalars, sequences and mappings, bounded in depth, node
// count and input size; aliases are refused (no "billion laughs"), tags ignored. Errors are probe::Error
// (Format, Io) naming the file and the 1-based line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace probe::detail {

struct YamlMember;

/// A YAML node: scalars keep their text as written (no int/float/bool resolution).
struct YamlNode {
  enum class Kind { Scalar, Sequence, Mapping };
  Kind kind = Kind::Scalar;
  std::string text;                 ///< Scalar: the value; "" for an empty document
  bool plain = true;                ///< Scalar: unquoted (so "", "~" and "null" mean null)
  std::size_t line = 0;             ///< 1-based line where the node starts
  std::vector<YamlNode> items;      ///< Sequence
  std::vector<YamlMember> members;  ///< Mapping, in file order (duplicate keys kept)

  /// A plain scalar YAML reads as null ("", "~", "null").
  bool is_null() const noexcept;
  /// The kind as a word for messages: "scalar", "list", "mapping".
  const char* kind_name() const noexcept;
};

/// One key: value pair of a mapping (keys are scalars).
struct YamlMember {
  YamlNode key, value;
};

/// Limits against hostile files.
struct YamlLimits {
  std::size_t max_depth = 32;         ///< nesting of sequences/mappings
  std::size_t max_nodes = 4u << 20;   ///< scalars + collections
  std::size_t max_bytes = 64u << 20;  ///< input size
};

/// Parses one YAML document (an empty input is a null scalar). More than one document, an alias, a
/// non-scalar mapping key, or a limit exceeded is an Error(Format) naming `path` and the line.
YamlNode yaml_parse(std::string_view text, const std::string& path, const YamlLimits& limits = {});
/// Reads and parses a file; Error(Io) when it cannot be read.
YamlNode yaml_read_file(const std::string& path, const YamlLimits& limits = {});

/// "line N: " prefix for messages about a node.
std::string yaml_where(const YamlNode& node);

}  // namespace probe::detail
