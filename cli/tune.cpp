// `skinnygemm tune`: measure every candidate config per (shape, M) and merge the winners into a table
// (lab/tuner.h, docs/tuning.md). Progress goes to stderr, one line per point; the summary to stdout.
// --near-heuristic (or the quick tune's --moves) and --refine make the table a refinement of the heuristic (issue 18).
// --heuristic-report with --no-store is the held-out evaluation of the heuristic (issue 4).
// --migrate-cublaslt-names measures nothing: it renames a table's positional cuBLASLt entries by identity.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "common.h"
#include "lab/json_round.h"
#include "lab/models.h"
#include "lab/bench.h"
#include "lab/tuner.h"

namespace skinnygemm::cli {
namespace {

struct TuneArgs {
  std::string backend = "auto", shapes, m, dtype = "bf16", table, candidates, json, heuristic_report;
  int samples = 5;
  int replays = 20;
  double margin = 0.03;
  std::optional<int> near_heuristic;
  std::optional<int> moves;
  bool refine = false;
  bool force = false;
  bool no_store = false;
  bool migrate_cublaslt_names = false;
};

// Where tune writes without --table: the shipped location, which selection reads by default.
std::string default_table_path(const DeviceInfo& dev) {
  return (std::filesystem::path(data_dir()) / "tables" / tune::table_file_name(dev)).string();
}

std::string point_text(const tune::TuneEvent& ev) {
  std::ostringstream os;
  os << "[" << ev.index << "/" << ev.total << "] " << ev.problem.n << "x" << ev.problem.k << " m=" << ev.problem.m;
  return os.str();
}

// "3.2%"; a loss of 0 is a result here, not "not measured" as fixed() would print it.
std::string percent(double fraction, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << fraction * 100 << "%";
  return os.str();
}

// store: whether the run writes the table (a kept point's marker is stored, or would be).
void print_event(const tune::TuneEvent& ev, bool store) {
  using Kind = tune::TuneEvent::Kind;
  switch (ev.kind) {
    case Kind::Measuring:
      std::cerr << point_text(ev) << ": " << ev.candidates << " candidates ..." << std::flush;
      break;
    case Kind::Skipped:
      std::cerr << point_text(ev) << ": " << ev.message << ", skipped\n";
      break;
    case Kind::Failed:
      std::cerr << " FAILED: " << ev.message << "\n";
      break;
    case Kind::Stored:
    case Kind::Measured:
    case Kind::Kept: {
      const tune::TuneResult& r = *ev.result;
      // The fastest kernel (not cuBLASLt) is what the reader wants to see against cuBLASLt.
      const tune::BenchRow* best = nullptr;
      for (const tune::BenchRow& row : r.rows)
        if (Config::parse(row.config).family != Family::Cublaslt && (!best || row.us < best->us)) best = &row;
      if (!best) best = &r.rows[r.stored];
      std::cerr << " best " << best->config << " " << fixed(best->us, 2) << " us";
      if (r.entry.cublaslt_us > 0) std::cerr << " (cuBLASLt " << fixed(r.entry.cublaslt_us, 2) << " us)";
      if (ev.kind == Kind::Kept) {
        // r.reason: "heuristic kept: <why>"
        std::cerr << (store ? " -> stored" : " -> would store") << " a heuristic marker (" << r.reason;
        if (!ev.message.empty()) std::cerr << "; " << ev.message;
        std::cerr << ")";
      } else {
        std::cerr << (ev.kind == Kind::Stored ? " -> stored" : " -> would store");
        if (r.entry.config.name() != best->config) std::cerr << " " << r.entry.config.name() << " (" << r.reason << ")";
      }
      if (!r.rejected.empty()) std::cerr << "; " << r.rejected.size() << " rejected";
      std::cerr << "; heuristic " << r.heuristic.choice.config.name();
      if (r.heuristic.error.empty())  // the loss of this one point, as the report computes it
        std::cerr << " +" << percent(tune::summarize_heuristic({r}).worst_loss, 1);
      else
        std::cerr << " FAILED (" << r.heuristic.error << ")";
      std::cerr << "\n";
      break;
    }
  }
}

// The shared result schema plus, per row, whether it was stored, the rejected candidates per point, and the points
// where refine kept the heuristic (a heuristic marker in the table, which names no row).
std::string tune_json(const tune::BenchMeta& meta, const tune::TuneSummary& s) {
  std::vector<tune::BenchRow> rows;
  std::vector<bool> stored;
  std::vector<std::string> stored_as;  // the entry's name where it is not the row's (a cuBLASLt position's identity)
  for (const tune::TuneResult& r : s.results)
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      rows.push_back(r.rows[i]);
      stored.push_back(i == r.stored && !r.heuristic_kept);
      const std::string entry = r.entry.config.name();
      stored_as.push_back(i == r.stored && entry != r.rows[i].config ? entry : "");
    }
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(tune::results_json(meta, rows));
  const bool any_table = !s.table_path.empty();  // --no-store: nothing was stored
  for (std::size_t i = 0; i < stored.size(); ++i) {
    j["rows"][i]["stored"] = any_table && stored[i];
    if (any_table && !stored_as[i].empty()) j["rows"][i]["stored_as"] = stored_as[i];
  }
  j["table"] = any_table ? nlohmann::ordered_json(s.table_path) : nlohmann::ordered_json();
  j["rejected"] = nlohmann::ordered_json::array();
  j["heuristic_kept"] = nlohmann::ordered_json::array();
  for (const tune::TuneResult& r : s.results) {
    for (const tune::Rejected& x : r.rejected)
      j["rejected"].push_back({{"dtype", dtype_name(r.problem.dtype)}, {"n", r.problem.n}, {"k", r.problem.k},
                               {"m", r.problem.m}, {"config", x.config}, {"reason", x.reason}});
    if (r.heuristic_kept)
      j["heuristic_kept"].push_back({{"dtype", dtype_name(r.problem.dtype)}, {"n", r.problem.n}, {"k", r.problem.k},
                                     {"m", r.problem.m}, {"config", r.heuristic.choice.config.name()},
                                     {"us", json_round(r.heuristic.row.us)}});
  }
  return j.dump(1) + "\n";
}

// Temp file then rename: a run killed while writing keeps the report of the previous point.
void write_atomically(const std::string& path, const std::string& text) {
  write_file(path + ".tmp", text);
  std::filesystem::rename(path + ".tmp", path);
}

int run_migrate(const TuneArgs& args) {
  const Backend backend = resolve_backend(parse_backend(args.backend));
  SKINNYGEMM_CHECK(backend == Backend::Cuda,
                   "--migrate-cublaslt-names asks cuBLASLt on the table's GPU, but this run has the "
                       << backend_name(backend) << " backend; run it with --backend cuda on that GPU");
  const DeviceInfo dev = device_info(backend);
  const std::string path = args.table.empty() ? default_table_path(dev) : args.table;
  const tune::MigrationSummary s = tune::migrate_cublaslt_names(path, dev, {});
  std::cout << "table " << path << ": " << s.entries << " entries, " << s.positional
            << " naming a cuBLASLt algorithm by position: migrated " << s.migrated << ", failed " << s.failures.size()
            << "; " << s.entries - s.positional << " other entries untouched\n";
  for (const std::string& f : s.failures) std::cout << "FAILED " << f << "\n";
  return s.failures.empty() ? 0 : kExitMismatch;
}

int run_tune(const TuneArgs& args) {
  SKINNYGEMM_CHECK(!args.shapes.empty() && !args.m.empty(),
                   "tune needs --shapes and --m (unless --migrate-cublaslt-names)");
  SKINNYGEMM_CHECK(!args.near_heuristic || *args.near_heuristic >= 0,
                   "--near-heuristic " << *args.near_heuristic << ": expected a number of name tokens >= 0");
  SKINNYGEMM_CHECK(!args.moves || *args.moves >= 1,
                   "--moves " << *args.moves << ": expected the number of configs to time per point, >= 1");
  const Backend backend = resolve_backend(parse_backend(args.backend));
  const DeviceInfo dev = device_info(backend);
  const auto shapes = models::parse_shapes(args.shapes);
  const auto ms = models::parse_m_range(args.m);
  const DType dtype = parse_dtype(args.dtype);
  if (!args.json.empty()) check_writable(args.json, "--json");  // before the first of many measured points
  if (!args.heuristic_report.empty()) check_writable(args.heuristic_report, "--heuristic-report");
  const std::filesystem::path report_dir = std::filesystem::path(args.heuristic_report).parent_path();
  SKINNYGEMM_CHECK(report_dir.empty() || std::filesystem::is_directory(report_dir),
                   "--heuristic-report folder '" << report_dir.string() << "' does not exist; create it first");
  // Every point against the memory there is, before the first is measured (a shape too large would otherwise
  // fail each of its points, with the bytes, only when the run gets there).
  {
    tune::BenchOptions fits;
    fits.backend = backend;
    fits.check = true;
    for (const auto& shape : shapes)
      for (const int64_t m : ms) tune::check_bench_fits(Problem{m, shape.n, shape.k, dtype}, fits);
  }
  std::string path = args.table;
  if (path.empty() && !args.no_store) {
    path = default_table_path(dev);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());  // git keeps no empty tables/
  }

