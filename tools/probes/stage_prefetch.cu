// Stage-prefetch probe (docs/kernels.md, "What limits the kernels"): can a GEMM hide the PDL wait by landing
// most of its weights in shared memory *before* griddepcontrol.wait? The register ring holds only kU chunks per
// warp when it must wait for x (gemm_structure.cu, deleted in fa961c6: 1.5-2 us lost per call); shared memory holds ~100 KB per SM
// per kernel while leaving room for the next kernel's CTAs, i.e. ~13 MB in flight across the GPU.
//
// Kernel (M = 1, BF16, timing and a correctness check): a CTA owns 16 weight rows and a K slice (grid.x CTAs
// split K; no reduction across them, so split > 1 rows are timing only). The slice is cut into stages of 16
// rows x 256 K (8 KB); a CTA has kSlots stage slots, stage j lives in slot j % kSlots and is consumed by warp
// j % W, which also refills the slot with stage j + kSlots (kSlots % W == 0). Every slot is filled with
// cp.async.bulk (one copy per row, an mbarrier per slot) before the wait; x (the slice's K values) is staged
// in shared memory after it. Trigger: at the start (early) or after the last stage's copies were issued (late).
// Compared in the same run with the library's register-ring kernel (skinny_reg_kernel, reg_m8, late trigger).
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude tools/probes/stage_prefetch.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/bulk/kernel.cuh"
#include "kernels/reg/kernel.cuh"
#include "probe_harness.h"

using namespace skinnygemm::cuda;
using bf16 = __nv_bfloat16;
using probe::launch_pdl;
using probe::time_launches;

constexpr int kStageK = 256;                 // K elements per stage: 8 chunks of 32
constexpr int kRowBytes = kStageK * 2;       // 512 bytes of a row per stage
constexpr int kPitch = kRowBytes + 64;       // rows g and g + 1 of a quarter warp fall in different banks
constexpr int kSlotBytes = 16 * kPitch;

template <int kSlots, bool kLateTrigger>
__global__ void __launch_bounds__(256) stage_kernel(const bf16* x, const bf16* w, bf16* y, int n, int k) {
  extern __shared__ __align__(128) char smem[];
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem);
  char* slots = smem + 128;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  int s0, s1;  // this CTA's stages of the K slice
  slice_range(k / kStageK, blockIdx.x, gridDim.x, s0, s1);
  const int stages = s1 - s0;
  const char* w_rows = reinterpret_cast<const char*>(w + static_cast<long long>(blockIdx.y) * 16 * k);
  char* x_smem = slots + kSlots * kSlotBytes;  // stages * 512 bytes of x
  float* partials = reinterpret_cast<float*>(x_smem + stages * kRowBytes);

  if (!kLateTrigger) pdl_launch_dependents();
  if (threadIdx.x == 0)
    for (int i = 0; i < kSlots; ++i) mbar_init(bars + i, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  // Stage j (of this CTA) into its slot: lane 0 announces the bytes, lanes 0..15 copy one row each.
  auto produce = [&](int j) {
    if (j >= stages) return;
    uint64_t* bar = bars + j % kSlots;
    if (lane == 0) mbar_expect_tx(bar, 16 * kRowBytes);
    __syncwarp();
    if (lane < 16)
      bulk_copy(slots + (j % kSlots) * kSlotBytes + lane * kPitch,
                w_rows + static_cast<long long>(lane) * k * 2 + static_cast<long long>(s0 + j) * kRowBytes, kRowBytes,
                bar);
  };
  for (int j = warp; j < kSlots; j += warps) produce(j);  // every slot, before the wait: weights only
  pdl_wait();
  const uint4* xg = reinterpret_cast<const uint4*>(x + static_cast<long long>(s0) * kStageK);
  for (int i = threadIdx.x; i < stages * kRowBytes / 16; i += blockDim.x) reinterpret_cast<uint4*>(x_smem)[i] = xg[i];
  __syncthreads();

  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int j = warp; j < stages; j += warps) {
    mbar_wait(bars + j % kSlots, static_cast<unsigned>((j / kSlots) & 1));
    const char* base = slots + (j % kSlots) * kSlotBytes;
#pragma unroll
    for (int c = 0; c < kStageK / 32; ++c) {
      const int col = c * 64 + 16 * t;
      const uint4 wa = *reinterpret_cast<const uint4*>(base + g * kPitch + col);
      const uint4 wb = *reinterpret_cast<const uint4*>(base + (g + 8) * kPitch + col);
      const uint4 xv = g == 0 ? *reinterpret_cast<const uint4*>(x_smem + j * kRowBytes + col) : make_uint4(0, 0, 0, 0);
      mma_16816<bf16>(acc, wa.x, wb.x, wa.y, wb.y, xv.x, xv.y);
      mma_16816<bf16>(acc, wa.z, wb.z, wa.w, wb.w, xv.z, xv.w);
    }
    __syncwarp();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // our reads before the copy's writes
    produce(j + kSlots);
  }
  if (kLateTrigger) pdl_launch_dependents();
  if (t == 0) partials[warp * 16 + g] = acc[0], partials[warp * 16 + g + 8] = acc[2];
  __syncthreads();
  if (threadIdx.x < 16) {
    float s = 0.f;
    for (int i = 0; i < warps; ++i) s += partials[i * 16 + threadIdx.x];
    y[blockIdx.y * 16 + threadIdx.x] = __float2bfloat16_rn(s);
  }
}

