// Chain-pair probe (docs/kernels.md, "Session 3"): why the whole step lost 1750 us at M = 8 when the table put a
// stage ring (bulk, next kernel let in at its start) in front of a persistent register-ring grid. Kernels of the
// library, launched back to back with PDL in one graph over rotating cold weight copies, M = 8:
//   A alone, B alone (each chained behind itself), then A -> B -> A -> ... with
//   lib      : as the library launches them (bulk trigger at the start, reg grid = resident clusters)
//   late     : the bulk ring lets the next kernel in after its main loop (SkinnyParams::late_trigger)
//   flat     : the register ring launched with one CTA (cluster) per row block instead of a persistent grid
//   late+flat: both
// Predicted: the pair's time falls from ~35 us (fused.json, separate_us at M = 8) towards the sum of A and B
// alone (~22 us) with "late": the register ring's CTAs (2 per SM by registers) cannot all be resident while the
// stage ring's CTAs hold the SMs, and those that start late stream their whole slice after the others. "flat"
// differs from "lib" only where a register grid has more row blocks than resident clusters (grid.y is printed;
// the register grids here fit in one wave on an empty H200, so "flat" is expected to equal "lib").
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude tools/probes/chain_pairs.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/bulk/kernel.cuh"
#include "kernels/reg/kernel.cuh"
#include "probe_harness.h"

using namespace skinnygemm::cuda;
using bf16 = __nv_bfloat16;

// One GEMM of the chain: a config of the bulk or reg family (tile m8) on an N x K weight.
struct Gemm {
  bool bulk;
  int n, k, warps_n, warps_k, unroll, split;
  std::string name() const {
    return std::string(bulk ? "bulk" : "reg") + "_m8_w" + std::to_string(warps_n) + "x" + std::to_string(warps_k) +
           "_u" + std::to_string(unroll) + "_sk" + std::to_string(split) + "@" + std::to_string(n) + "x" +
           std::to_string(k);
  }
};

using Kernel = void (*)(SkinnyParams);
Kernel kernel_of(const Gemm& g) {
  if (g.bulk) return g.unroll == 2 ? skinny_bulk_kernel<bf16, 8, 2, true> : skinny_bulk_kernel<bf16, 8, 4, true>;
  return g.unroll == 2 ? skinny_reg_kernel<bf16, 8, 2> : skinny_reg_kernel<bf16, 8, 4>;
}

struct Launch {
  Kernel kernel;
  SkinnyParams p;
  dim3 grid, block;
  size_t smem;
};

constexpr int kM = 8;

// The launch of g as the library makes it (flat: one cluster per row block for the register ring too).
Launch make_launch(const Gemm& g, const bf16* x, bf16* y, bool late, bool flat) {
  Launch l{};
  l.kernel = kernel_of(g);
  SkinnyParams& p = l.p;
  p.x = x, p.y = y, p.m = kM, p.n = g.n, p.k = g.k, p.ldx = g.k, p.ldw = g.k, p.ldy = g.n;
  p.warps_n = g.warps_n, p.warps_k = g.warps_k, p.split_k = g.split;
  p.row_blocks = (g.n + 16 * g.warps_n - 1) / (16 * g.warps_n);
  p.k_chunks = g.bulk ? (g.k + skinnygemm::kBulkChunkK - 1) / skinnygemm::kBulkChunkK : (g.k + 31) / 32;
  p.late_trigger = late ? 1 : 0;
  l.block = dim3(32 * g.warps_n * g.warps_k);
  l.smem = g.bulk ? skinnygemm::bulk_launch_smem_bytes(8, kM, g.warps_k, g.unroll, g.split)
                  : skinnygemm::partial_floats(8, g.warps_n, g.warps_k) * 4;
  // The largest limit once: two launches of the same instance may ask for different sizes.
  CHECK(cudaFuncSetAttribute(l.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  int rows = p.row_blocks;
  if (!g.bulk && !flat) {  // the persistent grid: as many clusters as fit at once
    cudaLaunchConfig_t c = {};
    c.gridDim = dim3(g.split, 1, 1);
    c.blockDim = l.block;
    c.dynamicSmemBytes = l.smem;
    cudaLaunchAttribute a;
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = g.split, a.val.clusterDim.y = 1, a.val.clusterDim.z = 1;
    c.attrs = &a;
    c.numAttrs = 1;
    int clusters = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&clusters, l.kernel, &c));
    rows = std::min(rows, clusters);
  }
  l.grid = dim3(g.split, rows);
  return l;
}

void launch(const Launch& l, const bf16* w, cudaStream_t s) {
  cudaLaunchConfig_t c = {};
  c.gridDim = l.grid;
  c.blockDim = l.block;
  c.dynamicSmemBytes = l.smem;
  c.stream = s;
  cudaLaunchAttribute a[2];
  a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a[0].val.programmaticStreamSerializationAllowed = 1;
  a[1].id = cudaLaunchAttributeClusterDimension;
  a[1].val.clusterDim.x = l.grid.x, a[1].val.clusterDim.y = 1, a[1].val.clusterDim.z = 1;
  c.attrs = a;
  c.numAttrs = l.grid.x > 1 ? 2 : 1;  // as the library: a cluster only where K is split
  SkinnyParams p = l.p;
  p.w = w;
  CHECK(cudaLaunchKernelEx(&c, l.kernel, p));
}

