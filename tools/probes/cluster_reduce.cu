// Cluster-reduction probe (docs/kernels.md, v6): what split-K across a cluster costs the stage ring, and whether
// reduce_to_leader (ranks > 0 push their sums into rank 0 and exit) beats reduce_and_store (every CTA held for
// two cluster barriers). The probe of session 3 timed the stage ring with no reduction at all: 144x7168 M = 1
// 1.66 us at split 8, against 2.83 us for the library's best config (split 4) with the reduction.
// Per shape, M and config: the two reductions' outputs must be bitwise equal (same summation order), then each
// is timed 40x back to back with PDL in one graph over rotating cold weight copies.
// Predicted: leader 0.5-1 us faster than lib at split 4-8 on the small shapes; equal at split 1.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude tools/probes/cluster_reduce.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/bulk/kernel.cuh"
#include "probe_harness.h"

using namespace skinnygemm::cuda;
using bf16 = __nv_bfloat16;

using Kernel = void (*)(SkinnyParams);

struct Setup {
  Kernel kernel;
  SkinnyParams p;
  cudaLaunchConfig_t c;
  cudaLaunchAttribute a[2];
};

// bulk_m8_w1x<warps>_u<unroll>_sk<split> on N x K at M, with the library's or the leader reduction.
void make(Setup& s, int n, int k, int m, int warps, int unroll, int split, bool leader, const bf16* x, bf16* y,
          cudaStream_t stream) {
  if (leader) s.kernel = unroll == 2 ? skinny_bulk_kernel<bf16, 8, 2, true> : skinny_bulk_kernel<bf16, 8, 4, true>;
  else s.kernel = unroll == 2 ? skinny_bulk_kernel<bf16, 8, 2> : skinny_bulk_kernel<bf16, 8, 4>;
  SkinnyParams& p = s.p;
  p = SkinnyParams{};
  p.x = x, p.y = y, p.m = m, p.n = n, p.k = k, p.ldx = k, p.ldw = k, p.ldy = n;
  p.warps_n = 1, p.warps_k = warps, p.split_k = split;
  p.k_chunks = (k + skinnygemm::kBulkChunkK - 1) / skinnygemm::kBulkChunkK;
  p.row_blocks = (n + 15) / 16;
  // Both reductions get the leader's bytes, so that both run at the same CTAs per SM (printed).
  const size_t smem = skinnygemm::bulk_smem_bytes(8, m, warps, unroll) + skinnygemm::bulk_leader_bytes(8, split);
  CHECK(cudaFuncSetAttribute(s.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  s.c = cudaLaunchConfig_t{};
  s.c.gridDim = dim3(split, p.row_blocks);
  s.c.blockDim = dim3(32 * warps);
  s.c.dynamicSmemBytes = smem;
  s.c.stream = stream;
  s.a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  s.a[0].val.programmaticStreamSerializationAllowed = 1;
  s.a[1].id = cudaLaunchAttributeClusterDimension;
  s.a[1].val.clusterDim.x = split, s.a[1].val.clusterDim.y = 1, s.a[1].val.clusterDim.z = 1;
  s.c.attrs = s.a;
  s.c.numAttrs = split > 1 ? 2 : 1;
}

void run(Setup& s, const bf16* w) {
  SkinnyParams p = s.p;
  p.w = w;
  CHECK(cudaLaunchKernelEx(&s.c, s.kernel, p));
}

int main() {
  const size_t pool_bytes = size_t(1) << 30;
  char* pool;
  CHECK(cudaMalloc(&pool, pool_bytes));
  const int kMaxK = 16384, kMaxN = 4096, kMaxM = 8;
  std::vector<bf16> xh(size_t(kMaxM) * kMaxK);
  for (size_t i = 0; i < xh.size(); ++i)  // small signed values: sums depend on the order of additions
    xh[i] = __float2bfloat16_rn((static_cast<int>((i * 2246822519u) % 61) - 30) / 32.f);
  bf16 *x, *y0, *y1;
  CHECK(cudaMalloc(&x, xh.size() * 2));
  CHECK(cudaMemcpy(x, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&y0, size_t(kMaxM) * kMaxN * 2));
  CHECK(cudaMalloc(&y1, size_t(kMaxM) * kMaxN * 2));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("kind,n,k,m,config,reduction,us,ctas_per_sm\n");
  const int shapes[][2] = {{144, 7168}, {104, 16384}, {256, 7168}, {896, 7168}, {1536, 7168}, {1000, 2048}};
  for (const auto& sh : shapes) {
    const int n = sh[0], k = sh[1];
    const size_t bytes = size_t(n) * k * 2;
    const int copies = static_cast<int>(std::min<size_t>(64, pool_bytes / bytes));
    std::vector<bf16> wh(size_t(n) * k);
    for (size_t i = 0; i < wh.size(); ++i)
      wh[i] = __float2bfloat16_rn((static_cast<int>((i * 2654435761u) % 31) - 15) / 64.f);
    for (int c = 0; c < copies; ++c) CHECK(cudaMemcpy(pool + c * bytes, wh.data(), bytes, cudaMemcpyHostToDevice));
    auto w_copy = [&](int i) { return reinterpret_cast<const bf16*>(pool + size_t(i % copies) * bytes); };
    for (int m : {1, 8})
      for (int warps : {4, 8})
        for (int unroll : {2, 4})
          for (int split : {1, 2, 4, 8}) {
            if ((k + 255) / 256 < split) continue;
            char config[64];
            std::snprintf(config, sizeof config, "bulk_m8_w1x%d_u%d_sk%d", warps, unroll, split);
            Setup lib, leader;
            make(lib, n, k, m, warps, unroll, split, false, x, y0, stream);
            make(leader, n, k, m, warps, unroll, split, true, x, y1, stream);
            if (leader.c.dynamicSmemBytes > 227 * 1024) continue;
            // Same inputs, both reductions: the bits must match.
            CHECK(cudaMemsetAsync(y0, 0xff, size_t(m) * n * 2, stream));
            CHECK(cudaMemsetAsync(y1, 0x7f, size_t(m) * n * 2, stream));
            run(lib, w_copy(0));
            run(leader, w_copy(0));
            CHECK(cudaStreamSynchronize(stream));
            std::vector<bf16> a(size_t(m) * n), b(size_t(m) * n);
            CHECK(cudaMemcpy(a.data(), y0, a.size() * 2, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(b.data(), y1, b.size() * 2, cudaMemcpyDeviceToHost));
            const bool same = std::memcmp(a.data(), b.data(), a.size() * 2) == 0;
            std::printf("check,%d,%d,%d,%s,%s,0,0\n", n, k, m, config, same ? "bitwise-equal" : "DIFFERENT");
            for (Setup* s : {&lib, &leader}) {
              int per_sm = 0;  // without the cluster constraint: what shared memory and threads allow
              CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s->kernel, s->c.blockDim.x,
                                                                  s->c.dynamicSmemBytes));
              const double us = probe::time_launches(stream, [&](int i) { run(*s, w_copy(i)); });
              std::printf("time,%d,%d,%d,%s,%s,%.3f,%d\n", n, k, m, config, s == &lib ? "lib" : "leader", us, per_sm);
            }
            std::fflush(stdout);
          }
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
