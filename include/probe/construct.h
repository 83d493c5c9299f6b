// Reading msprobe's construct.json: the parent (enclosing module) of each dumped record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/export.h"

namespace probe {

/// construct.json (dump-and-compare §2.2): node key → parent key, null/"" (no parent), or the Megatron
/// pipeline form [parent, micro_step].
class PROBE_API ConstructInfo {
 public:
  struct Node {
    std::string key;
    std::optional<std::string> parent;       ///< nullopt: top level ("" and null both mean that)
    std::optional<std::int64_t> micro_step;  ///< Megatron pipelines only
  };

  /// Reads and parses `path`; throws Io / Format naming the file and the offending key.
  static ConstructInfo open(const std::string& path);
  static ConstructInfo parse(std::string_view json, const std::string& path);

  const std::vector<Node>& nodes() const noexcept { return nodes_; }
  /// The node with this key, or nullptr.
  const Node* find(std::string_view key) const noexcept;
  /// "megatron_micro_step_number" when present.
  const std::optional<std::int64_t>& micro_step_count() const noexcept { return micro_steps_; }

 private:
  std::vector<Node> nodes_;
  std::optional<std::int64_t> micro_steps_;
};

}  // namespace probe
