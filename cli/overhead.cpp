// `skinnygemm overhead [--backend cpu|cuda] [--json FILE] [--samples N] [--calls N]`: host time per call of gemm() on
// a plan-cache hit, of a Plan's run and of FusedProjection::run, with the backend's own work taken out (lab/overhead.h
// says how, for the CPU backend and for real launches on the GPU); docs/benchmarks/cpu/host_overhead.md.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "common.h"
#include "lab/overhead.h"

namespace skinnygemm::cli {
namespace {

struct OverheadArgs {
  std::string json, backend = "cpu";
  tune::OverheadOptions options;
};

int run_overhead(const OverheadArgs& args) {
  const Backend backend = parse_backend(args.backend);
  const std::vector<tune::OverheadRow> rows = backend == Backend::Cuda ? tune::measure_host_overhead_cuda(args.options)
                                                                       : tune::measure_host_overhead(args.options);
  std::cout << "path               total us   launch us   host us   best host us   target    problem\n";
  bool within = true;
  nlohmann::json out = {{"meta",
                         {{"command", command_line()}, {"revision", git_revision()}, {"date", utc_date()},
                          {"backend", args.backend}, {"device", device_info(backend).signature()},
                          {"samples", args.options.samples},
                          {"calls_per_sample", backend == Backend::Cuda
                                                   ? std::min(args.options.calls, tune::kGpuOverheadMaxCalls)
                                                   : args.options.calls}}},
                        {"rows", nlohmann::json::array()}};
  for (const tune::OverheadRow& r : rows) {
    const bool ok = r.target_us == 0 || r.best_host_us <= r.target_us;
    within = within && ok;
    std::printf("%-17s %9.3f %11.3f %9.3f %14.3f   %-8s  %s\n", r.path.c_str(), r.total_us, r.launch_us, r.host_us,
                r.best_host_us,
                r.target_us > 0 ? (fixed(r.target_us, 1) + (ok ? " ok" : " OVER")).c_str() : "-", r.problem.c_str());
    out["rows"].push_back({{"path", r.path}, {"problem", r.problem}, {"total_us", r.total_us},
                           {"launch_us", r.launch_us}, {"host_us", r.host_us}, {"best_host_us", r.best_host_us}, {"spread", r.spread},
                           {"target_us", r.target_us}});
  }
  if (!args.json.empty()) {
    write_file(args.json, out.dump(1) + "\n");
    std::cerr << "wrote " << args.json << "\n";
  }
  return within ? 0 : kExitMismatch;
}

}  // namespace

Command add_overhead(CLI::App& app) {
  auto args = std::make_shared<OverheadArgs>();
  CLI::App* sub = app.add_subcommand(
      "overhead", "host time per call of gemm() (plan-cache hit), Plan::run and FusedProjection::run (CPU backend, or "
                  "real GPU launches), the backend's own work taken out; exit 1 when a path is over its target");
  sub->add_option("--backend", args->backend,
                  "cpu, or cuda: the same paths ending in real launches, in a graph-free loop, against an empty "
                  "kernel's launch")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--json", args->json, "write the rows to FILE");
  sub->add_option("--samples", args->options.samples, "samples (median reported)")->check(CLI::PositiveNumber);
  sub->add_option("--calls", args->options.calls, "calls per sample")->check(CLI::PositiveNumber);
  return {sub, [args] { return run_overhead(*args); }};
}

}  // namespace skinnygemm::cli
