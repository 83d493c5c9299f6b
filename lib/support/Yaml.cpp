// libyaml's event parser folded into a bounded tree (see Yaml.h for why events and limits).
#include "support/Yaml.h"

#include <fmt/format.h>
#include <yaml.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "probe/error.h"

namespace probe::detail {

bool YamlNode::is_null() const noexcept {
  return kind == Kind::Scalar && plain &&
         (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL");
}

const char* YamlNode::kind_name() const noexcept {
  switch (kind) {
    case Kind::Scalar:
      return "scalar";
    case Kind::Sequence:
      return "list";
    case Kind::Mapping:
      return "mapping";
  }
  return "?";
}

std::string yaml_where(const YamlNode& node) { return fmt::format("line {}: ", node.line); }

namespace {

struct ParserGuard {
  yaml_parser_t parser;
  ParserGuard() {
    if (!yaml_parser_initialize(&parser)) throw Error(ErrorKind::Internal, "cannot initialise libyaml");
  }
  ~ParserGuard() { yaml_parser_delete(&parser); }
  ParserGuard(const ParserGuard&) = delete;
  ParserGuard& operator=(const ParserGuard&) = delete;
};

struct EventGuard {
  yaml_event_t event;
  bool live = false;
  ~EventGuard() {
    if (live) yaml_event_delete(&event);
  }
};

struct Frame {
  YamlNode node;
  std::optional<YamlNode> key;  // a mapping's key waiting for its value
};

}  // namespace

YamlNode yaml_parse(std::string_view text, const std::string& path, const YamlLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw Error(ErrorKind::Format, fmt::format("YAML file larger than {} bytes", limits.max_bytes), path);
  ParserGuard p;
  yaml_parser_set_input_string(&p.parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());

  std::vector<Frame> stack;
  std::optional<YamlNode> root;
  std::size_t nodes = 0, documents = 0;
  auto fail = [&](std::size_t line, const std::string& what) -> Error {
    return Error(ErrorKind::Format, fmt::format("line {}: {}", line, what), path);
  };
  // Hands a finished node to its parent (or makes it the document's root).
  auto attach = [&](YamlNode n) {
    if (stack.empty()) {
      root = std::move(n);
      return;
    }
    Frame& top = stack.back();
    if (top.node.kind == YamlNode::Kind::Sequence) {
      top.node.items.push_back(std::move(n));
    } else if (!top.key) {
      if (n.kind != YamlNode::Kind::Scalar)
        throw fail(n.line, fmt::format("a {} cannot be a mapping key", n.kind_name()));
      top.key = std::move(n);
    } else {
      top.node.members.push_back(YamlMember{std::move(*top.key), std::move(n)});
      top.key.reset();
    }
  };

  for (bool done = false; !done;) {
    EventGuard ev;
    if (!yaml_parser_parse(&p.parser, &ev.event)) {
      const std::size_t line = p.parser.problem_mark.line + 1;
      std::string what = p.parser.problem ? p.parser.problem : "invalid YAML";
      if (p.parser.context) what = std::string(p.parser.context) + ": " + what;
      throw fail(line, "invalid YAML (" + what + ")");
    }
    ev.live = true;
    const std::size_t line = ev.event.start_mark.line + 1;
    switch (ev.event.type) {
      case YAML_STREAM_END_EVENT:
        done = true;
        break;
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > 1) throw fail(line, "only one YAML document is expected");
        break;
      case YAML_ALIAS_EVENT:
        throw fail(line, "YAML aliases (*name) are not supported");
      case YAML_SCALAR_EVENT: {
        if (++nodes > limits.max_nodes)
          throw fail(line, fmt::format("more than {} YAML nodes", limits.max_nodes));
        YamlNode n;
        n.kind = YamlNode::Kind::Scalar;
        n.text.assign(reinterpret_cast<const char*>(ev.event.data.scalar.value), ev.event.data.scalar.length);
        n.plain = ev.event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        n.line = line;
        attach(std::move(n));
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        if (++nodes > limits.max_nodes)
          throw fail(line, fmt::format("more than {} YAML nodes", limits.max_nodes));
        if (stack.size() >= limits.max_depth)
          throw fail(line, fmt::format("YAML nested deeper than {} levels", limits.max_depth));
        Frame f;
        f.node.kind =
            ev.event.type == YAML_SEQUENCE_START_EVENT ? YamlNode::Kind::Sequence : YamlNode::Kind::Mapping;
        f.node.line = line;
        stack.push_back(std::move(f));
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        YamlNode n = std::move(stack.back().node);
        stack.pop_back();
        attach(std::move(n));
        break;
      }
      default:
        break;
    }
  }
  if (!root) {
    YamlNode empty;
    empty.line = 1;
    return empty;
  }
  return std::move(*root);
}

YamlNode yaml_read_file(const std::string& path, const YamlLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::Io, "cannot open the YAML file (missing or not a regular file)", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open the YAML file", path);
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw Error(ErrorKind::Io, "cannot read the YAML file", path);
  if (static_cast<std::size_t>(size) > limits.max_bytes)
    throw Error(ErrorKind::Format, fmt::format("YAML file larger than {} bytes", limits.max_bytes), path);
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), size)) throw Error(ErrorKind::Io, "cannot read the YAML file", path);
  return yaml_parse(text, path, limits);
}

}  // namespace probe::detail
