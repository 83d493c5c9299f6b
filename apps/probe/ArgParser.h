// The one command-line reader of every sub-command, with msprobe's spellings read the way Python's
// argparse reads them: single-dash long flags (-api_info), unique prefixes of long flags, --flag=value,
// a one-letter flag with its value attached (-n4), negative numbers as values.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "Commands.h"
#include "probe/dump.h"
#include "probe/error.h"

namespace probe::cli {

/// How many values a flag takes (argparse's nargs: none, 1, '?', '+').
enum class Arity { None, One, Optional, OneOrMore };

/// A flag of a command: `id` is the command's own enum value, `spellings` every accepted form.
struct FlagSpec {
  int id;
  std::vector<std::string> spellings;
  Arity arity = Arity::None;
};

/// One flag as given: the spelling written on the command line (for messages) and its values.
struct ParsedFlag {
  int id;
  std::string written;
  std::vector<std::string> values;
  const std::string& value() const { return values.front(); }  ///< Arity::One
};

struct ParsedArgs {
  std::vector<ParsedFlag> flags;        ///< in command-line order
  std::vector<std::string> positional;  ///< arguments that are not flags or their values
};

/// Reads `args` against `specs`. A help flag (-h/--help) is always known and returned with id -1,
/// reading stopping there. Throws CommandLineError for an unknown or ambiguous option, a missing
/// value, or more than `max_positional` positional arguments.
ParsedArgs parse_args(Args args, const std::vector<FlagSpec>& specs, std::size_t max_positional = 0);

/// True for "-x..." that argparse takes as an option (not "-1", "-.5").
bool looks_like_option(const std::string& arg);

/// The one spelling table of -f/--framework values for every command: "pytorch" or "pt", "mindspore" or
/// "ms"; nullopt for anything else (each command says what it supports).
std::optional<Framework> parse_framework(std::string_view value);

/// `text` as an integer, else InvalidArgument naming `flag`.
long long parse_integer(const std::string& text, const std::string& flag);

/// A mistake on the command line (not in the files it names): printed as one line plus a pointer to
/// the command's --help, exit code 2 as argparse gives.
class CommandLineError : public Error {
 public:
  explicit CommandLineError(const std::string& message) : Error(ErrorKind::InvalidArgument, message) {}
};

/// Throws CommandLineError(message).
[[noreturn]] void command_line_error(const std::string& message);

inline constexpr int kHelpFlag = -1;

}  // namespace probe::cli
