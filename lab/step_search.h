// Configs judged in the whole step instead of alone (issue 16: a kernel win only counts if it survives the step).
//
// Why: at 60cf967 the TMA family's configs tuned alone (`skinnygemm tune`, each candidate in a graph of its own
// launches) were faster than the family's first cut on every Kimi-K3 shape they won, and the step that ran them
// was slower: 8668 us at M = 1 against 7659 for the first cut (docs/kernels.md, "Session 8"). What a kernel leaves
// the next one (room for its CTAs, when its own CTAs end) is not in a measurement of that kernel repeated.
//
// The search, per M: start from a base variant (tma: the family's first cut; skinny: selection), then for each
// distinct unfused GEMM shape, largest weight traffic per step first, time the whole step (one CUDA graph, the
// protocol of run_step) with every launch of that shape forced to each candidate; keep the fastest if it saves
// at least `margin` of the step, confirmed by timing it and the incumbent again. Greedy, one pass, in that order.
// Candidates: the configs `skinnygemm tune` would measure for the shape (tune_candidates over the globs) whose
// names differ from the base config's in at most `distance` underscore tokens, and cuBLASLt's default (GPU).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lab/step_runner.h"
#include "skinnygemm/table.h"

namespace skinnygemm::tune {

struct StepSearchOptions {
  std::string model = "kimi_k3";
  int tp = 8;
  double scale = 1.0;
  std::vector<int64_t> ms{1};
  Backend backend = Backend::Auto;
  StepVariant base = StepVariant::Tma;  // skinny on the CPU (the tma variant needs the GPU)
  std::string candidates = "tma_*";     // config-name globs, as `tune --candidates`
  int distance = 3;                     // name tokens a candidate may differ by from the base config (0: any)
  int samples = 5;
  double margin = 0.002;  // share of the step a candidate must save (0.2%: about twice the step's spread)
  std::function<void(const std::string&)> progress;
};

struct StepTrial {
  int64_t m = 0, n = 0, k = 0;
  std::string config;
  double step_us = 0;  // the whole step with this shape on config (the other shapes as picked so far)
  std::string error;   // why the config could not run (then step_us is 0)
};

struct StepPick {
  int64_t m = 0, n = 0, k = 0;
  int count = 0;             // launches of the shape per step
  std::string base_config;   // what the base variant runs
  std::string config;        // the pick (base_config when no candidate saved the margin)
  double base_step_us = 0;   // the step before this shape was searched, timed again beside the winner
  double step_us = 0;        // ... and with the pick
  double alone_us = 0;       // the pick per launch, timed alone (time_ops_alone)
  double cublaslt_alone_us = 0;  // cuBLASLt's default per launch alone (0 on the CPU)
};

struct StepSearchResult {
  int64_t m = 0;
  double start_us = 0, end_us = 0;  // the base step, and the step with every pick (timed at the end)
  std::vector<StepPick> picks;      // in search order
  std::vector<StepTrial> trials;
};

struct StepSearchReport {
  std::string device;
  std::vector<StepSearchResult> results;  // per M in the order asked
};

StepSearchReport search_step(const StepSearchOptions& options);
// The search on a model and device the caller made (tests).
StepSearchReport search_step(const StepSearchOptions& options, const StepModel& model, StepDevice& device);

// The picks of shapes the step launches at least min_launches times, as entries of a table for device (us:
// alone_us; cublaslt_us: cublaslt_alone_us). A shape launched once cannot be judged in the step: its choices
// differ by less than the step's noise (at 717be70 the margin, 0.2% of 7.4 ms = 15 us, against alone
// differences of 1-6 us on lm_head and the dense FFN), so its entry is left to the table tuned alone.
Table step_search_table(const StepSearchReport& report, const DeviceInfo& device, DType dtype, int min_launches = 2);

// How many underscore-separated tokens a and b do not share (the larger of the two one-sided counts):
// tma_m8_r64_b2_s4_x8 vs tma_m8_r64_b2_s3_x8 is 1, vs tma_m8_r32_b2_s7_c2_d9 is 4.
int name_distance(const std::string& a, const std::string& b);

}  // namespace skinnygemm::tune
