// `skinnygemm mla`: one MLA attention block's decode step (lab/mla.h) per (M, context) grid point, every
// variant checked against a reference of the layer and timed as one CUDA graph, plus the attention alone; rows of
// kind "mla_layer" with the top-level "policy_choice" (docs/measuring.md) and, with --policy-out, the
// fused-projection policy file an engine loads (docs/mla.md).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "common.h"
#include "lab/result_row.h"
#include "lab/models.h"
#include "lab/bench.h"
#include "lab/mla_runner.h"

namespace skinnygemm::cli {

using tune::add_run_timing;
using tune::round_to;
namespace {

using nlohmann::ordered_json;

struct MlaArgs {
  std::string model = "kimi_k3", m = "1,2,4,8,16,32,64", context = "512,2048,8192,32768,131072", variants;
  std::string backend = "auto", json, policy_out;
  int tp = 8;
  double scale = 1.0;
  int samples = 5;
  bool no_attention = false;
};


const char* config_of(tune::MlaVariant v) {
  switch (v) {
    case tune::MlaVariant::Cublaslt: return "cublaslt";
    case tune::MlaVariant::SkinnySeparate: return "selection";
    case tune::MlaVariant::SkinnyFused: return "selection+fused qkv_a|g";
    case tune::MlaVariant::SkinnySideGate: return "selection+side-stream g";
  }
  return "?";
}

ordered_json row_json(const tune::MlaResult& r, const tune::MlaReport& rep, bool pdl) {
  const tune::MlaDims& d = rep.dims;
  // n and k carry the hidden size: the layer maps hidden states [M, hidden] to [M, hidden].
  ordered_json o = {{"kind", "mla_layer"}, {"name", d.name()},     {"variant", r.name},       {"dtype", dtype_name(d.dtype)},
                    {"n", d.hidden},       {"k", d.hidden},        {"m", r.m},                {"context", r.context},
                    {"tp", d.tp},          {"scale", d.scale},     {"heads", d.heads},        {"config", config_of(r.variant)},
                    {"pdl", pdl},          {"bytes", r.bytes},     {"cache_bytes", r.cache_bytes},
                    {"copies", r.copies},  {"cache_copies", r.cache_copies},                  {"checked", r.checked},
                    {"max_rel_error", r.max_rel_error}};
  if (!r.error.empty()) {
    o["error"] = r.error;
    return o;
  }
  add_run_timing(o, r.us, r.spread, r.tbps, r.floor_us, r.efficiency, r.cublaslt_us, r.speedup);
  if (r.attention_us > 0) {
    o["attention_us"] = json_round(r.attention_us);
    o["attention_tbps"] = json_round(r.attention_tbps);
  }
  o["attention_splits"] = r.attention_splits;
  return o;
}

void print_report(const tune::MlaReport& rep) {
  const tune::MlaDims& d = rep.dims;
  std::cout << "MLA layer " << d.name() << (d.scale < 1 ? " (scaled)" : "") << " on " << rep.device << ": " << d.heads
            << " heads, hidden " << d.hidden << ", " << fixed(rep.weight_bytes / 1e6, 1) << " MB of weights, stream-read "
            << fixed(rep.stream_read_tbps, 3) << " TB/s, PDL " << (rep.pdl ? "on" : "off") << "\n"
            << std::right << std::setw(8) << "context" << std::setw(4) << "M" << "  " << std::left << std::setw(18)
            << "variant" << std::right << std::setw(10) << "us" << std::setw(8) << "spread" << std::setw(10) << "floor_us"
            << std::setw(6) << "eff" << std::setw(7) << "x_lt" << std::setw(10) << "attn_us" << std::setw(8) << "attn_TB"
            << std::setw(9) << "err\n";
  for (const tune::MlaResult& r : rep.results) {
    std::cout << std::right << std::setw(8) << r.context << std::setw(4) << r.m << "  " << std::left << std::setw(18)
              << r.name << std::right;
    if (!r.error.empty()) {
      std::cout << "  FAIL " << r.error << "\n";
      continue;
    }
    std::cout << std::setw(10) << fixed(r.us, 1) << std::setw(8) << fixed(r.spread, 3) << std::setw(10)
              << fixed(r.floor_us, 1) << std::setw(6) << fixed(r.efficiency, 2) << std::setw(7) << fixed(r.speedup, 2)
              << std::setw(10) << fixed(r.attention_us, 1) << std::setw(8) << fixed(r.attention_tbps, 2) << std::setw(9)
              << std::scientific << std::setprecision(1) << r.max_rel_error << std::defaultfloat << "\n";
  }
  if (!rep.picks.empty()) std::cout << "\npolicy: the fastest skinny variant per point (margin: runner-up / pick - 1)\n";
  for (const tune::MlaPick& p : rep.picks)
    std::cout << std::right << std::setw(8) << p.context << std::setw(4) << p.m << "  " << std::left << std::setw(18)
              << tune::mla_variant_name(p.variant) << std::right << " margin " << fixed(100 * p.margin, 1) << "%"
              << (p.cublaslt_us > 0 ? "  vs cublaslt x" + fixed(p.cublaslt_us / p.us, 3) : std::string()) << "\n";
  for (const tune::MlaSkipped& s : rep.skipped)
    std::cout << "SKIPPED m=" << s.m << " context=" << s.context << ": " << s.reason << "\n";
  std::cout.flush();
}

int run_mla_command(const MlaArgs& a) {
  const Backend backend = resolve_backend(parse_backend(a.backend));
  const bool gpu = backend == Backend::Cuda;
  tune::MlaRunOptions o;
  o.model = a.model;
  o.tp = a.tp;
  o.scale = a.scale;
  o.ms = models::parse_m_range(a.m);
  o.contexts = tune::parse_contexts(a.context);
  o.backend = backend;
  o.variants = tune::parse_mla_variants(!a.variants.empty() ? a.variants
                                        : gpu ? "cublaslt,skinny_separate,skinny_fused,skinny_side_gate"
                                              : "skinny_separate,skinny_fused,skinny_side_gate");
  o.samples = a.samples;
  o.attention = !a.no_attention;
  o.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  if (!gpu) std::cout << "NOTICE: CPU backend: no GPU was used, so no graphs, no side stream, no stream-read floor.\n";
  const tune::MlaReport rep = tune::run_mla(o);
  print_report(rep);
  int failures = 0;
  ordered_json rows = ordered_json::array();
  for (const tune::MlaResult& r : rep.results) {
    rows.push_back(row_json(r, rep, rep.pdl));
    failures += !r.error.empty();
  }
  tune::BenchMeta meta = tune::bench_meta(backend);
  meta.revision = git_revision();
  meta.command = command_line();
  meta.date = utc_date();
  if (!a.json.empty()) {
    ordered_json choice = ordered_json::object();
    for (const tune::MlaPick& p : rep.picks)
      choice[std::to_string(p.m) + ":" + std::to_string(p.context)] = tune::mla_variant_name(p.variant);
    ordered_json skipped = ordered_json::array();
    for (const tune::MlaSkipped& s : rep.skipped)
      skipped.push_back({{"m", s.m}, {"context", s.context}, {"reason", s.reason}});
    const tune::MlaDims& d = rep.dims;
    const ordered_json doc = {
        {"meta", {{"gpu", meta.gpu}, {"sms", meta.sms}, {"l2_mib", meta.l2_mib}, {"cuda", meta.cuda},
                  {"cublaslt", meta.cublaslt}, {"revision", meta.revision}, {"command", meta.command}, {"date", meta.date}}},
        {"stream_read_tbps", json_round(rep.stream_read_tbps)},
        {"layer", {{"name", d.name()}, {"hidden", d.hidden}, {"heads", d.heads}, {"q_lora_rank", d.q_lora},
                   {"kv_lora_rank", d.kv_lora}, {"qk_rope_head_dim", d.rope}, {"qk_nope_head_dim", d.nope},
                   {"v_head_dim", d.v_dim}, {"weight_bytes", rep.weight_bytes}, {"tolerance", tune::kMlaTolerance}}},
        {"rows", rows},
        {"policy_choice", choice},
        {"skipped", skipped}};
    write_file(a.json, doc.dump(1) + "\n");
    std::cerr << "wrote " << a.json << "\n";
  }
  if (!a.policy_out.empty()) {
    write_file(a.policy_out, tune::mla_policy_json(rep, o.ms, o.contexts, meta.revision, meta.command, meta.date));
    std::cerr << "wrote " << a.policy_out << "\n";
  }
  if (failures) std::cout << "FAILED: " << failures << " (variant, M, context) cases did not pass the output check\n";
  return failures ? kExitMismatch : 0;
}

}  // namespace

Command add_mla(CLI::App& app) {
  auto a = std::make_shared<MlaArgs>();
  CLI::App* sub = app.add_subcommand("mla", "One MLA attention block's decode step per (M, context) with real "
                                            "attention: cuBLASLt vs separate, fused and side-stream gate, and the "
                                            "measured policy (docs/mla.md)");
  sub->add_option("--model", a->model, "model file name under models/ (without .json)")->capture_default_str();
  sub->add_option("--tp", a->tp, "tensor-parallel degree (per-rank heads)")->capture_default_str();
  sub->add_option("--m", a->m, "tokens (each its own sequence): 1:64, 1,2,4,8 or 3 (each 1..64)")->capture_default_str();
  sub->add_option("--context", a->context, "KV-cache tokens per sequence: a comma list, e.g. 512,2048")
      ->capture_default_str();
  sub->add_option("--variants", a->variants,
                  "comma list of cublaslt, skinny_separate, skinny_fused, skinny_side_gate (default: all on cuda, "
                  "the skinny ones on cpu)");
  sub->add_option("--scale", a->scale, "(0, 1]: widths x scale (multiples of 8) and fewer heads, for CPU tests")
      ->capture_default_str();
  add_backend_option(sub, &a->backend);
  sub->add_option("--samples", a->samples, "timed samples (median reported; >= 5 on the GPU)")->capture_default_str();
  sub->add_flag("--no-attention", a->no_attention, "skip timing the attention alone");
  sub->add_option("--json", a->json, "write rows of kind \"mla_layer\" and \"policy_choice\" (shared schema) to FILE");
  sub->add_option("--policy-out", a->policy_out, "write the fused-projection policy (docs/mla.md) to FILE");
  return {sub, [a] { return run_mla_command(*a); }};
}

}  // namespace skinnygemm::cli
