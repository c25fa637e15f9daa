// GPU tier of the kernel issue: every instantiated config bitwise on small integers, random inputs against
// FP64 across every threshold, FP16, strided rows, CUDA-graph replay, back-to-back PDL chains, determinism,
// the fallback for misaligned operands, degenerate sizes.
#include <cuda_runtime.h>

#include "gpu/gpu_util.h"
#include "kernels/family.h"

namespace skinnygemm::test {
namespace {

struct GpuRun {
  std::vector<uint16_t> y;
  Choice choice;
};

// Runs p on the GPU with the given config ("" = select) on fresh device copies; y poisoned first.
GpuRun run_gpu(const Problem& p, const HostOperands& h, const std::string& config = "", std::size_t x_offset = 0) {
  const std::size_t ny = matrix_elems(p.m, p.n, p.y_stride());
  DeviceArray x(h.x, x_offset), w(h.w), y(std::vector<uint16_t>(ny, kPoison));
  Options o;
  o.backend = Backend::Cuda;
  o.config = config;
  GpuRun r;
  r.choice = gemm(p, x.get(), w.get(), y.get(), o);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  r.y = y.download(ny);
  return r;
}

TEST(GpuKernels, EveryListedConfigIsBitwiseExactOnSmallIntegers) {
  SKIP_WITHOUT_GPU();
  const DeviceInfo dev = cuda::device_info();
  int tested = 0, too_big = 0;
  for (DType dtype : {DType::BF16, DType::FP16})
    for (const Config& c : all_listed_configs()) {
        const FamilyDescriptor& family = skinnygemm::family(c.family);
        if (!family.gpu || !family.kernel) continue;  // every kernel family of the registry, not cuBLASLt
        for (int64_t m : {int64_t{1}, static_cast<int64_t>(c.tile_m)}) {
          // N = 100 leaves a partial row tile; K = 8200 a partial 32-chunk and 128-stage, and enough of
          // both for 64 K slices.
          Problem p{m, 100, 8200, dtype};
          std::string why_not;
          if (!supports(c, p, dev, 16, &why_not)) {
            // only a ring too large for shared memory may refuse, and the bulk ring its unsupported layouts
            const bool layout = c.family == Family::Bulk && why_not.find("one warp row") != std::string::npos;
            ASSERT_TRUE(layout || why_not.find("shared memory") != std::string::npos) << c.name() << ": " << why_not;
            if (layout) continue;
            ++too_big;
            continue;
          }
          const HostOperands h = random_operands(p, static_cast<uint32_t>(tested + 1), /*small_ints=*/true);
          const GpuRun r = run_gpu(p, h, c.name());
          ASSERT_TRUE(bitwise_equal(p, r.y.data(), naive(p, h).data())) << "config " << c.name();
          ++tested;
        }
      }
  EXPECT_GT(tested, 300) << too_big << " configs need more shared memory than the device has";
}

TEST(GpuKernels, RandomInputsAcrossThresholds) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 100;
  const int64_t ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64};
  for (int64_t n : {17, 1000})
    for (int64_t k : {8, 136, 7168})
      for (int64_t m : ms) {
        const Problem p{m, n, k, DType::BF16};
        const HostOperands h = random_operands(p, ++seed);
        const GpuRun r = run_gpu(p, h);
        ASSERT_TRUE(within_naive_bound(p, h, r.y, fp64(p, h), naive(p, h), r.choice.config.name()));
      }
}

TEST(GpuKernels, KimiShapesWithForcedDecompositions) {
  SKIP_WITHOUT_GPU();
  // The stage ring at every token tile it runs (the 64-token one's x rows need more shared memory than a block has),
  // each split, both layouts and unrolls.
  const char* configs[] = {"",
                           "bulk_m32_w1x4_u2_sk8",
                           "bulk_m32_w1x8_u2_sk1",
                           "bulk_m32_w1x4_u2_sk2",
                           "bulk_m8_w1x8_u4_sk1",
                           "bulk_m8_w1x4_u4_sk8",
                           "bulk_m8_w1x8_u2_sk4",
                           "bulk_m16_w1x4_u2_sk2"};
  uint32_t seed = 500;
  for (int64_t n : {144, 2112})
    for (int64_t m : {1, 4, 16, 64})
      for (const char* c : configs) {
        if (*c && Config::parse(c).tile_m < m) continue;
        const Problem p{m, n, 7168, DType::BF16};
        const HostOperands h = random_operands(p, ++seed);
        const GpuRun r = run_gpu(p, h, c);
        ASSERT_TRUE(within_naive_bound(p, h, r.y, fp64(p, h), naive(p, h), r.choice.config.name()));
      }
}

