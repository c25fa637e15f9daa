// The fields a whole-run result row (kind "step", "mla_layer") carries for its timing, in the shared schema's
// names (docs/measuring.md), so that every command writes them alike.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace skinnygemm::cli {

inline double round_to(double v, double unit) { return std::round(v / unit) * unit; }

// us, spread and tbps; the floor (also as stream_read_us) and efficiency where a floor was measured; cuBLASLt's
// time and the speedup over it where it was.
inline void add_run_timing(nlohmann::ordered_json& o, double us, double spread, double tbps, double floor_us,
                           double efficiency, double cublaslt_us, double speedup) {
  o["us"] = round_to(us, 0.01);
  o["spread"] = round_to(spread, 0.0001);
  o["tbps"] = round_to(tbps, 0.001);
  if (floor_us > 0) {
    o["floor_us"] = round_to(floor_us, 0.01);
    o["stream_read_us"] = o["floor_us"];  // the gemm rows' name for the same limit
    o["efficiency"] = round_to(efficiency, 0.001);
  }
  if (cublaslt_us > 0) {
    o["cublaslt_us"] = round_to(cublaslt_us, 0.01);
    o["speedup"] = round_to(speedup, 0.001);
  }
}

}  // namespace skinnygemm::cli