int main() {
  const size_t pool_bytes = size_t(3) << 30;
  char* pool;
  CHECK(cudaMalloc(&pool, pool_bytes));
  CHECK(cudaMemset(pool, 0, pool_bytes));  // zero weights: the timing does not depend on the values
  bf16 *x, *y;
  CHECK(cudaMalloc(&x, kM * 32768 * 2));
  CHECK(cudaMemset(x, 0, kM * 32768 * 2));
  CHECK(cudaMalloc(&y, kM * 32768 * 2));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // The pairs the session-3 table put next to each other in the step (M = 8 and, for contrast, M = 4's picks).
  const std::pair<Gemm, Gemm> pairs[] = {
      {{true, 896, 7168, 1, 8, 4, 2}, {false, 3584, 7168, 2, 4, 4, 2}},  // moe.router -> moe.latent_down, M = 8
      {{true, 896, 7168, 1, 8, 2, 4}, {true, 3584, 7168, 1, 4, 2, 1}},   // the same pair with M = 4's picks
      {{false, 3584, 7168, 2, 4, 4, 2}, {true, 1536, 7168, 1, 8, 4, 1}},  // reg -> bulk (latent_down -> gate_up)
      {{true, 2112, 7168, 1, 8, 4, 1}, {false, 6288, 7168, 2, 4, 4, 1}},  // bulk -> a large persistent reg grid
  };
  std::printf("variant,a,b,us_per_launch,us_per_pair,grid_y_a,grid_y_b\n");
  for (const auto& pair : pairs) {
    const Gemm &a = pair.first, &b = pair.second;
    const size_t bytes_a = size_t(a.n) * a.k * 2, bytes_b = size_t(b.n) * b.k * 2;
    const int copies = static_cast<int>(std::min<size_t>(32, pool_bytes / (bytes_a + bytes_b)));
    auto w_a = [&](int i) { return reinterpret_cast<const bf16*>(pool + size_t(i % copies) * (bytes_a + bytes_b)); };
    auto w_b = [&](int i) {
      return reinterpret_cast<const bf16*>(pool + size_t(i % copies) * (bytes_a + bytes_b) + bytes_a);
    };
    for (const Gemm* g : {&a, &b}) {
      const Launch l = make_launch(*g, x, y, false, false);
      const double us = probe::time_launches(s, [&](int i) { launch(l, g == &a ? w_a(i) : w_b(i), s); });
      std::printf("alone,%s,%s,%.3f,%.3f,%u,%u\n", g->name().c_str(), g->name().c_str(), us, 0.0, l.grid.y, l.grid.y);
      std::fflush(stdout);
    }
    const char* names[] = {"lib", "late", "flat", "late+flat"};
    for (int v = 0; v < 4; ++v) {
      const bool late = v == 1 || v == 3, flat = v >= 2;
      const Launch la = make_launch(a, x, y, late, flat), lb = make_launch(b, x, y, late, flat);
      const double us = probe::time_launches(s, [&](int i) {
        if (i % 2 == 0) launch(la, w_a(i / 2), s);
        else launch(lb, w_b(i / 2), s);
      });
      std::printf("%s,%s,%s,%.3f,%.3f,%u,%u\n", names[v], a.name().c_str(), b.name().c_str(), us, 2 * us, la.grid.y,
                  lb.grid.y);
      std::fflush(stdout);
    }
    // Session 4, the shared-memory carveout (preferred percentage of the unified L1/shared memory). At 0a31819
    // both kernels at the largest carveout left the pair as slow as "lib" and the register ring alone went
    // 15.4 -> 27.9 us: its loads in flight need L1, and behind a stage ring the SMs keep the ring's large
    // carveout. Here: the register ring alone at several carveouts ("reg<P>-alone"), and the pair with the
    // stage ring asking for a smaller one ("bulk<P>", the register ring left to the driver).
    if (a.bulk == b.bulk) continue;
    const Launch la = make_launch(a, x, y, false, false), lb = make_launch(b, x, y, false, false);
    const Launch& reg = a.bulk ? lb : la;
    const Launch& bulk = a.bulk ? la : lb;
    auto carve = [&](const Launch& l, int percent) {
      CHECK(cudaFuncSetAttribute(l.kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
    };
    for (int percent : {25, 50, 75, 100}) {
      carve(reg, percent);
      const double us = probe::time_launches(s, [&](int i) { launch(reg, &reg == &la ? w_a(i) : w_b(i), s); });
      const std::string name = (&reg == &la ? a : b).name();
      std::printf("reg%d-alone,%s,%s,%.3f,%.3f,%u,%u\n", percent, name.c_str(), name.c_str(), us, 0.0, reg.grid.y,
                  reg.grid.y);
    }
    carve(reg, cudaSharedmemCarveoutDefault);
    for (int percent : {50, 75}) {
      carve(bulk, percent);
      const std::string name = (&bulk == &la ? a : b).name();
      const double alone = probe::time_launches(s, [&](int i) { launch(bulk, &bulk == &la ? w_a(i) : w_b(i), s); });
      std::printf("bulk%d-alone,%s,%s,%.3f,%.3f,%u,%u\n", percent, name.c_str(), name.c_str(), alone, 0.0,
                  bulk.grid.y, bulk.grid.y);
      const double us = probe::time_launches(s, [&](int i) {
        if (i % 2 == 0) launch(la, w_a(i / 2), s);
        else launch(lb, w_b(i / 2), s);
      });
      std::printf("bulk%d,%s,%s,%.3f,%.3f,%u,%u\n", percent, a.name().c_str(), b.name().c_str(), us, 2 * us, la.grid.y,
                  lb.grid.y);
      std::fflush(stdout);
    }
    carve(bulk, cudaSharedmemCarveoutDefault);
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
