#include "support/JsonDocument.h"

#include <fmt/format.h>
#include <rapidjson/error/en.h>

#include <algorithm>

#include "probe/error.h"

namespace probe::detail {

rapidjson::Document parse_json_document(std::string_view text, const std::string& origin) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
  if (doc.HasParseError())
    throw Error(ErrorKind::Format,
                fmt::format("invalid JSON at {}: {}", describe_json_position(text, doc.GetErrorOffset()),
                            rapidjson::GetParseError_En(doc.GetParseError())),
                origin);
  return doc;
}

std::string describe_json_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view head = text.substr(0, offset);
  const auto line = 1 + std::count(head.begin(), head.end(), '\n');
  const auto last_nl = head.rfind('\n');
  const std::size_t column = offset - (last_nl == std::string_view::npos ? 0 : last_nl + 1) + 1;
  return fmt::format("line {}, column {} (byte offset {})", line, column, offset);
}

}  // namespace probe::detail