size_t stage_smem(int slots, int k, int split, int warps) {
  const int stages = (k / kStageK + split - 1) / split;
  return 128 + static_cast<size_t>(slots) * kSlotBytes + static_cast<size_t>(stages) * kRowBytes + warps * 16 * 4;
}

// y = x w^T at M = 1 in double on the host, against the kernel's output (split 1 only).
double max_rel_error(const std::vector<float>& xf, const std::vector<float>& wf, const std::vector<bf16>& y, int n,
                     int k) {
  double worst = 0;
  for (int r = 0; r < n; ++r) {
    double ref = 0, mag = 0;
    for (int i = 0; i < k; ++i) ref += static_cast<double>(xf[i]) * wf[static_cast<size_t>(r) * k + i],
                                mag += std::fabs(static_cast<double>(xf[i]) * wf[static_cast<size_t>(r) * k + i]);
    worst = std::max(worst, std::fabs(ref - static_cast<double>(__bfloat162float(y[r]))) / std::max(mag, 1e-6));
  }
  return worst;
}

template <int kSlots, bool kLate>
void run_stage(cudaStream_t s, const bf16* x, bf16* y, const std::function<const bf16*(int)>& w_copy, int n, int k,
               int warps, int split, int ctas_per_sm_wanted) {
  auto kernel = stage_kernel<kSlots, kLate>;
  const size_t smem = stage_smem(kSlots, k, split, warps);
  if (smem > 227 * 1024) return;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * warps, smem));
  if (per_sm < ctas_per_sm_wanted) return;
  const double us = time_launches(s, [&](int i) {
    launch_pdl(kernel, dim3(split, n / 16), dim3(32 * warps), smem, s, x, w_copy(i), y, n, k);
  });
  std::printf("stage,%d,%d,slots%d_w%d_s%d_%s,%zu,%d,%.3f,%.3f\n", n, k, kSlots, warps, split, kLate ? "late" : "early",
              smem, per_sm, us, 2.0 * n * k / us * 1e-6);
  std::fflush(stdout);
}

template <bool kLate>
void stage_configs(cudaStream_t s, const bf16* x, bf16* y, const std::function<const bf16*(int)>& w_copy, int n, int k) {
  for (int warps : {4, 8})
    for (int split : {1, 2, 4, 8}) {
      // Slots of 9 KB (16 rows x 576 B) plus the slice's x: 4 slots fit 4 CTAs per SM at split 1 of K = 7168,
      // 8 slots 2, 12 and 16 slots 1 (the ctas_per_sm column says what the occupancy API found).
      if (warps == 4) run_stage<4, kLate>(s, x, y, w_copy, n, k, warps, split, 1);
      run_stage<8, kLate>(s, x, y, w_copy, n, k, warps, split, 1);
      run_stage<16, kLate>(s, x, y, w_copy, n, k, warps, split, 1);
      if (warps == 4) run_stage<12, kLate>(s, x, y, w_copy, n, k, warps, split, 1);
    }
}

