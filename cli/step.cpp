// `skinnygemm step`: every dense projection of one decode step per rank (src/tune/step.h), checked, then
// timed as one CUDA graph per variant against cuBLASLt and the stream-read floor (docs/step.md). Rows of kind
// "step" (shared/design/BENCHMARKING.md). PDL is a process-wide switch read once (SKINNYGEMM_PDL), so the
// no-PDL variants run in a child process of this binary with SKINNYGEMM_PDL=0; its rows join this one's file.
#include <spawn.h>
#include <sys/wait.h>
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
#include "core/models.h"
#include "tune/bench.h"
#include "tune/step_runner.h"

extern char** environ;

namespace skinnygemm::cli {
namespace {

using nlohmann::ordered_json;

struct StepArgs {
  std::string model = "kimi_k3", m = "1:64", variants, backend = "auto", json, pdl = "both";
  int tp = 8;
  double scale = 1.0;
  int samples = 5;
  bool no_sinks = false, check_all = false;
};

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

ordered_json row_json(const tune::StepResult& r, const StepArgs& a, const tune::StepModel& model) {
  const char* config = r.variant == tune::StepVariant::Cublaslt ? "cublaslt"
                       : r.variant == tune::StepVariant::Skinny ? "selection" : "selection+fusions";
  // n and k carry the hidden size: a step maps hidden states [M, hidden] to the next step's; the shapes of
  // its GEMMs are in "sinks".
  ordered_json o = {{"kind", "step"},   {"name", a.model},        {"variant", r.name},    {"dtype", dtype_name(model.dtype)},
                    {"n", model.hidden}, {"k", model.hidden},      {"m", r.m},             {"tp", a.tp},
                    {"scale", a.scale},  {"layers", model.layers}, {"config", config},     {"pdl", r.pdl},
                    {"gemms", r.gemms},  {"bytes", r.bytes},       {"checked", r.checked}, {"max_rel_error", r.max_rel_error}};
  if (!r.error.empty()) {
    o["error"] = r.error;
    return o;
  }
  o["us"] = round_to(r.us, 0.01);
  o["spread"] = round_to(r.spread, 0.0001);
  o["tbps"] = round_to(r.tbps, 0.001);
  if (r.floor_us > 0) {
    o["floor_us"] = round_to(r.floor_us, 0.01);
    o["stream_read_us"] = o["floor_us"];  // the gemm rows' name for the same limit
    o["efficiency"] = round_to(r.efficiency, 0.001);
  }
  if (r.cublaslt_us > 0) {
    o["cublaslt_us"] = round_to(r.cublaslt_us, 0.01);
    o["speedup"] = round_to(r.speedup, 0.001);
  }
  o["sinks_us"] = round_to(r.sinks_us, 0.01);
  o["sinks"] = ordered_json::array();
  for (const tune::StepSink& s : r.sinks)
    o["sinks"].push_back({{"name", s.name}, {"n", s.n}, {"k", s.k}, {"count", s.count}, {"us", round_to(s.us, 0.001)},
                          {"total_us", round_to(s.total_us, 0.01)}});
  return o;
}

void print_report(const tune::StepReport& rep, const tune::StepModel& model) {
  std::cout << "step of " << model.model << " at TP" << model.tp << (model.scale < 1 ? " (scaled)" : "") << " on "
            << rep.device << ": " << model.layers << " layers, " << fixed(model.arena_bytes / 1e9, 3)
            << " GB of weights per rank, stream-read " << fixed(rep.stream_read_tbps, 3) << " TB/s, PDL "
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
  std::ostringstream scale;
  scale << std::setprecision(17) << a.scale;
  std::vector<std::string> args = {"skinnygemm", "step", "--model", a.model, "--tp", std::to_string(a.tp), "--m", a.m,
                                   "--scale", scale.str(), "--backend", "cuda", "--samples",
                                   std::to_string(a.samples), "--pdl", "off", "--json", file};
  if (!a.variants.empty()) args.insert(args.end(), {"--variants", a.variants});
  if (a.no_sinks) args.push_back("--no-sinks");
  if (a.check_all) args.push_back("--check-all");
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings{"SKINNYGEMM_PDL=0"};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SKINNYGEMM_PDL=", 15) != 0) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::cerr << "running the no-PDL variants in a child process (SKINNYGEMM_PDL=0)\n";
  std::cout.flush();
  pid_t pid = 0;
  const int err = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data());
  SKINNYGEMM_CHECK(err == 0, "could not start the no-PDL child process: " << std::strerror(err));
  int status = 0;
  SKINNYGEMM_CHECK(waitpid(pid, &status, 0) == pid, "waiting for the no-PDL child failed: " << std::strerror(errno));
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(file);
  SKINNYGEMM_CHECK(in.good(), "the no-PDL child process (exit " << code << ") wrote no results to " << file);
  const ordered_json doc = ordered_json::parse(in);
  std::filesystem::remove(file);
  *tbps = std::max(*tbps, doc.value("stream_read_tbps", 0.0));
  return doc.at("rows");
}

int run_step_command(const StepArgs& a) {
  const Backend backend = resolve_backend(parse_backend(a.backend));
  const bool gpu = backend == Backend::Cuda;
  tune::StepRunOptions o;
  o.model = a.model;
  o.tp = a.tp;
  o.scale = a.scale;
  o.ms = models::parse_m_range(a.m);
  o.backend = backend;
  o.variants = tune::parse_variants(!a.variants.empty() ? a.variants : gpu ? "cublaslt,skinny,skinny_fused" : "skinny,skinny_fused");
  o.samples = a.samples;
  o.sinks = !a.no_sinks;
  o.check_all = a.check_all;
  o.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  const tune::StepModel model = tune::build_step_model(a.model, a.tp, a.scale);

  const char* env = std::getenv("SKINNYGEMM_PDL");
  const bool env_off = env && std::string(env) == "0";
  // Here: the PDL variants (or, with SKINNYGEMM_PDL=0 set, whatever was asked, named _nopdl).
  const bool here = !gpu || a.pdl != "off" || env_off;
  const bool child = gpu && a.pdl != "on" && !env_off;
  if (!gpu) std::cout << "NOTICE: CPU backend: no GPU was used, so no graphs, no PDL, no stream-read floor.\n";
  if (gpu && env_off && a.pdl != "off")
    std::cout << "NOTICE: SKINNYGEMM_PDL=0 is set, so every variant runs without PDL (names end in _nopdl).\n";
  tune::BenchMeta meta = tune::bench_meta(backend);
  ordered_json rows = ordered_json::array();
  int failures = 0;
  bool pdl_here = false;
  if (here) {
    const tune::StepReport rep = tune::run_step(o);
    pdl_here = rep.pdl;
    meta.stream_read_tbps = rep.stream_read_tbps;
    print_report(rep, model);
    for (const tune::StepResult& r : rep.results) {
      rows.push_back(row_json(r, a, model));
      failures += !r.error.empty();
    }
  }
  if (child && (!here || pdl_here)) {  // a device without PDL already ran everything without it
    for (const auto& row : run_nopdl_child(a, &meta.stream_read_tbps)) {
      failures += row.contains("error");
      rows.push_back(row);
    }
  }
  if (!a.json.empty()) {
    meta.revision = git_revision();
    meta.command = command_line();
    meta.date = utc_date();
    const ordered_json doc = {{"meta", {{"gpu", meta.gpu}, {"sms", meta.sms}, {"l2_mib", meta.l2_mib}, {"cuda", meta.cuda},
                                        {"cublaslt", meta.cublaslt}, {"revision", meta.revision},
                                        {"command", meta.command}, {"date", meta.date}}},
                              {"stream_read_tbps", round_to(meta.stream_read_tbps, 0.001)},
                              {"rows", rows}};
    write_file(a.json, doc.dump(1) + "\n");
    std::cerr << "wrote " << a.json << "\n";
  }
  if (failures) std::cout << "FAILED: " << failures << " (variant, M) cases did not pass the output check\n";
  return failures ? kExitMismatch : 0;
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
                  "comma list of cublaslt, skinny, skinny_fused (default: all three on cuda, the skinny ones on cpu)");
  sub->add_option("--scale", a->scale, "(0, 1]: widths x scale (multiples of 8) and fewer layers, for tests")
      ->capture_default_str();
  add_backend_option(sub, &a->backend);
  sub->add_option("--samples", a->samples, "timed samples (median reported; >= 5 on the GPU)")->capture_default_str();
  sub->add_option("--pdl", a->pdl, "both: also run the variants without PDL (in a child process); on; off")
      ->check(CLI::IsMember({"both", "on", "off"}))
      ->capture_default_str();
  sub->add_flag("--no-sinks", a->no_sinks, "skip timing each projection alone");
  sub->add_flag("--check-all", a->check_all, "check every GEMM's output, not a sample of layers");
  sub->add_option("--json", a->json, "write rows of kind \"step\" (shared schema) to FILE");
  return {sub, [a] { return run_step_command(*a); }};
}

}  // namespace skinnygemm::cli
