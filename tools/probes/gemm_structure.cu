// GEMM-structure probe (docs/kernels.md, "What limits the kernels"): the register-ring GEMM at M = 1 with
// one part changed at a time, to find where it loses against the loads-only probe of access_pattern.cu:
//   full      the kernel as skinny_reg_kernel runs it (PDL wait after the first kU chunks of w)
//   waitend   PDL wait after the main loop (wrong for a real chain: shows what the early wait costs)
//   nomma     XOR instead of the MMAs (shows what the compute costs)
//   noreduce  every warp stores its own partial (wrong: shows what the shared-memory epilogue costs)
//   xsmem     x staged once per CTA in shared memory after the wait, not in the register ring
//   late      launch_dependents after the main loop instead of at the start (the next kernel's CTAs
//             arrive, and prefetch, while this one drains and reduces)
//   mid       launch_dependents once a warp has issued its last weight load
//   pf        before the wait, every warp asks for its whole weight slice to be prefetched into L2
//             (cp.async.bulk.prefetch.L2, one instruction per row): HBM keeps streaming the next kernel's
//             weights while this one waits for its x, and the loads after the wait hit L2
//   pfef      pf, and the loads mark what they read evict-first in L2 (so they do not push out prefetches)
// CTA = one 16-row tile, its W warps split K; grid.x CTAs split K further (no reduction across them: timing
// only). Timing as in access_pattern.cu: 40 PDL launches per graph over rotating cold copies.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude tools/probes/gemm_structure.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "kernels/mma/kernel.cuh"
#include "kernels/reg/kernel.cuh"

#include "probe_harness.h"

using namespace skinnygemm::cuda;
using probe::launch_pdl;
using probe::time_launches;
using bf16 = __nv_bfloat16;


enum Mode { kFull, kWaitEnd, kNoMma, kNoReduce, kXSmem, kLate, kMid, kPf, kPfEf };
const char* mode_name(int m) {
  const char* names[] = {"full", "waitend", "nomma", "noreduce", "xsmem", "late", "mid", "pf", "pfef"};
  return names[m];
}

__device__ __forceinline__ void prefetch_l2(const void* p, unsigned bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
}
__device__ __forceinline__ uint4 load_evict_first(const void* ptr, uint64_t policy) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr), "l"(policy));
  return v;
}

template <int kU, int kMode>
__global__ void __launch_bounds__(512) gemm_probe(const bf16* x, const bf16* w, bf16* y, int n, int k) {
  extern __shared__ float smem[];
  if (kMode != kLate && kMode != kMid) pdl_launch_dependents();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int row_a = blockIdx.y * 16 + g;
  int c0, c1;
  slice_range(k / 32, blockIdx.x * warps + warp, gridDim.x * warps, c0, c1);
  const bf16* pa = w + static_cast<long long>(row_a) * k + 8 * t;
  const bf16* pb = pa + 8LL * k;
  if ((kMode == kPf || kMode == kPfEf) && lane < 16 && c1 > c0)  // lane r: row r of the tile, the warp's slice
    prefetch_l2(w + static_cast<long long>(blockIdx.y * 16 + lane) * k + c0 * 32, (c1 - c0) * 64);
  uint64_t policy = 0;
  if (kMode == kPfEf) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  uint4 a[kU], b[kU], xr[kU];
  auto load_w = [&](int c, uint4& ra, uint4& rb) {
    const bool in = c < c1;
    if (kMode == kPfEf) {
      ra = in ? load_evict_first(pa + c * 32, policy) : make_uint4(0, 0, 0, 0);
      rb = in ? load_evict_first(pb + c * 32, policy) : make_uint4(0, 0, 0, 0);
    } else {
      ra = in ? load_stream(pa + c * 32) : make_uint4(0, 0, 0, 0);
      rb = in ? load_stream(pb + c * 32) : make_uint4(0, 0, 0, 0);
    }
  };
  auto load_x = [&](int c, uint4& rx) {
    rx = (c < c1 && g == 0) ? load_cached(x + c * 32 + 8 * t) : make_uint4(0, 0, 0, 0);
  };
#pragma unroll
  for (int j = 0; j < kU; ++j) load_w(c0 + j, a[j], b[j]);
  const uint4* xs = reinterpret_cast<const uint4*>(smem);
  if (kMode != kWaitEnd) pdl_wait();
  if (kMode == kXSmem) {  // x[0, chunks c0 of the CTA's first warp .. end of its last]: the whole row here
    uint4* dst = reinterpret_cast<uint4*>(smem);
    for (int i = threadIdx.x; i < k / 8; i += blockDim.x) dst[i] = load_cached(x + 8 * i);
    __syncthreads();
  } else {
#pragma unroll
    for (int j = 0; j < kU; ++j) load_x(c0 + j, xr[j]);
  }
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  uint32_t fold = 0;
  for (int base = c0; base < c1; base += kU) {
    if (kMode == kMid && base + 2 * kU >= c1) pdl_launch_dependents();  // this pass issues the last loads
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      uint4 xv = xr[j];
      if (kMode == kXSmem) xv = (g == 0 && base + j < c1) ? xs[(base + j) * 4 + t] : make_uint4(0, 0, 0, 0);
      if (kMode == kNoMma) {
        fold ^= a[j].x ^ a[j].y ^ a[j].z ^ a[j].w ^ b[j].x ^ b[j].y ^ b[j].z ^ b[j].w ^ xv.x;
      } else {
        mma_16816<bf16>(acc, a[j].x, b[j].x, a[j].y, b[j].y, xv.x, xv.y);
        mma_16816<bf16>(acc, a[j].z, b[j].z, a[j].w, b[j].w, xv.z, xv.w);
      }
      load_w(base + j + kU, a[j], b[j]);
      if (kMode != kXSmem) load_x(base + j + kU, xr[j]);
    }
  }
  if (kMode == kWaitEnd) pdl_wait();
  if (kMode == kLate) pdl_launch_dependents();
  if (kMode == kNoMma) acc[0] = __uint_as_float(fold & 0x3f800000u);
  if (kMode == kNoReduce || kMode == kNoMma) {
    if (t == 0) y[row_a] = __float2bfloat16_rn(acc[0]), y[row_a + 8] = __float2bfloat16_rn(acc[2]);
    return;
  }
  // Fixed-order reduction of the warps' token-0 partials (c0: row g, c2: row g + 8; token 2t = 0 at t = 0).
  float* part = kMode == kXSmem ? smem + k / 2 : smem;  // after k bf16 of x
  if (kMode == kXSmem) __syncthreads();
  if (t == 0) part[warp * 16 + g] = acc[0], part[warp * 16 + g + 8] = acc[2];
  __syncthreads();
  if (threadIdx.x < 16) {
    float s = 0.f;
    for (int i = 0; i < warps; ++i) s += part[i * 16 + threadIdx.x];
    y[blockIdx.y * 16 + threadIdx.x] = __float2bfloat16_rn(s);
  }
}



