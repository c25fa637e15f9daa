// Two independent projections in one launch: y_a = x_a · w_a^T and y_b = x_b · w_b^T, which read different inputs
// and may run together (neither reads what the other writes).
//
//   skinnygemm::Problem up{m, 7168, 3584, skinnygemm::DType::BF16};    // the MoE layer's latent up
//   skinnygemm::Problem down{m, 7168, 768, skinnygemm::DType::BF16};   // the shared experts' down
//   skinnygemm::PairPlan pair(up, down);                                 // selects both, once
//   pair.run(latent, w_up, y_up, act, w_down, y_down, stream);           // one launch where it can
//
// Why: in a decode step each launch that waits for its predecessor pays a dependent-chain boundary (the next kernel's
// CTAs enter only as this one's leave). Two projections that wait for the same predecessor need to pay it once: the
// MoE layer's end is such a pair, 92 times per Kimi-K3 step (docs/kernels.md "Session 21" measures it in the step).
//
// The plan selects each problem as gemm() would (the table, else the heuristic, or Options::config for both). It runs
// them as one launch when both picks are the tma family on one kernel template (64-row tiles of two boxes, token tiles
// 8 or 16: the lead split's picks at M <= 16) and neither is a cluster split; otherwise as two launches, a then b, on
// the stream. one_launch() and reason() say which and why. The outputs are the same bits either way (each problem
// runs its own grid with its own reduction).
#pragma once

#include <memory>
#include <string>

#include "skinnygemm/plan.h"

namespace skinnygemm {

class PairPlan {
 public:
  // Throws Error as Plan does, for either problem (the message names which: "a" or "b"), and for two dtypes.
  PairPlan(const Problem& a, const Problem& b, const Options& options = {}, int alignment = 16);
  ~PairPlan();
  PairPlan(PairPlan&&) noexcept;
  PairPlan& operator=(PairPlan&&) noexcept;

  // Both projections on stream. Throws Error for what Plan::run rejects in either, and where an output overlaps an
  // operand or the output of the other problem.
  void run(const void* xa, const void* wa, void* ya, const void* xb, const void* wb, void* yb,
           void* stream = nullptr) const;

  bool one_launch() const;
  const std::string& reason() const;  // why one launch, or why two
  const Plan& a() const;
  const Plan& b() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skinnygemm
