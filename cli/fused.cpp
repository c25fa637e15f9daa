// `skinnygemm fused`: the fused-projection benchmark (lab/fused_bench.h, docs/fused.md): per fusion of a
// model and per M, FusedProjection::run against the separate gemm calls of the same segments, in one run,
// printed as a table and written as rows of kind "fused" (scripts/fused_md.py renders them as Markdown).
#include <iostream>
#include <memory>
#include <vector>

#include "common.h"
#include "lab/models.h"
#include "lab/fused_bench.h"

namespace skinnygemm::cli {
namespace {

struct FusedArgs {
  std::string model = "kimi_k3", m = "1,2,4,8,16,32,64", fusions, backend = "auto", dtype, table, json;
  int tp = 8;
  double scale = 1.0;
  int samples = 5;
  int replays = 20;
  bool no_baselines = false;
};

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] != ',') {
      item += list[i];
      continue;
    }
    SKINNYGEMM_CHECK(!item.empty(), "--fusions '" << list << "' has an empty item; expected a comma list of the "
                                                  << "model's fusion names (e.g. mla.qkv_a_g,kda.qkvg_fab)");
    out.push_back(item);
    item.clear();
  }
  return out;
}

std::string segments_text(const tune::FusedSpec& spec) {
  std::string out;
  for (const tune::FusedSegmentSpec& s : spec.segments)
    out += (out.empty() ? "" : " + ") + s.name + " " + std::to_string(s.n) +
           (s.padded() != s.n ? " (padded to " + std::to_string(s.padded()) + ")" : "");
  return out;
}

void print_header(bool gpu) {
  std::cout << std::left << std::setw(32) << "fusion" << std::right << std::setw(11) << "NxK" << std::setw(4) << "M"
            << "  " << std::left << std::setw(12) << "rung" << std::right << std::setw(9) << "us" << std::setw(9)
            << "sep_us" << std::setw(7) << "ratio" << std::setw(9) << "contig";
  if (gpu) std::cout << std::setw(9) << "read_us" << std::setw(6) << "eff" << std::setw(9) << "lt_us";
  std::cout << "  configs (fused | separate)\n";
}

void print_row(const tune::FusedRow& r, bool gpu) {
  const std::string shape = std::to_string(r.n) + "x" + std::to_string(r.k);
  std::cout << std::left << std::setw(32) << r.name << std::right << std::setw(11) << shape << std::setw(4) << r.m;
  if (!r.error.empty()) {
    std::cout << "  FAIL " << r.error << std::endl;
    return;
  }
  std::cout << "  " << std::left << std::setw(12) << r.rung << std::right << std::setw(9) << fixed(r.us, 2)
            << std::setw(9) << fixed(r.separate_us, 2) << std::setw(7) << fixed(r.ratio(), 3) << std::setw(9)
            << fixed(r.contiguous_us, 2);
  if (gpu)
    std::cout << std::setw(9) << fixed(r.stream_read_us, 2) << std::setw(6) << fixed(r.efficiency, 2) << std::setw(9)
              << fixed(r.cublaslt_us, 2);
  std::string fused, separate;
  for (const std::string& c : r.configs) fused += (fused.empty() ? "" : "+") + c;
  for (const tune::FusedSegmentResult& s : r.segments) separate += (separate.empty() ? "" : "+") + s.config;
  std::cout << "  " << fused << " | " << separate << std::endl;  // flushed: a long run shows rows as they come
}

