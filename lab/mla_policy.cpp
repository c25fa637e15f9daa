// The policy file `skinnygemm mla --policy-out` writes (mla_runner.h, docs/mla.md): which fused-projection mode
// won per (M, context) grid point, in the format load_fused_policy reads.
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "lab/json_round.h"
#include "lab/mla_runner.h"

namespace skinnygemm::tune {

namespace {

double log2_distance(int64_t a, int64_t b) {
  return std::fabs(std::log2(static_cast<double>(a)) - std::log2(static_cast<double>(b)));
}


}  // namespace

std::string mla_policy_json(const MlaReport& rep, const std::vector<int64_t>& ms, const std::vector<int64_t>& contexts,
                            const std::string& revision, const std::string& command, const std::string& date) {
  using nlohmann::ordered_json;
  SKINNYGEMM_CHECK(!rep.picks.empty(), "no grid point has a measured skinny variant (every point was skipped or "
                                       "failed its check), so there is no policy to write");
  std::vector<int64_t> sm = ms, sc = contexts;
  std::sort(sm.begin(), sm.end());
  std::sort(sc.begin(), sc.end());
  sm.erase(std::unique(sm.begin(), sm.end()), sm.end());  // the loader wants strictly ascending axes
  sc.erase(std::unique(sc.begin(), sc.end()), sc.end());
  ordered_json points = ordered_json::array();
  for (int64_t m : sm)
    for (int64_t c : sc) {
      const MlaPick* exact = nullptr;
      const MlaPick* near = nullptr;
      double best = 1e300;
      for (const MlaPick& p : rep.picks) {
        if (p.m == m && p.context == c) exact = &p;
        const double d = log2_distance(p.m, m) + log2_distance(p.context, c);
        // A tie goes to the larger point (picks are in ascending context, then M order).
        if (d <= best + 1e-12) {
          best = std::min(best, d);
          near = &p;
        }
      }
      const MlaPick& p = exact ? *exact : *near;
      const FusedMode mode = *mla_variant_mode(p.variant);
      ordered_json pt = {{"m", m}, {"context", c}, {"mode", fused_mode_name(mode)}, {"variant", mla_variant_name(p.variant)}};
      if (exact) {
        pt["us"] = json_round(p.us);
        pt["margin"] = json_round(p.margin);
        if (!p.runner_up.empty()) pt["runner_up"] = p.runner_up;
        if (p.cublaslt_us > 0) {
          pt["cublaslt_us"] = json_round(p.cublaslt_us);
          pt["gain_vs_cublaslt"] = json_round(p.cublaslt_us / p.us);
        }
      } else {
        pt["measured"] = false;
        pt["from"] = std::to_string(p.m) + ":" + std::to_string(p.context);
      }
      points.push_back(pt);
    }
  const ordered_json doc = {
      {"schema", 1},
      {"kind", "fused_policy"},
      {"name", rep.dims.name()},
      {"device", rep.info.name},
      {"signature", rep.info.signature()},
      {"segments", {"qkv_a", "g"}},
      {"side_segments", {"g"}},
      {"modes", {{"fused", "skinny_fused"}, {"side_stream", "skinny_side_gate"}, {"separate", "skinny_separate"}}},
      {"rule", "nearest grid point in log2 distance per axis, a tie to the larger point; the nearest end outside"},
      {"margin", "runner-up skinny variant us / pick us - 1"},
      {"measured", {{"revision", revision}, {"command", command}, {"date", date}}},
      {"ms", sm},
      {"contexts", sc},
      {"points", points}};
  return doc.dump(1) + "\n";
}

}  // namespace skinnygemm::tune
