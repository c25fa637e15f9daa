// `skinnygemm tune`: measure every candidate config per (shape, M) and merge the winners into a table
// (src/tune/tuner.h, docs/tuning.md). Progress goes to stderr, one line per point; the summary to stdout.
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "core/models.h"
#include "tune/tuner.h"

namespace skinnygemm::cli {
namespace {

struct TuneArgs {
  std::string backend = "auto", shapes, m, dtype = "bf16", table, candidates, json;
  int samples = 5;
  int replays = 20;
  double margin = 0.03;
  bool force = false;
};

std::string point_text(const tune::TuneEvent& ev) {
  std::ostringstream os;
  os << "[" << ev.index << "/" << ev.total << "] " << ev.problem.n << "x" << ev.problem.k << " m=" << ev.problem.m;
  return os.str();
}

void print_event(const tune::TuneEvent& ev) {
  using Kind = tune::TuneEvent::Kind;
  switch (ev.kind) {
    case Kind::Measuring:
      std::cerr << point_text(ev) << ": " << ev.candidates << " candidates ..." << std::flush;
      break;
    case Kind::Skipped:
      std::cerr << point_text(ev) << ": in the table (" << ev.message << "), skipped\n";
      break;
    case Kind::Failed:
      std::cerr << " FAILED: " << ev.message << "\n";
      break;
    case Kind::Stored: {
      const tune::TuneResult& r = *ev.result;
      // The fastest kernel (not cuBLASLt) is what the reader wants to see against cuBLASLt.
      const tune::BenchRow* best = nullptr;
      for (const tune::BenchRow& row : r.rows)
        if (Config::parse(row.config).family != Family::Cublaslt && (!best || row.us < best->us)) best = &row;
      if (!best) best = &r.rows[r.stored];
      std::cerr << " best " << best->config << " " << fixed(best->us, 2) << " us";
      if (r.entry.cublaslt_us > 0) std::cerr << " (cuBLASLt " << fixed(r.entry.cublaslt_us, 2) << " us)";
      std::cerr << " -> stored";
      if (r.entry.config.name() != best->config) std::cerr << " " << r.entry.config.name() << " (" << r.reason << ")";
      if (!r.rejected.empty()) std::cerr << "; " << r.rejected.size() << " rejected";
      std::cerr << "\n";
      break;
    }
  }
}

// The shared result schema plus, per row, whether it was stored, and the rejected candidates per point.
std::string tune_json(const tune::BenchMeta& meta, const tune::TuneSummary& s) {
  std::vector<tune::BenchRow> rows;
  std::vector<bool> stored;
  for (const tune::TuneResult& r : s.results)
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      rows.push_back(r.rows[i]);
      stored.push_back(i == r.stored);
    }
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(tune::results_json(meta, rows));
  for (std::size_t i = 0; i < stored.size(); ++i) j["rows"][i]["stored"] = static_cast<bool>(stored[i]);
  j["table"] = s.table_path;
  j["rejected"] = nlohmann::ordered_json::array();
  for (const tune::TuneResult& r : s.results)
    for (const tune::Rejected& x : r.rejected)
      j["rejected"].push_back({{"dtype", dtype_name(r.problem.dtype)}, {"n", r.problem.n}, {"k", r.problem.k},
                               {"m", r.problem.m}, {"config", x.config}, {"reason", x.reason}});
  return j.dump(1) + "\n";
}

int run_tune(const TuneArgs& args) {
  const Backend backend = resolve_backend(parse_backend(args.backend));
  const DeviceInfo dev = device_info(backend);
  const auto shapes = models::parse_shapes(args.shapes);
  const auto ms = models::parse_m_range(args.m);
  const DType dtype = parse_dtype(args.dtype);
  std::string path = args.table;
  if (path.empty()) {  // the shipped location, which selection reads by default; git keeps no empty tables/
    const std::filesystem::path dir = std::filesystem::path(data_dir()) / "tables";
    std::filesystem::create_directories(dir);
    path = (dir / tune::table_file_name(dev)).string();
  }

  tune::TuneOptions options;
  options.backend = backend;
  options.candidates = args.candidates;
  options.samples = args.samples;
  options.replays = args.replays;
  options.margin = args.margin;
  options.force = args.force;
  options.progress = print_event;

  tune::BenchMeta meta = tune::bench_meta(backend);
  meta.revision = git_revision();
  meta.command = command_line();
  meta.date = utc_date();
  if (backend == Backend::Cpu)
    std::cout << "NOTICE: CPU backend: no GPU was used; the table is for " << dev.signature()
              << " and the fastest cpu config is stored (no cuBLASLt margin).\n";
  std::ostringstream margin;
  margin << ", margin " << args.margin * 100 << "%";
  std::cout << "tune on " << dev.signature() << " (" << backend_name(backend) << "), " << dtype_name(dtype) << ", "
            << shapes.size() * ms.size() << " points, samples " << args.samples << " x " << args.replays
            << (backend == Backend::Cpu ? "" : margin.str())
            << (args.force ? ", force" : "") << "\ntable " << path << std::endl;

  const tune::TuneSummary s = tune::tune_into_table(shapes, ms, dtype, options, path);

  std::size_t kernels = 0, rejected = 0;
  for (const tune::TuneResult& r : s.results) {
    kernels += r.entry.config.family != Family::Cublaslt;
    rejected += r.rejected.size();
  }
  std::cout << "tuned " << s.tuned << ", skipped " << s.skipped << " (already in the table), failed " << s.failed
            << " of " << s.points << " points";
  if (backend != Backend::Cpu) std::cout << "; stored " << kernels << " kernels, " << s.tuned - kernels << " cuBLASLt";
  std::cout << "; " << rejected << " candidates rejected\n";
  for (const std::string& f : s.failures) std::cout << "FAILED " << f << "\n";
  std::cout << "table " << path << "\n";
  if (!args.json.empty()) {
    write_file(args.json, tune_json(meta, s));
    std::cerr << "wrote " << args.json << "\n";
  }
  return s.failed ? kExitMismatch : 0;
}

}  // namespace

Command add_tune(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* sub = app.add_subcommand("tune", "Measure every candidate config per (shape, M) and merge the winners "
                                             "into a table (docs/tuning.md)");
  add_backend_option(sub, &args->backend);
  sub->add_option("--shapes", args->shapes, "comma list of NxK and model:<name>:tp<N>[:fusions] items")->required();
  sub->add_option("--m", args->m, "tokens: 1:64, 1:64:2, 1,2,4,8 or 3")->required();
  sub->add_option("--dtype", args->dtype, "bf16 or fp16")->check(CLI::IsMember({"bf16", "fp16"}))->capture_default_str();
  sub->add_option("--table", args->table, "table file to merge into (default: <data dir>/tables/<device>.json)");
  sub->add_option("--candidates", args->candidates,
                  "comma list of config-name globs (default: every config of the backend; cuBLASLt always on a GPU)");
  sub->add_option("--samples", args->samples, "timed samples per candidate (median used)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--replays", args->replays, "graph replays (GPU) or calls (CPU) per sample")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--margin", args->margin, "GPU: a kernel is stored only if this much faster than cuBLASLt")
      ->check(CLI::Range(0.0, 0.99))->capture_default_str();
  sub->add_flag("--force", args->force, "re-measure points the table already has");
  sub->add_option("--json", args->json, "write every candidate's row (shared result schema) to FILE");
  return {sub, [args] { return run_tune(*args); }};
}

}  // namespace skinnygemm::cli
