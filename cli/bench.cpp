// `skinnygemm bench`: the project's measurement protocol (lab/bench.h) over (shape, M), printed
// as a table and written in the shared result schema. Every number is measured in this one process.
#include <fnmatch.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <vector>

#include "common.h"
#include "lab/models.h"
#include "lab/bench.h"

namespace skinnygemm::cli {
namespace {

struct BenchArgs {
  std::string backend = "auto", shapes, m, dtype = "bf16", config, table, json, csv, sweep;
  int samples = 5;
  int replays = 20;
  bool no_baselines = false;
};

void print_header(bool gpu) {
  std::cout << std::left << std::setw(31) << "name" << std::right << std::setw(12) << "NxK" << std::setw(4) << "M"
            << "  " << std::left << std::setw(24) << "config" << std::setw(10) << "source" << std::right
            << std::setw(9) << "us" << std::setw(7) << (gpu ? "TB/s" : "GB/s");  // a CPU's 13 GB/s, not 0.0130 TB/s
  if (gpu)
    std::cout << std::setw(9) << "read_us" << std::setw(6) << "eff" << std::setw(9) << "lt_us" << std::setw(9)
              << "best_us" << std::setw(7) << "x_lt" << std::setw(7) << "x_best" << std::setw(9) << "torch_us"
              << std::setw(9) << "chain_us" << std::setw(7) << "/chain";
  std::cout << "\n";
}

void print_row(const tune::BenchRow& r, bool gpu) {
  const std::string shape = std::to_string(r.problem.n) + "x" + std::to_string(r.problem.k);
  std::cout << std::left << std::setw(31) << (r.name.empty() ? "-" : r.name) << std::right << std::setw(12) << shape
            << std::setw(4) << r.problem.m << "  " << std::left << std::setw(24) << r.config << std::setw(10)
            << r.source << std::right << std::setw(9) << fixed(r.us, 2) << std::setw(7)
            << (gpu ? fixed(r.tbps, 3) : fixed(r.tbps * 1000, r.tbps < 0.001 ? 3 : 1));
  if (gpu)
    std::cout << std::setw(9) << fixed(r.stream_read_us, 2) << std::setw(6) << fixed(r.efficiency, 2)
              << std::setw(9) << fixed(r.cublaslt_us, 2) << std::setw(9) << fixed(r.cublaslt_best_us, 2)
              << std::setw(7) << fixed(r.speedup, 2) << std::setw(7) << fixed(r.speedup_best, 2) << std::setw(9)
              << fixed(r.cublaslt_torch_us, 2) << std::setw(9) << fixed(r.chain_us, 2) << std::setw(7)
              << fixed(r.chain_us > 0 ? r.us / r.chain_us : 0.0, 2);
  std::cout << std::endl;  // flushed: a long run shows its rows as they come
}

// Listed configs whose name matches the glob and that can run p on the backend's device.
std::vector<Config> sweep_configs(const std::string& glob, const Problem& p, Backend backend) {
  std::vector<Config> out;
  if (glob.empty()) return out;
  const DeviceInfo dev = device_info(backend);
  for (const Config& c : all_listed_configs())
    if (fnmatch(glob.c_str(), c.name().c_str(), 0) == 0 && supports(c, p, dev, 16)) out.push_back(c);
  return out;
}

// A --sweep glob must name at least one listed config of the backend: one that names none would sweep nothing
// and print the same table as no --sweep at all.
void check_sweep_glob(const std::string& glob, Backend backend) {
  if (glob.empty()) return;
  std::string names;
  for (const Config& c : all_listed_configs()) {
    if ((c.family == Family::Cpu) != (backend == Backend::Cpu)) continue;
    if (fnmatch(glob.c_str(), c.name().c_str(), 0) == 0) return;
    if (names.size() < 200) names += (names.empty() ? "" : ", ") + c.name();
  }
  SKINNYGEMM_FAIL("--sweep '" << glob << "' matches no config of the " << backend_name(backend)
                              << " backend; expected a glob over names such as " << names << " ...");
}

int run_bench(const BenchArgs& args) {
  SKINNYGEMM_CHECK(args.samples >= 1, "--samples " << args.samples << " must be >= 1");
  SKINNYGEMM_CHECK(args.replays >= 1, "--replays " << args.replays << " must be >= 1");
  const Backend backend = resolve_backend(parse_backend(args.backend));
  const bool gpu = backend == Backend::Cuda;
  const auto shapes = models::parse_shapes(args.shapes);
  const auto ms = models::parse_m_range(args.m);
  const DType dtype = parse_dtype(args.dtype);
  check_config_arg(args.config, backend);
  check_sweep_glob(args.sweep, backend);
  const std::optional<Table> table = load_table_arg(args.table);
  if (!args.json.empty()) check_writable(args.json, "--json");
  if (!args.csv.empty()) check_writable(args.csv, "--csv");

  tune::BenchOptions options;
  options.backend = backend;
  options.table = table ? &*table : nullptr;
  options.config = args.config;
  options.samples = args.samples;
  options.replays = args.replays;
  options.baselines = !args.no_baselines;
  options.check = true;
  // SKINNYGEMM_STEP_ABLATE (the lab's ablation, as in `step`'s timing graphs): `bench` times its config with those bits
  // (bits 1-16 give wrong results; the check runs first without them); `tune` never does, as its times become table entries.
  if (const char* bits = std::getenv("SKINNYGEMM_STEP_ABLATE"); bits && *bits && std::atoi(bits) != 0) {
    options.lab_ablate = std::atoi(bits);
    std::cerr << "bench: SKINNYGEMM_STEP_ABLATE=" << bits
              << ": the configs' times are the lab's ablation (bits 1-16 give wrong results)\n";
  }

  // Every problem is checked against the memory there is before the first one is measured: a shape too large
  // fails now, with the bytes, not after the others (or as std::bad_alloc).
  for (const auto& shape : shapes)
    for (const int64_t m : ms) tune::check_bench_fits(Problem{m, shape.n, shape.k, dtype}, options);

  tune::BenchMeta meta = tune::bench_meta(backend);
  meta.revision = git_revision();
  meta.command = command_line();
  meta.date = utc_date();

  if (!gpu)
    std::cout << "NOTICE: CPU backend: no GPU was used. Times are the CPU backend's on " << meta.gpu
              << "; the GPU-only columns (stream-read limit, efficiency, cuBLASLt) are not measured.\n";
  std::cout << "bench on " << meta.gpu << " (" << backend_name(backend) << "), " << dtype_name(dtype)
            << ", samples " << args.samples << " x " << args.replays << (gpu ? " graph replays" : " calls")
            << ", revision " << meta.revision << "\n";
  print_header(gpu);

  const size_t total = shapes.size() * ms.size();
  size_t index = 0, failures = 0;
  std::vector<tune::BenchRow> rows;
  for (const auto& shape : shapes) {
    for (const int64_t m : ms) {
      ++index;
      std::cerr << "[" << index << "/" << total << "] " << shape.shape() << " m=" << m << " ..." << std::endl;
      Problem p;
      p.m = m;
      p.n = shape.n;
      p.k = shape.k;
      p.dtype = dtype;
      // The selected (or forced) config with baselines, then every --sweep config alone.
      std::vector<tune::BenchOptions> runs{options};
      for (const Config& c : sweep_configs(args.sweep, p, backend)) {
        tune::BenchOptions forced = options;
        forced.config = c.name();
        forced.baselines = false;
        runs.push_back(forced);
      }
      for (const tune::BenchOptions& run : runs) {
        try {
          tune::BenchRow row = tune::bench_problem(p, run);
          row.name = shape.name;
          print_row(row, gpu);
          rows.push_back(std::move(row));
        } catch (const Error& e) {  // a wrong kernel has no speed: report it, keep measuring the rest
          ++failures;
          std::cout << "FAIL " << (shape.name.empty() ? "" : shape.name + " ") << p.str() << " "
                    << run.config << ": " << e.what() << std::endl;
        }
      }
    }
  }
  if (!args.json.empty()) {
    write_file(args.json, tune::results_json(meta, rows));
    std::cerr << "wrote " << args.json << "\n";
  }
  if (!args.csv.empty()) {
    write_file(args.csv, tune::results_csv(rows));
    std::cerr << "wrote " << args.csv << "\n";
  }
  if (failures) std::cout << "FAILED: " << failures << "/" << total << " cases did not pass the output check\n";
  return failures ? kExitMismatch : 0;
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* sub = app.add_subcommand("bench", "Measure problems against the stream-read limit and cuBLASLt "
                                              "(protocol: lab/bench.h)");
  add_backend_option(sub, &args->backend);
  add_problem_options(sub, &args->shapes, &args->m, &args->dtype, &args->config);
  add_table_option(sub, &args->table);
  sub->add_option("--samples", args->samples, "timed samples per case (median reported)")->capture_default_str();
  sub->add_option("--replays", args->replays, "graph replays (GPU) or calls (CPU) per sample")->capture_default_str();
  sub->add_flag("--no-baselines", args->no_baselines, "skip cuBLASLt and the stream-read limit (GPU)");
  sub->add_option("--sweep", args->sweep,
                  "also time every listed config matching this glob (e.g. 'tma_m8_r64_*'), without baselines");
  sub->add_option("--json", args->json, "write the results (shared schema) to FILE");
  sub->add_option("--csv", args->csv, "write the results as CSV to FILE");
  return {sub, [args] { return run_bench(*args); }};
}

}  // namespace skinnygemm::cli
