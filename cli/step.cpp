// `skinnygemm step`: every dense projection of one decode step per rank (lab/step.h), checked, then
// timed as one CUDA graph per variant against cuBLASLt and the stream-read floor (docs/step.md). Rows of kind
// "step" (docs/measuring.md). PDL is a process-wide switch read once (SKINNYGEMM_PDL), so the
// no-PDL variants run in a child process of this binary with SKINNYGEMM_PDL=0; its rows join this one's file.
// --ranks N (N >= 2) runs the step across N GPUs instead: cli/step_processes.cpp.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "lab/result_row.h"
#include "lab/models.h"
#include "spawn.h"
#include "step.h"
#include "lab/step_ranks.h"

namespace skinnygemm::cli {

using tune::add_run_timing;
using tune::round_to;

using nlohmann::ordered_json;

namespace {
}  // namespace

ordered_json step_row_json(const tune::StepResult& r, const StepArgs& a, const tune::StepModel& model,
                           const tune::StepReport& report) {
  const char* config = r.variant == tune::StepVariant::Cublaslt        ? "cublaslt"
                       : r.variant == tune::StepVariant::CublasltTorch ? "cublaslt_torch"
                       : r.variant == tune::StepVariant::CublasltFused ? "cublaslt+fusions"
                       : r.variant == tune::StepVariant::Skinny        ? "selection"
                       : r.variant == tune::StepVariant::Tma           ? "tma first-cut"
                                                                : "selection+fusions";
  // n and k carry the hidden size: a step maps hidden states [M, hidden] to the next step's; the shapes of
  // its GEMMs are in "sinks".
  ordered_json o = {{"kind", "step"},   {"name", a.model},        {"variant", r.name},    {"dtype", dtype_name(model.dtype)},
                    {"n", model.hidden}, {"k", model.hidden},      {"m", r.m},             {"tp", a.tp},
                    {"scale", a.scale},  {"layers", model.layers}, {"moe_front", tune::moe_front_name(model.moe_front)},
                    {"config", config},  {"pdl", r.pdl},
                    {"gemms", r.gemms},  {"bytes", r.bytes},       {"checked", r.checked}, {"max_rel_error", r.max_rel_error}};
  if (report.ranks > 1) {
    o["ranks"] = report.ranks;
    o["rank"] = report.rank;
    o["scope"] = "rank";
    o["all_reduces"] = r.all_reduces;
  }
  if (!r.error.empty()) {
    o["error"] = r.error;
    return o;
  }
  add_run_timing(o, r.us, r.spread, r.tbps, r.floor_us, r.efficiency, r.cublaslt_us, r.speedup);
  if (r.chain_floor_us > 0) {
    o["chain_floor_us"] = json_round(r.chain_floor_us);
    o["chain_efficiency"] = json_round(r.chain_efficiency);
    o["chain_rings"] = r.chain_rings;
  }
  if (!r.chain_shares.empty()) {
    o["chain_share_base_us"] = json_round(r.chain_share_base_us);
    o["chain_shares"] = ordered_json::array();
    for (const tune::ChainShare& c : r.chain_shares)
      o["chain_shares"].push_back({{"name", c.name}, {"n", c.n}, {"k", c.k}, {"count", c.count},
                                   {"us", json_round(c.us)}, {"per_launch_us", json_round(c.us / c.count)}});
  }
  if (report.ranks > 1) {
    o["comm_us"] = json_round(r.comm_us);
    o["comm_share"] = json_round(r.comm_share);
  }
  o["sinks_us"] = json_round(r.sinks_us);
  o["sinks"] = ordered_json::array();
  for (const tune::StepSink& s : r.sinks)
    o["sinks"].push_back({{"name", s.name}, {"n", s.n}, {"k", s.k}, {"count", s.count}, {"us", json_round(s.us)},
                          {"total_us", json_round(s.total_us)}});
  return o;
}

ordered_json step_document(tune::BenchMeta meta, const ordered_json& rows) {
  meta.revision = git_revision();
  meta.command = command_line();
  meta.date = utc_date();
  return {{"meta", {{"gpu", meta.gpu}, {"sms", meta.sms}, {"l2_mib", meta.l2_mib}, {"cuda", meta.cuda},
                    {"cublaslt", meta.cublaslt}, {"revision", meta.revision}, {"command", meta.command},
                    {"date", meta.date}}},
          {"stream_read_tbps", json_round(meta.stream_read_tbps)},
          {"rows", rows}};
}

namespace {

// --trace-tma's file: per (variant, M) the traced replay's time and every TMA launch's CTAs (entry, end of the
// wait, exit, first stage landed, last stage multiplied, the other parts' sums gathered (gathered_us: lead-split
// reducers of token tiles <= 16) in us from the replay's first entry, -1 where a CTA wrote nothing; and its SM), to be
// read by scripts/trace_summary.py and tools/trials/exits_by_part.py.
ordered_json trace_document(tune::BenchMeta meta, const tune::StepReport& rep) {
  ordered_json cases = ordered_json::array();
  auto times = [](const std::vector<double>& v) {
    ordered_json a = ordered_json::array();
    for (double t : v) a.push_back(json_round(t, 7));
    return a;
  };
  for (const tune::StepResult& r : rep.results) {
    if (!r.tma_trace) continue;
    ordered_json launches = ordered_json::array();
    for (const tune::TmaTraceLaunch& l : r.tma_trace->launches)
      launches.push_back({{"n", l.n}, {"k", l.k}, {"m", l.m}, {"config", l.config}, {"ctas", l.sm.size()},
                          {"entry_us", times(l.entry_us)}, {"waited_us", times(l.waited_us)},
                          {"exit_us", times(l.exit_us)}, {"first_stage_us", times(l.first_stage_us)},
                          {"multiplied_us", times(l.multiplied_us)}, {"gathered_us", times(l.gathered_us)},
                          {"sm", l.sm}});
    cases.push_back({{"variant", r.name}, {"m", r.m}, {"us", json_round(r.us)},
                     {"replay_us", json_round(r.tma_trace->replay_us)}, {"launches", std::move(launches)}});
  }
  ordered_json doc = step_document(std::move(meta), ordered_json::array());
  doc.erase("rows");
  doc["cases"] = std::move(cases);
  return doc;
}

}  // namespace

std::vector<std::string> step_child_args(const StepArgs& a) {
  std::ostringstream scale;
  scale << std::setprecision(17) << a.scale;
  std::vector<std::string> args = {"skinnygemm", "step", "--model", a.model, "--tp", std::to_string(a.tp), "--m", a.m,
                                   "--scale", scale.str(), "--moe-front", a.moe_front, "--backend", "cuda",
                                   "--samples", std::to_string(a.samples)};
  if (!a.variants.empty()) args.insert(args.end(), {"--variants", a.variants});
  if (a.no_sinks) args.push_back("--no-sinks");
  if (a.check_all) args.push_back("--check-all");
  return args;
}

tune::StepRunOptions step_run_options(const StepArgs& a, Backend backend) {
  tune::StepRunOptions o;
  o.model = a.model;
  o.tp = a.tp;
  o.scale = a.scale;
  o.moe_front = tune::parse_moe_front(a.moe_front);
  o.ms = models::parse_m_range(a.m);
  for (int64_t m : o.ms) SKINNYGEMM_CHECK(m >= 1 && m <= 64, "--m " << a.m << " holds M=" << m << "; expected 1..64");
  o.backend = backend;
  const bool gpu = backend == Backend::Cuda;
  o.variants = tune::parse_variants(!a.variants.empty() ? a.variants
                                    : gpu               ? "cublaslt,cublaslt_torch,cublaslt_fused,skinny,skinny_fused,tma"
                                                        : "skinny,skinny_fused");
  o.samples = a.samples;
  o.sinks = !a.no_sinks;
  o.check_all = a.check_all;
  o.trace_tma = !a.trace_tma.empty();
  o.chain_floor = a.chain_floor;
  o.chain_attribution = a.chain_attribution;
  o.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  return o;
}

namespace {

void print_report(const tune::StepReport& rep, const tune::StepModel& model) {
  std::cout << "step of " << model.model << " at TP" << model.tp << (model.scale < 1 ? " (scaled)" : "") << " on "
            << rep.device << ": " << model.layers << " layers, " << fixed(model.arena_bytes / 1e9, 3)
            << " GB of weights per rank, MoE front " << tune::moe_front_name(model.moe_front) << ", stream-read "
            << fixed(rep.stream_read_tbps, 3) << " TB/s, PDL "
            << (rep.pdl ? "on" : "off") << "\n"
            << std::left << std::setw(20) << "variant" << std::right << std::setw(4) << "M" << std::setw(7) << "gemms"
            << std::setw(9) << "GB" << std::setw(11) << "us" << std::setw(8) << "spread" << std::setw(11) << "floor_us"
            << std::setw(6) << "eff" << std::setw(7) << "x_lt" << std::setw(8) << "checked" << std::setw(10)
            << "max_err\n";
  for (const tune::StepResult& r : rep.results) {
    std::cout << std::left << std::setw(20) << r.name << std::right << std::setw(4) << r.m << std::setw(7) << r.gemms
              << std::setw(9) << fixed(r.bytes / 1e9, 3);
    if (!r.error.empty()) {
      std::cout << "  FAIL " << r.error << "\n";
      continue;
    }
    std::cout << std::setw(11) << fixed(r.us, 1) << std::setw(8) << fixed(r.spread, 3) << std::setw(11)
              << fixed(r.floor_us, 1) << std::setw(6) << fixed(r.efficiency, 2) << std::setw(7) << fixed(r.speedup, 2)
              << std::setw(8) << r.checked << std::setw(10) << std::scientific << std::setprecision(1)
              << r.max_rel_error << std::defaultfloat << "\n";
  }
  for (const auto& [list, f] : rep.chain_floors) {
    std::cout << "\ndependent-chain floor of the " << list << " launches: " << fixed(f.us, 1) << " us (" << f.rings
              << "); tried:";
    for (const auto& [what, us] : f.tried) std::cout << " " << what << " " << fixed(us, 1);
    std::cout << "\n  each op name's ring alone:";
    for (const auto& [op, ring] : f.op_rings) std::cout << " " << op << "=" << ring;
    std::cout << "\n";
  }
  for (const tune::StepResult& r : rep.results) {
    if (r.chain_floor_us > 0)
      std::cout << "  " << std::left << std::setw(20) << r.name << std::right << " m=" << std::setw(2) << r.m
                << ": chain floor / us = " << fixed(r.chain_efficiency, 3) << "\n";
    if (r.chain_shares.empty()) continue;
    std::cout << "    what each op name's real launches add to the chain of " << fixed(r.chain_share_base_us, 1)
              << " us (us per step, per launch):";
    for (const tune::ChainShare& c : r.chain_shares)
      std::cout << " " << c.name << " " << fixed(c.us, 1) << " (" << fixed(c.us / c.count, 2) << ")";
    std::cout << "\n";
  }
  for (const tune::StepResult& r : rep.results) {
    if (r.sinks.empty()) continue;
    std::cout << "\ntop-" << r.sinks.size() << " time sinks, " << r.name << " m=" << r.m
              << " (each projection alone, in a graph of its launches; all sinks " << fixed(r.sinks_us, 1)
              << " us vs step " << fixed(r.us, 1) << " us)\n";
    for (const tune::StepSink& s : r.sinks)
      std::cout << "  " << std::left << std::setw(28) << s.name << std::right << std::setw(12)
                << (std::to_string(s.n) + "x" + std::to_string(s.k)) << std::setw(5) << s.count << " x"
                << std::setw(9) << fixed(s.us, 2) << " us =" << std::setw(10) << fixed(s.total_us, 1) << " us"
                << std::setw(7) << fixed(100 * s.total_us / r.us, 1) << "%\n";
  }
  std::cout.flush();
}

// Runs this binary again with SKINNYGEMM_PDL=0 for the no-PDL variants; returns its rows.
ordered_json run_nopdl_child(const StepArgs& a, double* tbps) {
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("skinnygemm_step_nopdl_" + std::to_string(::getpid()) + ".json")).string();
  std::vector<std::string> args = step_child_args(a);
  args.insert(args.end(), {"--pdl", "off", "--json", file});
  std::cerr << "running the no-PDL variants in a child process (SKINNYGEMM_PDL=0)\n";
  std::cout.flush();
  const int code = wait_child(spawn_self(args, {"SKINNYGEMM_PDL=0"}, "the no-PDL child process"), "the no-PDL child");
  std::ifstream in(file);
  SKINNYGEMM_CHECK(in.good(), "the no-PDL child process (exit " << code << ") wrote no results to " << file);
  const ordered_json doc = ordered_json::parse(in);
  std::filesystem::remove(file);
  *tbps = std::max(*tbps, doc.value("stream_read_tbps", 0.0));
  return doc.at("rows");
}

int run_step_command(const StepArgs& a) {
  tune::check_rank_args({a.ranks, a.rank, a.nccl_id, a.json, a.backend});
  SKINNYGEMM_CHECK(a.trace_tma.empty() || (a.search_table.empty() && a.ranks == 1 && a.rank < 0),
                   "--trace-tma times one process's step: not with --search-table or --ranks");
  const char* chain_flag = a.chain_attribution ? "--chain-attribution" : "--chain-floor";
  SKINNYGEMM_CHECK(!(a.chain_floor || a.chain_attribution) || (a.search_table.empty() && a.ranks == 1 && a.rank < 0),
                   chain_flag << " measures one process's step: not with --search-table or --ranks");
  if (!a.search_table.empty()) return run_step_search(a);
  if (a.rank >= 0) return run_step_rank(a);
  if (a.ranks > 1) return run_step_ranks(a);
  const Backend backend = resolve_backend(parse_backend(a.backend));
  const bool gpu = backend == Backend::Cuda;
  SKINNYGEMM_CHECK(a.trace_tma.empty() || gpu, "--trace-tma needs the cuda backend (the TMA family's timeline); the "
                                                   << backend_name(backend) << " backend has none");
  SKINNYGEMM_CHECK(!(a.chain_floor || a.chain_attribution) || gpu,
                   chain_flag << " needs the cuda backend (the probe streams on the GPU); the " << backend_name(backend)
                              << " backend has none");
  const tune::StepRunOptions o = step_run_options(a, backend);
  const tune::StepModel model = tune::build_step_model(a.model, a.tp, a.scale, o.moe_front);

  const char* env = std::getenv("SKINNYGEMM_PDL");
  const bool env_off = env && std::string(env) == "0";
  // Here: the PDL variants (or, with SKINNYGEMM_PDL=0 set, whatever was asked, named _nopdl).
  const bool here = !gpu || a.pdl != "off" || env_off;
  const bool child = gpu && a.pdl != "on" && !env_off;
  // The timeline is taken in this process only (the no-PDL child would need its own file).
  SKINNYGEMM_CHECK(a.trace_tma.empty() || !child, "--trace-tma needs --pdl on (or SKINNYGEMM_PDL=0 for a step "
                                                  "without PDL); --pdl " << a.pdl << " runs a child process");
  if (!gpu) std::cout << "NOTICE: CPU backend: no GPU was used, so no graphs, no PDL, no stream-read floor.\n";
  if (gpu && env_off && a.pdl != "off")
    std::cout << "NOTICE: SKINNYGEMM_PDL=0 is set, so every variant runs without PDL (names end in _nopdl).\n";
  tune::BenchMeta meta = tune::bench_meta(backend);
  ordered_json rows = ordered_json::array();
  int failures = 0;
  bool pdl_here = false, lab_failed = false;
  if (here) {
    const tune::StepReport rep = tune::run_step(o);
    pdl_here = rep.pdl;
    meta.stream_read_tbps = rep.stream_read_tbps;
    print_report(rep, model);
    for (const tune::StepResult& r : rep.results) {
      rows.push_back(step_row_json(r, a, model, rep));
      failures += !r.error.empty();
    }
    if (!rep.chain_error.empty()) {
      std::cout << "FAILED: " << rep.chain_error << "\n";
      lab_failed = true;  // the rows are written; the exit code says a measurement asked for is missing
    }
    if (!a.trace_tma.empty()) {
      write_file(a.trace_tma, trace_document(meta, rep).dump() + "\n");
      std::cerr << "wrote " << a.trace_tma << "\n";
      for (const tune::StepResult& r : rep.results)
        if (!r.trace_error.empty()) {
          std::cout << "FAILED: the TMA timeline of " << r.name << " m=" << r.m << ": " << r.trace_error << "\n";
          lab_failed = true;
        }
    }
  }
  if (child && (!here || pdl_here)) {  // a device without PDL already ran everything without it
    for (const auto& row : run_nopdl_child(a, &meta.stream_read_tbps)) {
      failures += row.contains("error");
      rows.push_back(row);
    }
  }
  if (!a.json.empty()) {
    write_file(a.json, step_document(meta, rows).dump(1) + "\n");
    std::cerr << "wrote " << a.json << "\n";
  }
  if (failures) std::cout << "FAILED: " << failures << " (variant, M) cases did not pass the output check\n";
  return failures ? kExitMismatch : lab_failed ? kExitError : 0;
}

}  // namespace