  tune::TuneOptions options;
  options.backend = backend;
  options.candidates = args.candidates;
  options.samples = args.samples;
  options.replays = args.replays;
  options.margin = args.margin;
  options.near_heuristic = args.near_heuristic;
  options.moves = args.moves;
  options.refine = args.refine;
  options.torch_baseline = !args.heuristic_report.empty();  // the report compares with both cuBLASLt configurations
  options.force = args.force;
  options.store = !args.no_store;

  tune::BenchMeta meta = tune::bench_meta(backend);
  meta.revision = git_revision();
  meta.command = command_line();
  meta.date = utc_date();
  // The report is rewritten after every point: a run cut short (a time limit on the GPU machine) still leaves
  // a valid report of the points it measured.
  std::vector<tune::TuneResult> measured;
  options.progress = [&](const tune::TuneEvent& ev) {
    print_event(ev, !args.no_store);
    if (ev.result && !args.heuristic_report.empty()) {
      measured.push_back(*ev.result);
      write_atomically(args.heuristic_report, tune::heuristic_report_json(meta, measured));
    }
  };
  if (backend == Backend::Cpu)
    std::cout << "NOTICE: CPU backend: no GPU was used; the table is for " << dev.signature()
              << " and the fastest cpu config is " << (args.no_store ? "picked" : "stored")
              << (args.refine ? " where it beats the heuristic's pick by the margin" : "")
              << " (no cuBLASLt margin).\n";
  std::ostringstream margin;
  if (backend != Backend::Cpu || args.refine) margin << ", margin " << args.margin * 100 << "%";
  if (args.near_heuristic)
    margin << ", candidates within " << *args.near_heuristic << " name tokens of the heuristic's pick";
  if (args.moves) margin << ", the heuristic's pick and its first " << *args.moves - 1 << " moves (quick tune)";
  if (args.refine) margin << ", refine (entries only where they beat the heuristic)";
  std::cout << "tune on " << dev.signature() << " (" << backend_name(backend) << "), " << dtype_name(dtype) << ", "
            << shapes.size() * ms.size() << " points, samples " << args.samples << " x " << args.replays
            << margin.str() << (args.force ? ", force" : "") << "\ntable "
            << (args.no_store ? "none (--no-store)" : path) << std::endl;

