// What cli/step.cpp (one process: the step on one GPU, its no-PDL pass) and cli/step_processes.cpp (the step across
// GPUs: the parent that starts one process per rank, and those processes) share.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lab/bench.h"
#include "lab/step_runner.h"
#include "lab/step_search.h"

namespace skinnygemm::cli {

struct StepArgs {
  std::string model = "kimi_k3", m = "1:64", variants, backend = "auto", json, pdl = "both";
  int tp = 8;
  double scale = 1.0;
  std::string moe_front = "non-ep";  // --moe-front: how the fused variants fuse the MoE front (tune::MoeFront)
  int samples = 5;
  bool no_sinks = false, check_all = false;
  int ranks = 1;        // processes, one per GPU (1: this process alone, no communication)
  int rank = -1;        // set by the parent for each of its rank processes
  std::string nccl_id;  // the parent's NCCL id file, for the rank processes
  std::string trace_tma;  // --trace-tma FILE: each case's TMA timeline (lab/step_runner.h TmaTrace) to FILE
  bool chain_floor = false;  // --chain-floor: each variant's launches as a dependent chain of the probe (ChainFloor)
  bool chain_attribution = false;  // --chain-attribution: and per op name what its real launches add (ChainShare)
  // The step search (lab/step_search.h) instead of the protocol: the picks merged into search_table.
  std::string search_table, search_base = "tma", search_candidates = "tma_*";
  int search_distance = 2;
  int search_min_launches = tune::kTableMinLaunches;
  double search_margin = 0.002;
};

// The run options for a's model, M values and variants (checked here, before any process starts).
tune::StepRunOptions step_run_options(const StepArgs& a, Backend backend);

// One result row of kind "step" (docs/measuring.md); with several ranks it carries rank, ranks,
// scope "rank", all_reduces and the communication time.
nlohmann::ordered_json step_row_json(const tune::StepResult& r, const StepArgs& a, const tune::StepModel& model,
                                     const tune::StepReport& report);

// {"meta", "stream_read_tbps", "rows"} with this process's revision, command line and date.
nlohmann::ordered_json step_document(tune::BenchMeta meta, const nlohmann::ordered_json& rows);

// This binary's arguments for a child that runs the same cases (model, TP, M, scale, MoE front, variants, samples, sinks,
// checks) on the cuda backend; the caller adds what differs (--pdl, --rank, --json, ...).
std::vector<std::string> step_child_args(const StepArgs& a);

int run_step_ranks(const StepArgs& a);  // --ranks N >= 2: the parent (cli/step_processes.cpp)
int run_step_rank(const StepArgs& a);   // --rank r: one rank's process
int run_step_search(const StepArgs& a); // --search-table FILE (cli/step_search.cpp)

}  // namespace skinnygemm::cli
