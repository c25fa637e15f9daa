// The fields a whole-run result row (kind "step", "mla_layer") carries for its timing, in the shared schema's
// names (shared/design/BENCHMARKING.md), so that every command writes them alike.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/json_round.h"

namespace skinnygemm::cli {

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

}  // namespace skinnygemm::cli
