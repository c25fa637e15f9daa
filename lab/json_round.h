// The one rounding of the floats that result files carry (JSON and CSV), so that every writer agrees.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace skinnygemm {

// v to `significant` digits (4: 2.356 us, 18.42 us, 0.6812 efficiency, 0.001634 rel_error, 0.007824 TB/s of a
// CPU row), returned as the double nearest that short decimal, so that the JSON writer prints "2.356" and not
// "2.3560000000000003" (which round(v / 0.001) * 0.001 gives). Significant digits rather than decimals: a fixed
// number of decimals turns the small values (rel_error, CPU TB/s) into 0. Zero, NaN and infinities pass through.
inline double json_round(double v, int significant = 4) {
  if (v == 0 || !std::isfinite(v)) return v;
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", significant, v);
  return std::strtod(text, nullptr);
}

}  // namespace skinnygemm
