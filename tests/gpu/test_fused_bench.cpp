// The fused-projection benchmark on the GPU (lab/cuda/fused_bench.cu + the shared protocol): real Kimi-K3 TP8
// fusions pass their check and produce every column, with numbers that are physically possible. No performance
// target is asserted here (that is the benchmark's job: docs/fused.md).
#include <gtest/gtest.h>

#include "gpu/gpu_util.h"
#include "lab/fused_bench.h"

namespace skinnygemm::tune {
namespace {

TEST(GpuFusedBench, KimiTp8FusionsCheckAndTimeEveryColumn) {
  SKIP_WITHOUT_GPU();
  FusedBenchOptions o;
  o.backend = Backend::Cuda;
  o.ms = {1, 16};
  o.samples = 3;
  o.replays = 5;
  const std::vector<FusedRow> rows = run_fused_bench(model_fusions("kimi_k3", 8, {"mla.qkv_a_g", "kda.qkvg_fab"}), o);
  ASSERT_EQ(rows.size(), 4u);
  for (const FusedRow& r : rows) {
    SCOPED_TRACE(r.name + " m=" + std::to_string(r.m) + " rung " + r.rung + ": " + r.reason);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_LE(r.check_ratio, 1.0);
    EXPECT_GT(r.checked, 0);
    EXPECT_NE(r.rung, "separate");  // M <= max_m: a fused rung always runs
    EXPECT_FALSE(r.configs.empty());
    for (double us : {r.us, r.separate_us, r.contiguous_us, r.cublaslt_us, r.stream_read_us}) EXPECT_GT(us, 0);
    EXPECT_LE(r.cublaslt_best_us, r.cublaslt_us);
    for (const FusedSegmentResult& s : r.segments) EXPECT_GT(s.us, 0) << s.name;
    // Cold weights: the probe must not read faster than HBM can (an H200 peaks at 4.8 TB/s).
    const double bytes = static_cast<double>(Problem{r.m, r.n, r.k, r.dtype}.total_bytes());
    EXPECT_LT(bytes / (r.stream_read_us * 1e6), 5.2) << "TB/s: the weights came from the L2";
    EXPECT_GT(r.efficiency, 0);
  }
}

}  // namespace
}  // namespace skinnygemm::tune
