#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

#include "probe/api_name.h"

namespace probe {

std::size_t ApiName::name_segments() const noexcept {
  return static_cast<std::size_t>(std::count(name.begin(), name.end(), '.')) + 1;
}

std::string ApiName::counted_name() const {
  return call_index ? key() + "." + std::to_string(*call_index) : key();
}

std::string ApiName::dump_key() const {
  return direction == ApiDirection::None ? counted_name()
                                         : counted_name() + "." + std::string(to_string(direction));
}

std::string_view to_string(ApiDirection direction) noexcept {
  switch (direction) {
    case ApiDirection::Forward:
      return "forward";
    case ApiDirection::Backward:
      return "backward";
    case ApiDirection::None:
      break;
  }
  return "";
}

std::optional<ApiName> parse_api_name(std::string_view full) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto dot = full.find('.', start);
    const std::string_view part = full.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty()) return std::nullopt;
    parts.push_back(part);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  ApiName n;
  if (parts.back() == "forward" || parts.back() == "backward") {
    n.direction = parts.back() == "forward" ? ApiDirection::Forward : ApiDirection::Backward;
    parts.pop_back();
  }
  if (parts.size() < 2) return std::nullopt;
  const std::string_view last = parts.back();
  if (parts.size() >= 3 &&
      std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::int64_t index = 0;
    const auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), index);
    if (ec != std::errc() || end != last.data() + last.size()) return std::nullopt;
    n.call_index = index;
    parts.pop_back();
  }
  n.prefix = std::string(parts.front());
  // The parts are views into `full`, so the name is the text from the second part to the end of the last.
  const char* name_begin = parts[1].data();
  n.name = std::string(name_begin, parts.back().data() + parts.back().size() - name_begin);
  return n;
}

bool is_api_prefix(std::string_view segment) noexcept {
  static constexpr std::array<std::string_view, 11> kFamilies{
      "Functional", "Tensor", "Torch",          "Aten",      "NPU", "Distributed",
      "VF",         "Mint",   "MintFunctional", "Primitive", "Jit"};
  return std::find(kFamilies.begin(), kFamilies.end(), segment) != kFamilies.end();
}

std::string api_list_name(std::string_view api) {
  if (!is_api_prefix(api.substr(0, api.find('.')))) return std::string(api);
  const std::optional<ApiName> parsed = parse_api_name(api);
  return parsed ? parsed->name : std::string(api);
}

std::string output_row_prefix(std::string_view counted_api, ApiDirection direction) {
  std::string out(counted_api);
  out += '.';
  out += to_string(direction);
  out += ".output.";
  return out;
}

std::string output_row_name(std::string_view counted_api, ApiDirection direction, std::size_t index) {
  return output_row_prefix(counted_api, direction) + std::to_string(index);
}

}  // namespace probe
