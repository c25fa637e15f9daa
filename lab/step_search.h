// Configs judged in the whole step instead of alone (issue 16: a kernel win only counts if it survives the step).
//
// Why: at 60cf967 the TMA family's configs tuned alone (`skinnygemm tune`, each candidate in a graph of its own
// launches) were faster than the family's first cut on every Kimi-K3 shape they won, and the step that ran them
// was slower: 8668 us at M = 1 against 7659 for the first cut (docs/kernels.md, "Session 8"). What a kernel leaves
// the next one (room for its CTAs, when its own CTAs end) is not in a measurement of that kernel repeated.
//
// The search, per M: start from a base variant (tma: the family's first cut; skinny: selection; skinny_fused:
// selection on the fused layout, whose fusions are searched as their merged GEMM's shape, the config forced on the
// fused GEMM through FusedProjection's options: in the step, whose fusions write adjacent columns, that is the fused-
// GEMM rung; a serving engine whose destinations are apart runs the same table entry through the per-segment kernel,
// which the search does not time), then for each distinct GEMM shape launched at least min_launches times, largest
// weight traffic per step first, time the whole step (one CUDA graph, the
// protocol of run_step) with every launch of that shape forced to each candidate (each run once outside the
// capture first, the group's last op checked against the reference); the fastest is kept if it saves at least `margin`
// of the step in a confirmation timed in ABBA order (incumbent, winner, winner, incumbent). Greedy, one pass.
// Candidates: the configs `skinnygemm tune` would measure for the shape (tune_candidates over the globs) whose
// names differ from the base config's in at most `distance` underscore tokens (name_distance, lab/tuner.h),
// cuBLASLt's default (GPU), and the table's entry for the point if there is one (so that a kept base was judged
// against what selection had).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lab/step_runner.h"
#include "skinnygemm/table.h"

namespace skinnygemm::tune {

constexpr int kAnyDistance = -1;
// The fewest launches per step of a shape whose pick a table keeps (step_search_table).
constexpr int kTableMinLaunches = 2;

struct StepSearchOptions {
  std::string model = "kimi_k3";
  int tp = 8;
  double scale = 1.0;
  MoeFront moe_front = MoeFront::NonEp;
  std::vector<int64_t> ms{1};
  Backend backend = Backend::Auto;
  StepVariant base = StepVariant::Tma;  // skinny on the CPU (the tma variant needs the GPU)
  std::string candidates = "tma_*";     // config-name globs, as `tune --candidates`
  int distance = 2;                     // name tokens a candidate may differ by from the base (kAnyDistance: any)
  int samples = 5;
  // Share of the step a candidate must save: 0.2%, the step's spread over samples at 717be70 (0.001-0.002).
  double margin = 0.002;
  // Shapes launched fewer times per step are not searched (the CLI: kTableMinLaunches, what the table keeps).
  int min_launches = 1;
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
  double base_step_us = 0;   // the step with the incumbent (the mean of its two confirmation timings when a
                             // winner was confirmed or refused; else its timing at the start of the shape)
  double step_us = 0;        // ... with the pick (base_step_us when the incumbent was kept)
  double winner_step_us = 0; // the best trial's confirmation mean (0: no trial was fast enough to confirm)
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
  DType dtype = DType::BF16;
  bool pdl = false;  // the launches used PDL
  std::vector<StepSearchResult> results;  // per M in the order asked
};

StepSearchReport search_step(const StepSearchOptions& options);
// The search on a model and device the caller made (tests); the device must hold max(options.ms) rows.
StepSearchReport search_step(const StepSearchOptions& options, const StepModel& model, StepDevice& device);

// The picks of shapes the step launches at least min_launches times, as entries of a table for device (us:
// alone_us; cublaslt_us: cublaslt_alone_us). A shape launched once cannot be judged in the step: its choices
// differ by less than the step's noise (at 717be70 the margin, 0.2% of 7.4 ms = 15 us, against alone
// differences of 1-6 us on lm_head and the dense FFN), so its entry is left to the table tuned alone.
// changed_only: only the picks that beat their incumbent (the CLI's choice: a kept incumbent is what selection runs
// anyway, and an entry for it would pin today's heuristic in the table).
Table step_search_table(const StepSearchReport& report, const DeviceInfo& device, int min_launches = kTableMinLaunches,
                        bool changed_only = false);

}  // namespace skinnygemm::tune
