#include <fmt/format.h>

#include "probe/metrics.h"
#include "probe/number_format.h"

namespace probe {

MetricValue MetricValue::of_dtype(double v, DType t) {
  if (t == DType::Float32) return f32(static_cast<float>(v));
  if (t == DType::Float16) return f16(v);
  return f64(v);
}

std::string MetricValue::format(int precision) const {
  switch (kind) {
    case MetricKind::Blank:
      return " ";
    case MetricKind::Double:
      return format_fixed(value, precision);
    case MetricKind::Float32:
      return python_repr(static_cast<float>(value));
    case MetricKind::Float16:
      return python_repr(to_float16(value));
    case MetricKind::Integer:
      return fmt::format("{}", static_cast<std::int64_t>(value));
    case MetricKind::Text:
      return text;
  }
  return " ";
}

}  // namespace probe
