// The step on the GPU (docs/step.md) on a scaled-down model: the cublaslt_fused variant runs each fusion as one
// cuBLASLt GEMM over its weight block (lab/step.cpp fused_as_one_gemm), and every one of its ops, each segment on its
// own, must match the reference; the CPU tests cover the mapping, only a GPU runs it through the executor.
#include <gtest/gtest.h>

#include "gpu/gpu_util.h"
#include "lab/step_runner.h"

namespace skinnygemm::tune {
namespace {

TEST(GpuStep, CublasltFusedRunsEveryFusionAsOneGemmAndEverySegmentChecks) {
  SKIP_WITHOUT_GPU();
  StepRunOptions o;
  o.backend = Backend::Cuda;
  o.tp = 8;
  o.scale = 1.0 / 16;
  o.ms = {1, 5};
  o.variants = {StepVariant::Cublaslt, StepVariant::CublasltFused, StepVariant::SkinnyFused};
  o.samples = 5;
  o.sinks = true;
  o.check_all = true;
  const StepReport rep = run_step(o);
  const StepModel m = build_step_model("kimi_k3", 8, o.scale);
  ASSERT_EQ(rep.results.size(), 6u);
  for (const StepResult& r : rep.results) {
    const std::vector<StepOp> ops = m.ops(r.variant);
    EXPECT_EQ(r.error, "") << r.name << " m=" << r.m;
    EXPECT_EQ(r.gemms, static_cast<int>(ops.size())) << r.name;
    int segments = 0;
    for (const StepOp& op : ops) segments += static_cast<int>(op.segments.size());
    EXPECT_EQ(r.checked, segments) << r.name << ": check_all compares every segment of every op";
    EXPECT_GT(r.us, 0) << r.name;
    EXPECT_FALSE(r.sinks.empty()) << r.name;
  }
  EXPECT_EQ(m.ops(StepVariant::CublasltFused).size(), m.ops(StepVariant::SkinnyFused).size());
  EXPECT_LT(m.ops(StepVariant::CublasltFused).size(), m.ops(StepVariant::Cublaslt).size());
}

}  // namespace
}  // namespace skinnygemm::tune
