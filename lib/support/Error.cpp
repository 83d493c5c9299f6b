#include "probe/error.h"

namespace probe {

Error::Error(ErrorKind kind, std::string message, std::string file, std::string field, std::string api)
    : std::runtime_error(compose(message, file, field, api)),
      kind_(kind),
      message_(std::move(message)),
      file_(std::move(file)),
      field_(std::move(field)),
      api_(std::move(api)) {}

std::string Error::compose(const std::string& message, const std::string& file, const std::string& field,
                           const std::string& api) {
  // One line, most specific location first: "file: field: api: message".
  std::string out;
  auto add = [&out](const std::string& part) {
    if (part.empty()) return;
    out += part;
    out += ": ";
  };
  add(file);
  add(field);
  if (!api.empty()) add("API " + api);
  out += message;
  return out;
}

Error Error::with_context(std::string_view file, std::string_view field, std::string_view api) const {
  return Error(kind_, message_, file_.empty() ? std::string(file) : file_,
               field_.empty() ? std::string(field) : field_, api_.empty() ? std::string(api) : api_);
}

int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      return 2;
    case ErrorKind::Io:
      return 3;
    case ErrorKind::Format:
      return 4;
    case ErrorKind::Unsupported:
      return 5;
    case ErrorKind::Security:
      return 6;
    case ErrorKind::Runner:
      return 7;
    case ErrorKind::Internal:
      return 70;
  }
  return 70;
}

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      return "invalid argument";
    case ErrorKind::Io:
      return "I/O error";
    case ErrorKind::Format:
      return "format error";
    case ErrorKind::Unsupported:
      return "unsupported";
    case ErrorKind::Security:
      return "security error";
    case ErrorKind::Runner:
      return "runner error";
    case ErrorKind::Internal:
      return "internal error";
  }
  return "internal error";
}

}  // namespace probe