int run_fused(const FusedArgs& a) {
  SKINNYGEMM_CHECK(a.samples >= 1, "--samples " << a.samples << " must be >= 1");
  SKINNYGEMM_CHECK(a.replays >= 1, "--replays " << a.replays << " must be >= 1");
  const Backend backend = resolve_backend(parse_backend(a.backend));
  const bool gpu = backend == Backend::Cuda;
  const DType dtype = parse_dtype(!a.dtype.empty() ? a.dtype : models::model_info(a.model).dtype);
  const std::vector<tune::FusedSpec> fusions =
      tune::model_fusions(a.model, a.tp, a.fusions.empty() ? std::vector<std::string>{} : split_names(a.fusions),
                          a.scale, dtype);
  const std::optional<Table> table = load_table_arg(a.table);

  tune::FusedBenchOptions o;
  o.backend = backend;
  o.ms = models::parse_m_range(a.m);
  o.samples = a.samples;
  o.replays = a.replays;
  o.table = table ? &*table : nullptr;
  o.baselines = !a.no_baselines;
  o.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  int failures = 0;
  o.on_row = [&](const tune::FusedRow& r) {
    print_row(r, gpu);
    failures += !r.error.empty();
  };

  tune::BenchMeta meta = tune::bench_meta(backend);
  meta.revision = git_revision();
  meta.command = command_line();
  meta.date = utc_date();
  if (!gpu)
    std::cout << "NOTICE: CPU backend: no GPU was used. Times are the CPU backend's on " << meta.gpu
              << "; the GPU-only columns (stream-read limit, efficiency, cuBLASLt) are not measured.\n";
  std::cout << "fused projections of " << a.model << " at TP" << a.tp << (a.scale < 1 ? " (scaled)" : "") << " on "
            << meta.gpu << " (" << backend_name(backend) << "), " << dtype_name(dtype) << ", samples " << a.samples
            << " x " << a.replays << (gpu ? " graph replays" : " passes") << ", revision " << meta.revision << "\n";
  for (const tune::FusedSpec& f : fusions) std::cout << "  " << f.name << ": " << segments_text(f) << "\n";
  print_header(gpu);
  const std::vector<tune::FusedRow> rows = tune::run_fused_bench(fusions, o);
  if (!a.json.empty()) {
    write_file(a.json, tune::fused_results_json(meta, rows));
    std::cerr << "wrote " << a.json << "\n";
  }
  if (failures)
    std::cout << "FAILED: " << failures << "/" << rows.size()
              << " (fusion, M) points failed their check or could not run (not timed, not written)\n";
  return failures ? kExitMismatch : 0;
}

}  // namespace

Command add_fused(CLI::App& app) {
  auto a = std::make_shared<FusedArgs>();
  CLI::App* sub = app.add_subcommand("fused", "Fused projections (FusedProjection::run) against their separate "
                                              "gemm calls, cuBLASLt and the stream-read limit (docs/fused.md)");
  sub->add_option("--model", a->model, "model file name under models/ (without .json)")->capture_default_str();
  sub->add_option("--tp", a->tp, "tensor-parallel degree (per-rank shapes)")->capture_default_str();
  sub->add_option("--m", a->m, "tokens: 1:64, 1,2,4,8 or 3 (each 1..64)")->capture_default_str();
  sub->add_option("--fusions", a->fusions, "comma list of the model's fusion names (default: all of them)");
  sub->add_option("--scale", a->scale, "(0, 1]: K and segment rows x scale, for tests on the CPU backend")
      ->capture_default_str();
  add_backend_option(sub, &a->backend);
  sub->add_option("--dtype", a->dtype, "bf16 or fp16 (default: the model file's dtype)")
      ->check(CLI::IsMember({"bf16", "fp16"}));
  add_table_option(sub, &a->table);
  sub->add_option("--samples", a->samples, "timed samples per implementation (median reported)")->capture_default_str();
  sub->add_option("--replays", a->replays, "graph replays (GPU) or passes (CPU) per sample")->capture_default_str();
  sub->add_flag("--no-baselines", a->no_baselines, "skip cuBLASLt and the stream-read limit (GPU)");
  sub->add_option("--json", a->json, "write rows of kind \"fused\" (shared schema) to FILE");
  return {sub, [a] { return run_fused(*a); }};
}

}  // namespace skinnygemm::cli
