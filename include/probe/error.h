// probe's single error model. Every failure that libprobe reports is a probe::Error carrying
// a category (mapped to CLI exit codes) and the context a user needs to fix the input:
// which file, which field inside it, and which API was being processed.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "probe/export.h"

namespace probe {

/// What kind of failure this is; the CLI maps each to an exit code (see exit_code()).
enum class ErrorKind {
  InvalidArgument,  ///< bad command-line flag or API argument
  Io,               ///< a file cannot be opened, read, mapped or written
  Format,           ///< a file is malformed: truncated, wrong magic, bad JSON, lying header
  Unsupported,      ///< valid input that probe does not handle (dtype, API, format variant)
  Security,         ///< input tries to escape the dump directory or run code (pickle globals)
  Internal,         ///< a bug in probe
  Runner,           ///< a runner the caller registered threw or returned a malformed result
};

/// The exception type thrown by every libprobe function.
class PROBE_API Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string file = {}, std::string field = {},
        std::string api = {});

  ErrorKind kind() const noexcept { return kind_; }
  /// The message without context.
  const std::string& message() const noexcept { return message_; }
  const std::string& file() const noexcept { return file_; }
  const std::string& field() const noexcept { return field_; }
  const std::string& api() const noexcept { return api_; }

  /// Returns a copy with missing context filled in (existing context is kept: innermost wins).
  Error with_context(std::string_view file, std::string_view field = {}, std::string_view api = {}) const;

 private:
  static std::string compose(const std::string& message, const std::string& file, const std::string& field,
                             const std::string& api);
  ErrorKind kind_;
  std::string message_, file_, field_, api_;
};

/// Process exit code for an error kind: 2 argument, 3 I/O, 4 format, 5 unsupported, 6 security, 7 runner,
/// 70 internal.
PROBE_API int exit_code(ErrorKind kind) noexcept;

/// Human-readable name of an error kind ("format error", ...).
PROBE_API std::string_view to_string(ErrorKind kind) noexcept;

}  // namespace probe
