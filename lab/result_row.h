// What every result row shares (docs/measuring.md): the one rounding helper of the lab and the CLI, and the timing
// fields a whole-run row (kind "step", "mla_layer") carries, so that every command writes them alike.
#pragma once

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "lab/json_round.h"

namespace skinnygemm::tune {

// v rounded to a multiple of unit (0.01, 0.001, ...), as the nearest double to that decimal: the scale is an exact
// power of ten, so 0.301 prints as 0.301.
inline double round_to(double v, double unit) {
  const double scale = std::round(1 / unit);
  return std::round(v * scale) / scale;
}

// us, spread and tbps; the floor (also as stream_read_us) and efficiency where a floor was measured; cuBLASLt's
// time and the speedup over it where it was.
inline void add_run_timing(nlohmann::ordered_json& o, double us, double spread, double tbps, double floor_us,
                           double efficiency, double cublaslt_us, double speedup) {
  o["us"] = json_round(us);
  o["spread"] = json_round(spread);
  o["tbps"] = json_round(tbps);
  if (floor_us > 0) {
    o["floor_us"] = json_round(floor_us);
    o["stream_read_us"] = o["floor_us"];  // the gemm rows' name for the same limit
    o["efficiency"] = json_round(efficiency);
  }
  if (cublaslt_us > 0) {
    o["cublaslt_us"] = json_round(cublaslt_us);
    o["speedup"] = json_round(speedup);
  }
}

// The baseline fields of a per-problem row (kinds "gemm", "fused"): the stream-read limit and efficiency where
// measured, cuBLASLt's default and best times, its best config and the speedup over the default where measured.
template <class Json>
void add_baselines(Json& o, double stream_read_us, double efficiency, double cublaslt_us, double cublaslt_best_us,
                   const std::string& cublaslt_best_config, double speedup) {
  if (stream_read_us > 0) {
    o["stream_read_us"] = json_round(stream_read_us);
    o["efficiency"] = json_round(efficiency);
  }
  if (cublaslt_us > 0) {
    o["cublaslt_us"] = json_round(cublaslt_us);
    o["cublaslt_best_us"] = json_round(cublaslt_best_us);
    o["cublaslt_best_config"] = cublaslt_best_config;
    o["speedup"] = json_round(speedup);
  }
}

}  // namespace skinnygemm::tune
