#include "ArgParser.h"

#include <cctype>
#include <optional>
#include <set>

#include "probe/error.h"

namespace probe::cli {

namespace {

const FlagSpec kHelpSpec{kHelpFlag, {"-h", "--help"}, Arity::None};

// The flag an argument names: an exact spelling, then `name=value` of a flag taking values, then a
// unique prefix of a spelling longer than two characters (with or without `=value`), then a one-letter
// flag with its value attached (-n4).
const FlagSpec* match(const std::vector<const FlagSpec*>& specs, const std::string& arg,
                      std::optional<std::string>& attached) {
  for (const FlagSpec* f : specs)
    for (const auto& s : f->spellings)
      if (arg == s) return f;
  const std::size_t eq = arg.find('=');
  const std::string name = arg.substr(0, eq);
  if (eq != std::string::npos)
    for (const FlagSpec* f : specs)
      for (const auto& s : f->spellings)
        if (name == s) {
          if (f->arity == Arity::None) command_line_error(name + " takes no value");
          attached = arg.substr(eq + 1);
          return f;
        }
  std::set<const FlagSpec*> candidates;
  for (const FlagSpec* f : specs)
    for (const auto& s : f->spellings)
      if (s.size() > 2 && name.size() > 2 && s.compare(0, name.size(), name) == 0) candidates.insert(f);
  if (candidates.size() > 1) command_line_error("ambiguous option " + arg);
  if (candidates.size() == 1) {
    const FlagSpec* f = *candidates.begin();
    if (eq != std::string::npos) {
      if (f->arity == Arity::None) command_line_error(name + " takes no value");
      attached = arg.substr(eq + 1);
    }
    return f;
  }
  if (arg.size() > 2 && arg[1] != '-')
    for (const FlagSpec* f : specs)
      for (const auto& s : f->spellings)
        if (s.size() == 2 && arg.compare(0, 2, s) == 0 && f->arity != Arity::None) {
          attached = arg.substr(2);
          return f;
        }
  return nullptr;
}

}  // namespace

void command_line_error(const std::string& message) { throw CommandLineError(message); }

bool looks_like_option(const std::string& a) {
  if (a.size() < 2 || a[0] != '-') return false;
  // argparse takes negative numbers as values when no option looks like one.
  return !(std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.');
}

long long parse_integer(const std::string& text, const std::string& flag) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  command_line_error(flag + ": expected an integer, got '" + text + "'");
}

ParsedArgs parse_args(Args args, const std::vector<FlagSpec>& specs, std::size_t max_positional) {
  std::vector<const FlagSpec*> all{&kHelpSpec};
  for (const FlagSpec& f : specs) all.push_back(&f);
  ParsedArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!looks_like_option(arg)) {
      if (out.positional.size() >= max_positional)
        command_line_error(max_positional == 0 ? "unexpected argument '" + arg + "'"
                                               : "too many arguments: '" + arg + "'");
      out.positional.push_back(arg);
      continue;
    }
    std::optional<std::string> attached;
    const FlagSpec* f = match(all, arg, attached);
    if (!f) command_line_error("unknown option " + arg);
    ParsedFlag p{f->id, arg.substr(0, arg.find('=')), {}};
    if (attached) p.values.push_back(*attached);
    const auto next_is_value = [&] { return i + 1 < args.size() && !looks_like_option(args[i + 1]); };
    switch (f->arity) {
      case Arity::None:
        break;
      case Arity::One:
        if (!attached) {
          if (!next_is_value()) command_line_error(p.written + " needs a value");
          p.values.push_back(args[++i]);
        }
        break;
      case Arity::Optional:
        if (!attached && next_is_value()) p.values.push_back(args[++i]);
        break;
      case Arity::OneOrMore:
        while (next_is_value()) p.values.push_back(args[++i]);
        if (p.values.empty()) command_line_error(p.written + " needs at least one value");
        break;
    }
    const bool help = f->id == kHelpFlag;
    out.flags.push_back(std::move(p));
    if (help) break;
  }
  return out;
}

std::optional<Framework> parse_framework(std::string_view value) {
  if (value == "pytorch" || value == "pt") return Framework::PyTorch;
  if (value == "mindspore" || value == "ms") return Framework::MindSpore;
  return std::nullopt;
}

}  // namespace probe::cli