Command add_step(CLI::App& app) {
  auto a = std::make_shared<StepArgs>();
  CLI::App* sub = app.add_subcommand("step", "Every dense projection of one decode step per rank, as one CUDA graph "
                                             "per variant, against cuBLASLt and the stream-read floor (docs/step.md)");
  sub->add_option("--model", a->model, "model file name under models/ (without .json)")->capture_default_str();
  sub->add_option("--tp", a->tp, "tensor-parallel degree (per-rank shapes)")->capture_default_str();
  sub->add_option("--m", a->m, "tokens: 1:64, 1,2,4,8 or 3 (each 1..64)")->capture_default_str();
  sub->add_option("--variants", a->variants,
                  "comma list of cublaslt, cublaslt_torch, cublaslt_fused, skinny, skinny_fused, tma (default: all six "
                  "on cuda, the skinny ones on cpu)");
  sub->add_option("--scale", a->scale, "(0, 1]: widths x scale (multiples of 8) and fewer layers, for tests")
      ->capture_default_str();
  sub->add_option("--moe-front", a->moe_front,
                  "how skinny_fused and cublaslt_fused fuse the MoE front: non-ep (router + latent down + shared "
                  "gate_up, one launch fewer per MoE layer: one rank with no expert all-to-all) or ep (router + latent "
                  "down; the shared experts' gate_up alone); the unfused variants run the same GEMMs either way")
      ->check(CLI::IsMember({"ep", "non-ep"}))
      ->capture_default_str();
  add_backend_option(sub, &a->backend);
  sub->add_option("--samples", a->samples, "timed samples (median reported; >= 5 on the GPU)")->capture_default_str();
  sub->add_option("--pdl", a->pdl, "both: also run the variants without PDL (in a child process); on; off")
      ->check(CLI::IsMember({"both", "on", "off"}))
      ->capture_default_str();
  sub->add_flag("--no-sinks", a->no_sinks, "skip timing each projection alone");
  sub->add_flag("--check-all", a->check_all, "check every GEMM's output, not a sample of layers");
  sub->add_option("--json", a->json, "write rows of kind \"step\" (shared schema) to FILE");
  sub->add_option("--trace-tma", a->trace_tma,
                  "cuda, --pdl on: after timing each case, replay it once more with the TMA family's timeline on "
                  "(every CTA's entry, end of griddepcontrol.wait, exit, SM) and write it to FILE "
                  "(scripts/trace_summary.py reads it)");
  sub->add_flag("--chain-floor", a->chain_floor,
                "cuda: also time each variant's launches as a dependent chain of streaming probes of the same sizes "
                "(the step's floor of the same kind of work; json chain_floor_us, chain_efficiency)");
  sub->add_flag("--chain-attribution", a->chain_attribution,
                "cuda: --chain-floor, and per variant, M and op name the chain with that op name's launches run for "
                "real, minus the chain (json chain_shares: what each op name adds in the step's own order)");
  sub->add_option("--search-table", a->search_table,
                  "judge configs in the whole step instead of the protocol (lab/step_search.h): per M and GEMM shape, "
                  "the step timed with each candidate; the picks merged into FILE (a table), trials to --json")
      ->excludes("--variants");
  sub->add_option("--search-base", a->search_base,
                  "the search's starting point: tma (first cut), skinny (selection) or skinny_fused (selection on the "
                  "fused layout: its fusions searched as their merged GEMM)")
      ->check(CLI::IsMember({"tma", "skinny", "skinny_fused"}))
      ->needs("--search-table")
      ->capture_default_str();
  sub->add_option("--search-candidates", a->search_candidates,
                  "config-name globs (as tune --candidates; on the cpu backend the default becomes cpu_*)")
      ->needs("--search-table")
      ->capture_default_str();
  sub->add_option("--search-distance", a->search_distance,
                  "name tokens a candidate may differ by from the base config (-1: every candidate)")
      ->check(CLI::Range(-1, 1000))
      ->needs("--search-table")
      ->capture_default_str();
  sub->add_option("--search-min-launches", a->search_min_launches,
                  "search only shapes the step launches at least this often (the table keeps only those launched "
                  "twice or more: the step cannot tell a once-launched shape's choices apart)")
      ->check(CLI::Range(1, 1000000))
      ->needs("--search-table")
      ->capture_default_str();
  sub->add_option("--search-margin", a->search_margin,
                  "share of the step a candidate must save, in an ABBA confirmation against the incumbent")
      ->check(CLI::Range(0.0, 0.49))
      ->needs("--search-table")
      ->capture_default_str();
  sub->add_option("--ranks", a->ranks, "GPUs to run the step across, one process each, NCCL all-reduces after the "
                                       "row-parallel projections (1: this process on one GPU)")
      ->capture_default_str();
  sub->add_option("--rank", a->rank, "internal: this process's rank, given by the --ranks parent");
  sub->add_option("--nccl-id", a->nccl_id, "internal: the file with the parent's NCCL id, given by the --ranks parent");
  return {sub, [a] { return run_step_command(*a); }};
}

}  // namespace skinnygemm::cli