TEST(GpuKernels, Fp16AndStridedRows) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 900;
  for (DType dtype : {DType::FP16, DType::BF16})
    for (int64_t m : {1, 3, 8, 17, 64}) {
      Problem p{m, 300, 1048, dtype};
      p.ldx = 1048 + 64;  // strided rows, still 16-byte aligned
      p.ldw = 1048 + 8;
      p.ldy = 300 + 20;
      const HostOperands h = random_operands(p, ++seed);
      const int tile = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;  // a kernel, whatever selection prefers
      if (tile > 32) continue;  // the stage ring's 64 x rows need more shared memory than a block has
      const GpuRun r = run_gpu(p, h, "bulk_m" + std::to_string(tile) + "_w1x4_u2_sk2");
      ASSERT_TRUE(within_naive_bound(p, h, r.y, fp64(p, h), naive(p, h), r.choice.config.name()));
      ASSERT_TRUE(padding_untouched(p, r.y.data()));
    }
}

TEST(GpuKernels, MisalignedOperandsFallBackToCublasLt) {
  SKIP_WITHOUT_GPU();
  const Problem p{4, 256, 1024, DType::BF16};
  const HostOperands h = random_operands(p, 77);
  const GpuRun r = run_gpu(p, h, "", /*x_offset=*/1);  // x 2-byte aligned
  EXPECT_EQ(r.choice.source, Source::Fallback) << r.choice.reason;
  EXPECT_EQ(r.choice.config.family, Family::Cublaslt);
  ASSERT_TRUE(within_naive_bound(p, h, r.y, fp64(p, h), naive(p, h), r.choice.config.name()));
  Problem odd_k{4, 256, 1020, DType::BF16};  // K not a multiple of 8
  const HostOperands h2 = random_operands(odd_k, 78);
  const GpuRun r2 = run_gpu(odd_k, h2);
  EXPECT_EQ(r2.choice.config.family, Family::Cublaslt);
  ASSERT_TRUE(within_naive_bound(odd_k, h2, r2.y, fp64(odd_k, h2), naive(odd_k, h2), r2.choice.config.name()));
}

TEST(GpuKernels, OneTokenWithAnyRowStrideOfXStaysOnTheKernels) {
  SKIP_WITHOUT_GPU();
  // At M = 1 x's row stride moves no address: ldx % 8 != 0 (a row of a wider tensor) keeps the 16-byte kernels, and the
  // TMA launch maps x with the packed K (the copy engine refuses strides that are not multiples of 16 bytes).
  // K = 7168 maps x as a 3D view (one copy per stage), K = 7176 (not a multiple of 64) as a 2D one, box by box.
  for (DType dtype : {DType::BF16, DType::FP16})
    for (int64_t k : {7168, 7176}) {
      Problem p{1, 1536, k, dtype};
      p.ldx = k + 3;
      const HostOperands h = random_operands(p, 91);
      const GpuRun r = run_gpu(p, h);
      EXPECT_NE(r.choice.config.family, Family::Cublaslt) << r.choice.reason;
      ASSERT_TRUE(within_naive_bound(p, h, r.y, fp64(p, h), naive(p, h), r.choice.config.name()));
      for (const char* forced :
           {"tma_m8_r32_b2_s4_c2_d6", "tma_m8_r64_b2_s4_x1", "tma_m8_r16_b8_s4_rs", "bulk_m8_w1x8_u2_sk8"}) {
        if (k % 64 != 0 && std::string(forced).find("_rs") != std::string::npos) continue;  // the row stream: K % 64
        const GpuRun f = run_gpu(p, h, forced);
        ASSERT_TRUE(within_naive_bound(p, h, f.y, fp64(p, h), naive(p, h), forced));
      }
    }
}

TEST(GpuKernels, SameInputsGiveSameBits) {
  SKIP_WITHOUT_GPU();
  for (const char* c : {"bulk_m8_w1x8_u4_sk8", "bulk_m16_w1x4_u2_sk4", "bulk_m32_w1x4_u2_sk2", "bulk_m8_w1x8_u2_sk4"}) {
    const Problem p{2, 1536, 7168, DType::BF16};
    const HostOperands h = random_operands(p, 5);
    EXPECT_TRUE(bitwise_equal(p, run_gpu(p, h, c).y.data(), run_gpu(p, h, c).y.data())) << c;
  }
}

TEST(GpuKernels, DegenerateSizes) {
  SKIP_WITHOUT_GPU();
  Problem p{3, 40, 0, DType::BF16};
  DeviceArray y(std::vector<uint16_t>(3 * 40, kPoison));
  Options o;
  o.backend = Backend::Cuda;
  gemm(p, nullptr, nullptr, y.get(), o);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (uint16_t v : y.download(3 * 40)) ASSERT_EQ(v, 0) << "K=0 must write zeros";
  Problem empty{0, 40, 64, DType::BF16};
  EXPECT_NO_THROW(gemm(empty, nullptr, nullptr, nullptr, o));
}

}  // namespace
}  // namespace skinnygemm::test
