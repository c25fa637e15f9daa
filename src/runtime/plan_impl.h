// A Plan's state, shared with what runs plans without their public checks: gemm()'s plan cache (which validated
// the call already) and FusedProjection's fused-kernel rung (a plan whose launch writes per-segment outputs).
#pragma once

#include <memory>

#include "kernels/family.h"
#include "skinnygemm/plan.h"

namespace skinnygemm {

struct Plan::Impl {
  Problem problem;
  Backend backend = Backend::Cpu;
  int alignment = 16;
  Choice choice;
  void* stream = nullptr;                  // Options::stream: Plan::run's stream when it is given none
  std::unique_ptr<PreparedLaunch> launch;  // CUDA with K > 0

  // segments (count 1..kMaxOutputSegments, or 0): the launch writes each segment's rows to its destination.
  Impl(const Problem& problem, const Options& options, int alignment, const OutputSegment* segments, int count);
  void run_unchecked(const void* x, const void* w, void* y, void* stream) const;
};

struct PlanAccess {
  static const Plan::Impl& impl(const Plan& plan) { return *plan.impl_; }
  static Plan make(const Problem& problem, const Options& options, int alignment, const OutputSegment* segments,
                   int count);
};

// Drops every plan gemm() has cached (clear_selection_cache calls it: a new choice needs a new plan).
void clear_plan_cache();

}  // namespace skinnygemm
