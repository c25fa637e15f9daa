// The step on the GPU (docs/step.md) on a scaled-down model: the cublaslt_fused variant runs each fusion as one
// cuBLASLt GEMM over its weight block (lab/step.cpp fused_as_one_gemm), and every one of its ops, each segment on its
// own, must match the reference; the CPU tests cover the mapping, only a GPU runs it through the executor.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_util.h"
#include "lab/step_runner.h"

namespace skinnygemm::tune {
namespace {

// The scaled-down Kimi-K3 TP8 step on the GPU, 5 samples.
StepRunOptions gpu_step(double scale, std::vector<int64_t> ms, std::vector<StepVariant> variants, bool sinks) {
  StepRunOptions o;
  o.backend = Backend::Cuda;
  o.tp = 8;
  o.scale = scale;
  o.ms = std::move(ms);
  o.variants = std::move(variants);
  o.samples = 5;
  o.sinks = sinks;
  return o;
}

TEST(GpuStep, CublasltFusedRunsEveryFusionAsOneGemmAndEverySegmentChecks) {
  SKIP_WITHOUT_GPU();
  StepRunOptions o =
      gpu_step(1.0 / 16, {1, 5}, {StepVariant::Cublaslt, StepVariant::CublasltFused, StepVariant::SkinnyFused}, true);
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

// The step's dependent-chain floor (--chain-floor): once per launch list, the same for every M and every variant of
// that list, never faster than the device's stream-read probe allows for the weight bytes (the probe must stream
// what it is given), and each op name's ring named.
TEST(GpuStep, TheChainFloorStreamsEveryLaunchListOnce) {
  SKIP_WITHOUT_GPU();
  StepRunOptions o = gpu_step(1.0 / 4, {1, 4}, {StepVariant::Cublaslt, StepVariant::SkinnyFused}, false);
  o.chain_floor = true;
  const StepReport rep = run_step(o);
  const StepModel m = build_step_model("kimi_k3", 8, o.scale);
  ASSERT_EQ(rep.chain_floors.size(), 2u);
  for (const auto& [list, f] : rep.chain_floors) {
    const std::vector<StepOp> ops = list == "fused" ? m.ops_fused : m.ops_unfused;
    int64_t weights = 0;
    std::set<std::string> names;
    for (const StepOp& op : ops) weights += op.weight_bytes(m.elem()), names.insert(op.name);
    ASSERT_GT(rep.stream_read_tbps, 0);
    // 5% under the stream-read probe's time for the weights alone: a chain that skipped bytes would beat it.
    EXPECT_GT(f.us, 0.95 * static_cast<double>(weights) / (rep.stream_read_tbps * 1e6)) << list;
    // "per op" and every ring of the probe once (their number follows lab/cuda/bench_common.cu's list); each op's
    // ring is one of them.
    std::set<std::string> tried;
    for (const auto& [what, us] : f.tried) tried.insert(what);
    EXPECT_EQ(tried.size(), f.tried.size()) << list;
    EXPECT_TRUE(tried.count("per op")) << list;
    EXPECT_GE(tried.size(), 3u) << list;
    for (const auto& [op, ring] : f.op_rings) EXPECT_TRUE(tried.count(ring)) << list << ": " << op << " on " << ring;
    EXPECT_EQ(f.op_rings.size(), names.size()) << list;
    double fastest = 1e30;
    for (const auto& [what, us] : f.tried) fastest = std::min(fastest, us);
    EXPECT_EQ(f.us, fastest) << list;
  }
  EXPECT_EQ(rep.chain_error, "");
  for (const StepResult& r : rep.results) {
    const ChainFloor& f = rep.chain_floors.at(runs_fused_ops(r.variant) ? "fused" : "unfused");
    // The probe does no arithmetic and no reduction: it is faster than cuBLASLt's step of the same launches (at full
    // scale that step runs at 0.70 of its chain floor, docs/step.md "Session 17").
    if (r.variant == StepVariant::Cublaslt) {
      EXPECT_LT(f.us, r.us) << "m=" << r.m;
    }
    EXPECT_EQ(r.chain_floor_us, f.us) << r.name << " m=" << r.m;
    EXPECT_EQ(r.chain_rings, f.rings) << r.name;
    EXPECT_NEAR(r.chain_efficiency, f.us / r.us, 1e-12) << r.name;
  }
}

// --chain-attribution: one share per op name of each variant's launches, each against an all-probe graph timed with
// them. cuBLASLt's launches take no part in PDL, so each op name's real launches beside probes lose the overlap at
// their boundaries and must cost something (more than -0.5 us per launch, the noise of the difference of two graph
// timings, or 2% of the op's own weight stream, whichever is larger: the step reports a spread of about 0.2% of a graph's
// time, and on an H100 cuBLASLt's one lm_head launch (294 MB) was charged -1.06 us against a quarter-size chain in
// session 42 and -1.15 us in session 51, where the all-probe graph allowed -0.78: on so long a launch cuBLASLt streams
// about 1% faster than the probe's ring); the shares pay
// boundaries that real neighbours share in the step, so together they may exceed the step's distance from the chain,
// but not by more than that distance again.
TEST(GpuStep, TheChainAttributionChargesEveryOpName) {
  SKIP_WITHOUT_GPU();
  StepRunOptions o = gpu_step(1.0 / 4, {4}, {StepVariant::Cublaslt}, false);
  o.chain_attribution = true;
  const StepReport rep = run_step(o);
  const StepModel m = build_step_model("kimi_k3", 8, o.scale);
  EXPECT_EQ(rep.chain_error, "");
  ASSERT_EQ(rep.results.size(), 1u);
  const StepResult& r = rep.results[0];
  ASSERT_EQ(r.error, "");
  ASSERT_GT(r.chain_floor_us, 0);
  // The all-probe graph is the chain floor's best choice timed again: within 3% of it.
  EXPECT_NEAR(r.chain_share_base_us, r.chain_floor_us, 0.03 * r.chain_floor_us);
  const auto counts = op_counts(m.ops_unfused);
  ASSERT_EQ(r.chain_shares.size(), counts.size());
  double sum = 0;
  for (const ChainShare& c : r.chain_shares) {
    EXPECT_EQ(c.count, counts.at(c.name)) << c.name;
    // The op's weights streamed at an H100 SXM's 3.35 TB/s, us (an H200's 4.8 TB/s gives a looser bound).
    const double stream_us = c.count * 2.0 * static_cast<double>(c.n) * static_cast<double>(c.k) / 3.35e6;
    EXPECT_GT(c.us, -std::max({0.5 * c.count, 0.002 * r.chain_share_base_us, 0.02 * stream_us})) << c.name;
    sum += c.us;
  }
  EXPECT_GT(sum, 0);
  EXPECT_LT(sum, 2 * (r.us - r.chain_share_base_us)) << "step " << r.us << " us, chain " << r.chain_share_base_us;
}

}  // namespace
}  // namespace skinnygemm::tune
