// `skinnygemm step --search-table FILE`: configs judged in the whole step (lab/step_search.h). Prints each M's
// picks, merges them into FILE (a table: selection then runs them, e.g. through SKINNYGEMM_DATA_DIR), and writes
// rows of kind "step_search" (every trial) to --json.
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "common.h"
#include "lab/models.h"
#include "lab/result_row.h"
#include "lab/step_search.h"
#include "step.h"

namespace skinnygemm::cli {

using nlohmann::ordered_json;

namespace {

ordered_json search_row_json(const tune::StepSearchResult& r, const StepArgs& a, bool pdl) {
  ordered_json o = {{"kind", "step_search"}, {"name", a.model}, {"tp", a.tp}, {"scale", a.scale}, {"m", r.m},
                    {"base", a.search_base}, {"candidates", a.search_candidates}, {"distance", a.search_distance},
                    {"min_launches", a.search_min_launches},
                    {"margin", a.search_margin}, {"pdl", pdl}, {"start_us", json_round(r.start_us)},
                    {"end_us", json_round(r.end_us)}, {"gain", json_round(r.start_us / r.end_us)}};
  o["picks"] = ordered_json::array();
  for (const tune::StepPick& p : r.picks)
    o["picks"].push_back({{"n", p.n}, {"k", p.k}, {"count", p.count}, {"base_config", p.base_config},
                          {"config", p.config}, {"base_step_us", json_round(p.base_step_us)},
                          {"step_us", json_round(p.step_us)}, {"winner_step_us", json_round(p.winner_step_us)},
                          {"alone_us", json_round(p.alone_us)},
                          {"cublaslt_alone_us", json_round(p.cublaslt_alone_us)}});
  o["trials"] = ordered_json::array();
  for (const tune::StepTrial& t : r.trials) {
    o["trials"].push_back({{"n", t.n}, {"k", t.k}, {"config", t.config}, {"step_us", json_round(t.step_us)}});
    if (!t.error.empty()) o["trials"].back()["error"] = t.error;
  }
  return o;
}

}  // namespace

int run_step_search(const StepArgs& a) {
  SKINNYGEMM_CHECK(a.ranks == 1 && a.rank < 0, "--search-table runs on one GPU: drop --ranks / --rank");
  const Backend backend = resolve_backend(parse_backend(a.backend));
  tune::StepSearchOptions o;
  o.model = a.model;
  o.tp = a.tp;
  o.scale = a.scale;
  o.moe_front = tune::parse_moe_front(a.moe_front);
  o.ms = models::parse_m_range(a.m);
  o.backend = backend;
  o.base = tune::parse_variants(a.search_base).at(0);
  SKINNYGEMM_CHECK(backend == Backend::Cuda || o.base != tune::StepVariant::Tma,
                   "--search-base tma needs the cuda backend (the TMA family runs on the GPU); on the "
                       << backend_name(backend) << " backend use --search-base skinny");
  // The TMA family's globs are the default; on the CPU the CPU backend's configs are the only ones that run.
  o.candidates = backend != Backend::Cuda && a.search_candidates == "tma_*" ? "cpu_*" : a.search_candidates;
  o.distance = a.search_distance;
  o.margin = a.search_margin;
  o.min_launches = a.search_min_launches;
  o.samples = a.samples;
  o.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  if (backend != Backend::Cuda) std::cout << "NOTICE: CPU backend: no GPU was used; the search times CPU GEMMs.\n";
  const tune::StepSearchReport rep = tune::search_step(o);
  const DeviceInfo device = device_info(backend);
  ordered_json rows = ordered_json::array();
  std::cout << "step search on " << rep.device << " from " << a.search_base << " (candidates " << o.candidates
            << ", PDL " << (rep.pdl ? "on" : "off") << ", distance " << a.search_distance << ", margin "
            << a.search_margin << ")\n";
  for (const tune::StepSearchResult& r : rep.results) {
    std::cout << "m=" << r.m << ": step " << fixed(r.start_us, 1) << " -> " << fixed(r.end_us, 1) << " us ("
              << fixed(r.start_us / r.end_us, 3) << "x, " << r.trials.size() << " trials)\n";
    for (const tune::StepPick& p : r.picks)
      if (p.config != p.base_config)
        std::cout << "  " << std::setw(12) << (std::to_string(p.n) + "x" + std::to_string(p.k)) << " x" << std::setw(3)
                  << p.count << "  " << p.base_config << " -> " << p.config << "  (step " << fixed(p.base_step_us, 1)
                  << " -> " << fixed(p.step_us, 1) << " us, alone " << fixed(p.alone_us, 2) << " us)\n";
    rows.push_back(search_row_json(r, a, rep.pdl));
  }
  const Table picks = tune::step_search_table(rep, device, tune::kTableMinLaunches, /*changed_only=*/true);
  picks.save_merge(a.search_table);
  std::cout << picks.entries.size() << " picks that beat their incumbent merged into " << a.search_table << "\n";
  if (!a.json.empty()) {
    tune::BenchMeta meta = tune::bench_meta(backend);
    write_file(a.json, step_document(meta, rows).dump(1) + "\n");
    std::cerr << "wrote " << a.json << "\n";
  }
  return 0;
}

}  // namespace skinnygemm::cli
