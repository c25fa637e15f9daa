// The cost model behind the heuristic: how long a config should take on a problem. Each family's descriptor
// carries its own model (src/kernels/<family>/family.cpp); this is the part that ranks them. Host-only.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {

struct Choice;  // skinnygemm/select.h

struct CostBreakdown {
  double us = 0;            // predicted time
  double stream_us = 0;     // weight bytes at full bandwidth
  double wave_eff = 0;      // waves / ceil(waves)
  double inflight_eff = 0;  // achieved fraction of bandwidth from bytes in flight
  double chain_us = 0;      // latency-bound lower bound from each warp's serial load chain
  double compute_us = 0;    // tensor-core / FMA issue bound
  int ctas_per_sm = 0;
  double waves = 0;         // bulk: CTAs / (SMs x resident CTAs per SM); above 1 a second wave waits
  std::string str() const;
};
// The family's model on a GPU; on the CPU device every config is scored by the CPU's model.
CostBreakdown estimate(const Config& config, const Problem& problem, const DeviceInfo& device);

// Whether the GPU heuristic scores c for p (the family's heuristic_scores; false for families without one).
bool heuristic_scores(const Config& c, const Problem& p);
// A kernel is the heuristic's pick only where the model predicts it at most this fraction of cuBLASLt's
// predicted time (scripts/heuristic_cv.py: 0.85 kept picks within 10% of the best at the most points under
// cross-validation; 0.9 picked kernels slower than cuBLASLt at 14 of 701 points, 0.85 at 3).
constexpr double kHeuristicKernelMargin = 0.85;
// Whether a prediction of us for c beats the best so far: faster by more than kPickTieTolerance, or as fast with a
// smaller unroll (fewer registers: more CTAs fit beside the next kernel's). Deterministic for equal predictions.
constexpr double kPickTieTolerance = 1e-3;
bool better_pick(double us, const Config& c, double best_us, const Config& best);

// One fitted cost model's constants by name, in the order its family declares them: what `skinnygemm heuristic`
// dumps, so that scripts/heuristic_cv.py refits and judges the constants the library runs.
struct ModelConstants {
  std::string model;  // "bulk", "cublaslt"
  std::vector<std::pair<std::string, double>> values;
};
// Every family's fitted constants (FamilyDescriptor::fitted_constants), in registry order.
std::vector<ModelConstants> fitted_constants();

// The shape arithmetic of supports() (the family's fits_shape: token tile, K slices, CTAs along N, shared memory):
// what needs no GPU and no built instance. True for families without shape limits.
bool fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not = nullptr);

// A config the heuristic scores, with its prediction. ranked is false where the family is single_wave and the
// config needs a second wave: scored (its prediction is dumped for the fit) but never picked.
struct ScoredConfig {
  Config config;
  CostBreakdown cost;
  bool ranked = true;
};
// The listed configs that heuristic_scores() admits on a GPU (every CPU config on the CPU) and `runnable` lets
// through (select.cpp: supports()), in list order.
std::vector<ScoredConfig> scored_configs(const Problem& p, const DeviceInfo& dev,
                                         const std::function<bool(const Config&)>& runnable);
// The heuristic's kernel: the fastest predicted of the ranked scored_configs() (better_pick). False if none is
// left. Whether it beats cuBLASLt is heuristic_choice_among's decision (kHeuristicKernelMargin).
bool best_scored_config(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                        Config* best, double* best_us);

// select.cpp's heuristic over the configs `runnable` lets through (heuristic_choice: supports() at the operands'
// alignment): first a family's structural pick (FamilyDescriptor::structural_pick, which weighs cuBLASLt itself: no
// margin applies), else the best scored kernel where it is predicted at most kHeuristicKernelMargin x cuBLASLt's time, else
// cuBLASLt on a GPU where some kernel is runnable. False where none is (selection falls back). `skinnygemm
// heuristic` passes fits_shape() in builds without the kernels: the picks of a build with every instance.
bool heuristic_choice_among(const Problem& p, const DeviceInfo& dev,
                            const std::function<bool(const Config&)>& runnable, Choice* out);
// Where a table has no entry at p.m itself, its next entry (find_bucket) stands for p.m unless a family's structural
// rules apply there: then their pick, in *out. A table that refines the heuristic (issue 18) may leave out points
// where the heuristic is right (pruned by hand, or tuned before tune --refine wrote heuristic markers, or at Ms never
// tuned); an entry at M = 17 must not then stand for M = 1..16 (at 4eaa78f the shipped H200 table's M = 17 cuBLASLt
// entries did, and the whole step at M <= 16 ran cuBLASLt: 8853 us at M = 1, the heuristic alone 7370 at 516a0f1).
// Where the rules do not apply, a heuristic marker (TableEntry::heuristic_kept) keeps the heuristic for its bucket.
bool bucket_yields_to_structural_pick(const Problem& p, const DeviceInfo& dev,
                                      const std::function<bool(const Config&)>& runnable, Choice* out);
// The same without the families' structural rules (FamilyDescriptor::structural_pick): the scored heuristic alone,
// what `skinnygemm heuristic` dumps as scored_pick for the offline fit of the scored models.
bool scored_heuristic_choice_among(const Problem& p, const DeviceInfo& dev,
                                   const std::function<bool(const Config&)>& runnable, Choice* out);

// Registers per thread and dynamic shared memory per CTA the family's instance needs (estimates kept in step
// with ptxas -v of the built instances; see docs/kernels.md). Shared memory may depend on M (bulk).
int estimated_registers(const Config& config);
int64_t smem_bytes(const Config& config, const Problem& problem);

}  // namespace skinnygemm
