// The fused-projection benchmark's host-only parts: the fusions of a model file as segment lists (with their
// padding, optionally scaled down), and the result document. The protocol is in fused_bench_run.cpp.
#include "lab/fused_bench.h"
#include "lab/result_row.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "lab/json_round.h"
#include "lab/models.h"

namespace skinnygemm::tune {

int64_t FusedSpec::rows() const {
  int64_t sum = 0;
  for (const FusedSegmentSpec& s : segments) sum += s.n;
  return sum;
}

int64_t FusedSpec::merged_n() const {
  int64_t sum = 0;
  for (const FusedSegmentSpec& s : segments) sum += s.padded();
  return sum;
}

namespace {

// A width times scale as a multiple of 8 (>= 8), so that rows stay 16-byte aligned; unchanged at scale 1.
int64_t scaled_width(int64_t v, double scale) {
  if (scale == 1.0) return v;
  return std::max<int64_t>(8, std::llround(static_cast<double>(v) * scale / 8) * 8);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::vector<FusedSpec> model_fusions(const std::string& model, int tp, const std::vector<std::string>& names,
                                     double scale, DType dtype) {
  SKINNYGEMM_CHECK(scale > 0 && scale <= 1, "scale " << scale << " must be in (0, 1] (1 = the real model)");
  std::map<std::string, models::Projection> parts;
  std::vector<models::Projection> fusions;
  std::vector<std::string> fusion_names;
  for (const models::Projection& p : models::model_projections(model, tp, true)) {
    if (p.fused()) {
      fusions.push_back(p);
      fusion_names.push_back(p.name);
    } else {
      parts[p.name] = p;
    }
  }
  SKINNYGEMM_CHECK(!fusions.empty(), "model '" << model << "' has no fusions (field 'fusions' of "
                                               << models::model_path(model) << ")");
  std::vector<models::Projection> chosen;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    const auto it = std::find_if(fusions.begin(), fusions.end(), [&](const auto& f) { return f.name == name; });
    SKINNYGEMM_CHECK(it != fusions.end(), "unknown fusion '" << name << "' for model " << model
                                                             << "; expected one of: " << join(fusion_names));
    SKINNYGEMM_CHECK(seen.insert(name).second, "fusion '" << name << "' is listed twice");
    chosen.push_back(*it);
  }
  if (names.empty()) chosen = fusions;

  std::vector<FusedSpec> out;
  for (const models::Projection& f : chosen) {
    FusedSpec spec;
    spec.name = f.name;
    spec.k = scaled_width(f.k, scale);
    spec.dtype = dtype;
    for (const std::string& part : f.fused_parts) {
      const models::Projection& p = parts.at(part);  // models.cpp checked that every part exists
      FusedSegmentSpec s;
      s.name = part;
      s.pad_to = p.pad_to;
      // A padded segment keeps an odd row count when scaled, so that small runs still exercise the padding.
      s.n = p.pad_to > 1 ? std::max<int64_t>(1, std::llround(static_cast<double>(p.unpadded) * scale))
                         : scaled_width(p.unpadded, scale);
      spec.segments.push_back(s);
    }
    SKINNYGEMM_CHECK(scale != 1.0 || spec.merged_n() == f.n,
                     "fusion " << f.name << ": its segments' padded rows add up to " << spec.merged_n()
                               << " but the model file gives N=" << f.n);
    out.push_back(std::move(spec));
  }
  return out;
}

std::string fused_results_json(const BenchMeta& meta, const std::vector<FusedRow>& rows) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["meta"] = {{"gpu", meta.gpu},         {"sms", meta.sms},           {"l2_mib", meta.l2_mib},
               {"cuda", meta.cuda},       {"cublaslt", meta.cublaslt}, {"revision", meta.revision},
               {"command", meta.command}, {"date", meta.date}};
  double best_tbps = meta.stream_read_tbps;
  for (const FusedRow& r : rows)
    if (r.error.empty() && r.stream_read_us > 0)
      best_tbps = std::max(best_tbps, static_cast<double>(Problem{r.m, r.n, r.k, r.dtype}.total_bytes()) /
                                          (r.stream_read_us * 1e6));
  j["stream_read_tbps"] = json_round(best_tbps);
  j["rows"] = ordered_json::array();
  for (const FusedRow& r : rows) {
    if (!r.error.empty()) continue;  // a wrong result has no speed
    ordered_json segments = ordered_json::array();
    for (const FusedSegmentResult& s : r.segments) {
      ordered_json seg = {{"name", s.name}, {"n", s.n}};
      if (s.pad_to > 1) seg["pad_to"] = s.pad_to;
      seg["us"] = json_round(s.us);
      seg["spread"] = json_round(s.spread);
      if (s.l2_warm) seg["l2_warm"] = true;
      seg["config"] = s.config;
      seg["source"] = s.source;
      segments.push_back(seg);
    }
    ordered_json o = {{"kind", "fused"},  {"name", r.name}, {"dtype", dtype_name(r.dtype)},
                      {"segments", segments}, {"n", r.n}, {"k", r.k}, {"m", r.m},
                      {"rung", r.rung},   {"reason", r.reason}, {"configs", r.configs},
                      {"us", json_round(r.us)}, {"spread", json_round(r.spread)},
                      {"tbps", json_round(r.tbps)},
                      {"separate_us", json_round(r.separate_us)},
                      {"separate_spread", json_round(r.separate_spread)},
                      {"ratio", json_round(r.ratio())},
                      {"contiguous_us", json_round(r.contiguous_us)}};
    if (r.kernel_us > 0) {
      o["kernel_config"] = r.kernel_config;
      o["kernel_us"] = json_round(r.kernel_us);
    }
    add_baselines(o, r.stream_read_us, r.efficiency, r.cublaslt_us, r.cublaslt_best_us, r.cublaslt_best_config,
                  r.cublaslt_us / r.us);
    o["check_ratio"] = json_round(r.check_ratio);
    o["checked"] = r.checked;
    j["rows"].push_back(o);
  }
  return j.dump(1) + "\n";
}

}  // namespace skinnygemm::tune