int main() {
  const size_t pool_bytes = size_t(1) << 30;
  char* pool;
  CHECK(cudaMalloc(&pool, pool_bytes));
  // Small random BF16 weights, the same in every copy, and x: a correctness check on the first copy.
  const int kMaxK = 7168;
  std::vector<float> xf(kMaxK);
  std::vector<bf16> xh(kMaxK);
  for (int i = 0; i < kMaxK; ++i) xh[i] = __float2bfloat16_rn(((i * 37) % 17 - 8) / 16.f), xf[i] = __bfloat162float(xh[i]);
  bf16 *x, *y;
  CHECK(cudaMalloc(&x, kMaxK * 2));
  CHECK(cudaMemcpy(x, xh.data(), kMaxK * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&y, 32768 * 2));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::printf("kernel,n,k,config,smem,ctas_per_sm,us,tbps\n");
  // Session 4 adds the merged MoE shapes: 280 and 376 row blocks, more than one wave of 2 CTAs per SM (the
  // tuner kept cuBLASLt for them), to see whether smaller rings (more CTAs per SM, one wave) win there.
  const int shapes[][2] = {{1536, 7168}, {3648, 7168}, {7168, 1536}, {896, 7168}, {144, 7168}, {2304, 1536},
                           {4480, 7168}, {6016, 7168}};
  for (const auto& sh : shapes) {
    const int n = sh[0], k = sh[1];
    const size_t bytes = size_t(n) * k * 2;
    const int copies = static_cast<int>(std::min<size_t>(64, pool_bytes / bytes));
    std::vector<bf16> wh(static_cast<size_t>(n) * k);
    std::vector<float> wf(wh.size());
    for (size_t i = 0; i < wh.size(); ++i)
      wh[i] = __float2bfloat16_rn((static_cast<int>((i * 2654435761u) % 31) - 15) / 64.f), wf[i] = __bfloat162float(wh[i]);
    for (int c = 0; c < copies; ++c) CHECK(cudaMemcpy(pool + c * bytes, wh.data(), bytes, cudaMemcpyHostToDevice));
    auto w_copy = [&](int i) { return reinterpret_cast<const bf16*>(pool + size_t(i % copies) * bytes); };
    {  // correctness of the stage kernel at split 1 (the probe's timing rows are only worth it if this holds)
      auto kernel = stage_kernel<8, false>;
      const size_t smem = stage_smem(8, k, 1, 4);
      CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      launch_pdl(kernel, dim3(1, n / 16), dim3(128), smem, s, x, w_copy(0), y, n, k);
      CHECK(cudaStreamSynchronize(s));
      std::vector<bf16> yh(n);
      CHECK(cudaMemcpy(yh.data(), y, n * 2, cudaMemcpyDeviceToHost));
      std::printf("check,%d,%d,slots8_w4_s1,0,0,%.3g,0\n", n, k, max_rel_error(xf, wf, yh, n, k));
    }
    stage_configs<false>(s, x, y, w_copy, n, k);
    stage_configs<true>(s, x, y, w_copy, n, k);
    for (int warps : {4, 8})
      for (int split : {1, 2, 4, 8}) {  // the library's register ring, same harness (split > 1 needs a cluster)
        SkinnyParams p{};
        p.x = x, p.y = y, p.m = 1, p.n = n, p.k = k, p.ldx = k, p.ldw = k, p.ldy = n;
        p.warps_n = 1, p.warps_k = warps, p.split_k = split, p.k_chunks = k / 32, p.row_blocks = n / 16;
        if (p.k_chunks < warps * split) continue;
        const size_t smem = skinnygemm::partial_floats(8, 1, warps) * 4;
        cudaLaunchConfig_t c = {};
        c.gridDim = dim3(split, n / 16);
        c.blockDim = dim3(32 * warps);
        c.dynamicSmemBytes = smem;
        c.stream = s;
        cudaLaunchAttribute a[2];
        a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        a[0].val.programmaticStreamSerializationAllowed = 1;
        a[1].id = cudaLaunchAttributeClusterDimension;
        a[1].val.clusterDim.x = split, a[1].val.clusterDim.y = 1, a[1].val.clusterDim.z = 1;
        c.attrs = a;
        c.numAttrs = split > 1 ? 2 : 1;
        const double us = time_launches(s, [&](int i) {
          SkinnyParams q = p;
          q.w = w_copy(i);
          CHECK(cudaLaunchKernelEx(&c, skinny_reg_kernel<bf16, 8, 4>, q));
        });
        std::printf("reg,%d,%d,u4_w1x%d_sk%d,%zu,0,%.3f,%.3f\n", n, k, warps, split, smem, us, bytes / us * 1e-6);
        std::fflush(stdout);
      }
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