template <int kU, int kMode>
void run(cudaStream_t s, const bf16* x, bf16* y, const std::function<const bf16*(int)>& w_copy, int n, int k,
         int warps, int split) {
  auto kernel = gemm_probe<kU, kMode>;
  const size_t smem = (kMode == kXSmem ? k * 2 : 0) + 16 * 16 * 4;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, kernel));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * warps, smem));
  const double us = time_launches(s, [&](int i) {
    launch_pdl(kernel, dim3(split, n / 16), dim3(32 * warps), smem, s, x, w_copy(i), y, n, k);
  });
  std::printf("%d,%d,%s,u%d_w%d_s%d,%d,%d,%.3f,%.3f\n", n, k, mode_name(kMode), kU, warps, split, attr.numRegs,
              per_sm, us, 2.0 * n * k / us * 1e-6);
  std::fflush(stdout);
}

template <int kMode>
void modes(cudaStream_t s, const bf16* x, bf16* y, const std::function<const bf16*(int)>& w_copy, int n, int k) {
  for (int warps : {4, 8})
    for (int split : {1, 2, 4, 8}) {
      run<4, kMode>(s, x, y, w_copy, n, k, warps, split);
      run<8, kMode>(s, x, y, w_copy, n, k, warps, split);
    }
}

int main() {
  char* pool;
  const size_t pool_bytes = size_t(1) << 30;
  CHECK(cudaMalloc(&pool, pool_bytes));
  CHECK(cudaMemset(pool, 0x3c, pool_bytes));
  bf16 *x, *y;
  CHECK(cudaMalloc(&x, 16384 * 2));
  CHECK(cudaMemset(x, 0x3c, 16384 * 2));
  CHECK(cudaMalloc(&y, 32768 * 2));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::printf("n,k,mode,config,regs,ctas_per_sm,us,tbps\n");
  const int shapes[][2] = {{1536, 7168}, {3648, 7168}, {7168, 1536}, {144, 7168}, {896, 7168}, {6288, 7168}};
  for (const auto& sh : shapes) {
    const int n = sh[0], k = sh[1];
    const size_t bytes = size_t(n) * k * 2;
    const int copies = static_cast<int>(std::min<size_t>(64, pool_bytes / bytes));
    auto w_copy = [&](int i) { return reinterpret_cast<const bf16*>(pool + size_t(i % copies) * bytes); };
    modes<kFull>(s, x, y, w_copy, n, k);
    modes<kWaitEnd>(s, x, y, w_copy, n, k);
    modes<kLate>(s, x, y, w_copy, n, k);
    modes<kPf>(s, x, y, w_copy, n, k);
    modes<kPfEf>(s, x, y, w_copy, n, k);
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