  const tune::TuneSummary s = tune::tune_into_table(shapes, ms, dtype, options, path);

  const tune::EntrySummary entries = tune::summarize_entries(s.results);
  std::size_t kernels = 0, rejected = 0;
  for (const tune::TuneResult& r : s.results) {
    kernels += !r.heuristic_kept && r.entry.config.family != Family::Cublaslt;
    rejected += r.rejected.size();
  }
  if (args.no_store)
    std::cout << "measured " << s.tuned << ", failed " << s.failed << " of " << s.points << " points";
  else
    std::cout << "tuned " << s.tuned << ", skipped " << s.skipped << " (already in the table), failed " << s.failed
              << " of " << s.points << " points";
  if (backend != Backend::Cpu)
    std::cout << "; " << (args.no_store ? "would store " : "stored ") << kernels << " kernels, "
              << entries.entries - kernels << " cuBLASLt";
  std::cout << "; " << rejected << " candidates rejected\n";
  // What the table gains over the heuristic alone: the case for each entry it ships.
  std::cout << "entries over the heuristic: " << entries.entries << " of " << s.tuned << " tuned points "
            << (args.no_store ? "would get one" : "got one") << ", the heuristic kept at " << entries.heuristic_kept;
  if (entries.gain_points)
    std::cout << "; gain (heuristic us / entry us) geomean " << fixed(entries.gain_geomean, 3) << "x, max "
              << fixed(entries.gain_max, 3) << "x (" << entries.gain_max_point << ") over the " << entries.gain_points
              << " entries whose heuristic pick has a time";
  std::cout << "\n";
  for (const std::string& f : s.failures) std::cout << "FAILED " << f << "\n";
  std::cout << "table " << (args.no_store ? "none: nothing stored (--no-store)" : path) << "\n";
  if (!args.heuristic_report.empty()) {
    write_atomically(args.heuristic_report, tune::heuristic_report_json(meta, s.results));
    const tune::HeuristicSummary h = tune::summarize_heuristic(s.results);
    std::cout << "heuristic over " << h.points << " points: median loss " << percent(h.median_loss, 2) << ", worst "
              << percent(h.worst_loss, 2) << " (" << h.worst_point << ")";
    if (h.cublaslt_points)
      std::cout << "; slower than cuBLASLt's default at " << h.slower_than_cublaslt << " of " << h.cublaslt_points
                << " points, over 3% slower than the faster of it and cublaslt_torch at " << h.over_faster_cublaslt
                << " (worst " << fixed(h.worst_vs_faster_cublaslt, 3) << "x, " << h.worst_vs_faster_cublaslt_point << ")";
    if (h.failed) std::cout << "; its pick FAILED its check at " << h.failed << " points";
    std::cout << "\nwrote " << args.heuristic_report << "\n";
  }
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
  // Both required unless --migrate-cublaslt-names (run_tune checks): CLI11 has no conditional requirement.
  sub->add_option("--shapes", args->shapes, "comma list of NxK and model:<name>:tp<N>[:fusions] items (required)");
  sub->add_option("--m", args->m, "tokens: 1:64, 1:64:2, 1,2,4,8 or 3 (required)");
  sub->add_option("--dtype", args->dtype, "bf16 or fp16")->check(CLI::IsMember({"bf16", "fp16"}))->capture_default_str();
  CLI::Option* table =
      sub->add_option("--table", args->table, "table file to merge into (default: <data dir>/tables/<device>.json)");
  sub->add_option("--candidates", args->candidates,
                  "comma list of config-name globs of listed configs (default: every config of the backend; "
                  "cuBLASLt always on a GPU; cublaslt* for cuBLASLt alone; where kernels are named, the heuristic's "
                  "kernel pick is measured as well and can be the entry)");
  sub->add_option("--samples", args->samples, "timed samples per candidate (median used)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--replays", args->replays, "graph replays (GPU) or calls (CPU) per sample")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--margin", args->margin,
                  "GPU: a kernel is stored only if this much faster than cuBLASLt; --refine: an entry only if this "
                  "much faster than the heuristic's pick")
      ->check(CLI::Range(0.0, 0.99))->capture_default_str();
  sub->add_option("--near-heuristic", args->near_heuristic,
                  "measure per point only the heuristic's pick, the configs of its family and token tile within D "
                  "name tokens of it (and matching --candidates), and cuBLASLt (default: off, every candidate)")
      ->type_name("D");
  CLI::Option* moves = sub->add_option(
      "--moves", args->moves,
      "the quick tune: measure per point the heuristic's pick, the first K - 1 configs of the move list ranked for its "
      "kind of pick (docs/tuning.md, \"Session 43\"; 8 put 96-97% of held-out points within 5% of the best of ~35) and "
      "cuBLASLt's default");
  moves->type_name("K")->excludes(sub->get_option("--near-heuristic"));
  sub->add_flag("--refine", args->refine,
                "store an entry only where the winner beats the heuristic's pick by --margin in every sample; "
                "elsewhere the heuristic stays (no entry)");
  sub->add_flag("--force", args->force, "re-measure points the table already has");
  CLI::Option* no_store = sub->add_flag("--no-store", args->no_store,
                                        "measure only: read and write no table (held-out shapes must stay out of it)");
  sub->add_option("--heuristic-report", args->heuristic_report,
                  "write the heuristic's pick vs the best measured config per point (rows of kind \"heuristic\") "
                  "to FILE");
  sub->add_option("--json", args->json, "write every candidate's row (shared result schema) to FILE");
  no_store->excludes(table);  // a table that is never written would only mislead
  CLI::Option* migrate = sub->add_flag(
      "--migrate-cublaslt-names", args->migrate_cublaslt_names,
      "measure nothing: rewrite the table's cublaslt_a<i> entries as the identities of the algorithms cuBLASLt lists "
      "at those positions (on the table's GPU, under the cuBLASLt version it records)");
  for (const char* measuring : {"--shapes", "--m", "--dtype", "--candidates", "--samples", "--replays", "--margin",
                                "--near-heuristic", "--moves", "--refine", "--force", "--no-store", "--heuristic-report",
                                "--json"})
    migrate->excludes(sub->get_option(measuring));
  return {sub, [args] { return args->migrate_cublaslt_names ? run_migrate(*args) : run_tune(*args); }};
}

}  // namespace skinnygemm::cli
