// Number text exactly as Python and numpy print it, which msprobe's CSVs and JSON contain.
#pragma once

#include <string>

#include "probe/export.h"
#include "probe/scalar_types.h"

namespace probe {

/// Python `"{:.Pf}".format(v)`: fixed-point with `precision` decimals; "nan", "inf", "-inf".
PROBE_API std::string format_fixed(double v, int precision = 14);
/// Python `repr(float)`: shortest round-trip digits, ".0" for integral values, exponent form
/// (`1e-05`, `1.5e+16`) when the decimal exponent is < -4 or >= 16; "nan", "inf", "-inf".
PROBE_API std::string python_repr(double v);
/// numpy 1.x `str(np.float32(v))`: the same rules with float32's shortest digits ("0.011962891").
PROBE_API std::string python_repr(float v);
/// numpy 1.x `str(np.float16(v))`: shortest digits that round-trip through float16 ("0.0996").
PROBE_API std::string python_repr(float16_t v);

}  // namespace probe
