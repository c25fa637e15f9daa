// Plan once, run many: a projection whose selection, kernel and launch shape are resolved once.
//
//   skinnygemm::Plan plan(p, options);        // validates, selects (table / heuristic / forced), prepares the launch
//   plan.run(x, w, y);                        // launches on options.stream: no selection, string building, allocation or lock
//   plan.run(x, w, y, other_stream);          // or on another stream
//
// gemm() keeps a cache of plans keyed by (backend, device, table, forced config, problem, alignment) and runs the
// cached plan, so an eager decode loop pays one hash lookup per call. A plan made for an alignment (see
// operand_alignment) runs operands at least that aligned; run() checks it.
#pragma once

#include <memory>

#include "skinnygemm/skinnygemm.h"

namespace skinnygemm {

class Plan {
 public:
  // Throws Error for an invalid problem, a forced config that cannot run it, or no usable backend. alignment:
  // the operand alignment in bytes the plan is made for (16 = what the skinny kernels need).
  explicit Plan(const Problem& problem, const Options& options = {}, int alignment = 16);
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  // y = x w^T on the stream the plan was made with (Options::stream: a cudaStream_t for the CUDA backend, nullptr the
  // default stream; ignored on the CPU). Throws Error for null or overlapping operands, or operands less aligned than
  // the plan's alignment. (Until session 43 Options::stream was ignored here and this ran on the default stream.) The
  // plan keeps the handle, not the stream: destroy the stream only after its last run.
  void run(const void* x, const void* w, void* y) const;
  // The same on another stream.
  void run(const void* x, const void* w, void* y, void* stream) const;

  const Problem& problem() const;
  Backend backend() const;
  int alignment() const;
  const Choice& choice() const;  // what run() launches and why

 private:
  struct Impl;
  friend struct PlanAccess;  // the runtime's own callers (gemm()'s cache, fused projections)
  explicit Plan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skinnygemm
