// Cluster placement probe (docs/kernels.md "Session 36"): where the hardware puts the CTAs of the TMA family's cluster
// grids, and how many of them share an SM. Session 34 (part 1) measured the ring alone of the seeds' clusters of eight
// (r64_b2_s3_x8 on 2112 x 7168: 33 clusters, 264 CTAs, two per SM's worth) 0.7 us slower than stream-K's ring over the
// same bytes (7.72 against 7.01 us). A cluster's CTAs must sit in one GPC at once; if the GPCs' SM counts do not divide
// into whole clusters at two CTAs per SM, some SMs take a third CTA (or some clusters wait for a second wave), and
// those SMs' rings share their bandwidth. Hypothesis to check: some SMs carry three of the seeds' cluster CTAs.
//
// Part 1, the GPC map: a CTA of 160 threads that holds its SM for a while, launched at one CTA per SM in clusters of
// 16 (if the driver allows non-portable sizes), 8, 4 and 2; SMs that ever shared a cluster are one GPC (union-find).
// Part 2, each config of argv ("N:config", e.g. 2112:tma_m8_r64_b2_s3_x8; defaults: the step's clustered picks): the
// real kernel's occupancy (cudaOccupancyMaxActiveBlocksPerMultiprocessor, cudaOccupancyMaxActiveClusters), then its
// grid (tiles x cluster CTAs) launched with the holding kernel at the same CTAs per SM (shared memory padded so that
// the occupancy API agrees), each CTA's SM and entry time recorded: CTAs per SM, CTAs per GPC, and how many entered
// only after the first ones left (a second wave).
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Iinclude tools/probes/cluster_placement.cu -lcuda
// Output: "gpc,<id>,<sms>,<sm list>" rows, then per config "place,<N>,<config>,..." and "sm_load,..." rows.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/tma/tma_gemm.cuh"
#include "probe_harness.h"

using bf16 = __nv_bfloat16;
using namespace skinnygemm::tma;

// Per CTA: {SM, cluster id, rank in the cluster, entry time (ns)}; thread 0 holds the SM for hold_ns after entry.
__global__ void __launch_bounds__(kThreads) hold_sm(unsigned long long* out, unsigned long long hold_ns) {
  if (threadIdx.x == 0) {
    unsigned sm, cluster, rank;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const unsigned long long t0 = global_ns();
    unsigned long long* mine = out + 4ull * blockIdx.x;
    mine[0] = sm, mine[1] = cluster, mine[2] = rank, mine[3] = t0;
    while (global_ns() - t0 < hold_ns) {
    }
  }
  __syncthreads();
}

struct Cta {
  unsigned sm, cluster, rank;
  unsigned long long t0;
};

// A launch of `ctas` CTAs of kThreads in clusters of `cluster` with `smem` bytes each (*attr holds the cluster shape).
cudaLaunchConfig_t cluster_launch(int ctas, int cluster, size_t smem, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(ctas);
  c.blockDim = dim3(kThreads);
  c.dynamicSmemBytes = smem;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = cluster, attr->val.clusterDim.y = 1, attr->val.clusterDim.z = 1;
  c.attrs = attr;
  c.numAttrs = 1;
  return c;
}

// Launches hold_sm over `ctas` CTAs in clusters of `cluster` with `smem` bytes each and returns every CTA's record.
std::vector<Cta> place(int ctas, int cluster, size_t smem, unsigned long long hold_ns) {
  unsigned long long* out = nullptr;
  CHECK(cudaMalloc(&out, 32ull * ctas));
  CHECK(cudaMemset(out, 0, 32ull * ctas));
  cudaLaunchAttribute a;
  const cudaLaunchConfig_t c = cluster_launch(ctas, cluster, smem, &a);
  CHECK(cudaLaunchKernelEx(&c, hold_sm, out, hold_ns));
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> host(4ull * ctas);
  CHECK(cudaMemcpy(host.data(), out, 32ull * ctas, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(out));
  std::vector<Cta> r(ctas);
  for (int i = 0; i < ctas; ++i)
    r[i] = {static_cast<unsigned>(host[4 * i]), static_cast<unsigned>(host[4 * i + 1]),
            static_cast<unsigned>(host[4 * i + 2]), host[4 * i + 3]};
  return r;
}

int max_clusters(const void* kernel, int cluster, size_t smem) {
  cudaLaunchAttribute a;
  const cudaLaunchConfig_t c = cluster_launch(cluster, cluster, smem, &a);
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kernel, &c) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return n;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int i) { return parent[i] == i ? i : parent[i] = find(parent[i]); }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

// The real kernel of a config's (rows, token tile, boxes): its occupancy decides the CTAs per SM.
const void* kernel_for(int rows, int tile_m, int boxes) {
  if (boxes != 2) return nullptr;
  if (rows == 64 && tile_m == 8) return reinterpret_cast<const void*>(tma_gemm_kernel<bf16, 64, 8, 2>);
  if (rows == 64 && tile_m == 16) return reinterpret_cast<const void*>(tma_gemm_kernel<bf16, 64, 16, 2>);
  if (rows == 32 && tile_m == 8) return reinterpret_cast<const void*>(tma_gemm_kernel<bf16, 32, 8, 2>);
  if (rows == 32 && tile_m == 16) return reinterpret_cast<const void*>(tma_gemm_kernel<bf16, 32, 16, 2>);
  return nullptr;
}

int main(int argc, char** argv) {
  int dev = 0, sms = 0, smem_sm = 0, smem_block = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  CHECK(cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CHECK(cudaFuncSetAttribute(hold_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_block));
  const bool non_portable = cudaFuncSetAttribute(hold_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
  cudaGetLastError();
  std::printf("device,sms=%d,smem_per_sm=%d,smem_per_block=%d,non_portable_clusters=%d\n", sms, smem_sm, smem_block,
              non_portable ? 1 : 0);

  // Part 1: the GPC map, from clusters at one CTA per SM (more than half an SM's shared memory each).
  const size_t one_per_sm = static_cast<size_t>(smem_sm) / 2 + 4096;
  UnionFind gpc(sms);
  for (int round = 0; round < 3; ++round)
    for (int cluster : {16, 8, 4, 2}) {
      if (cluster > 8 && !non_portable) continue;
      const int n = max_clusters(reinterpret_cast<const void*>(hold_sm), cluster, one_per_sm);
      if (n <= 0) continue;
      std::map<unsigned, unsigned> first_sm;  // cluster id -> an SM of it
      for (const Cta& c : place(n * cluster, cluster, one_per_sm, 20000)) {
        auto it = first_sm.find(c.cluster);
        if (it == first_sm.end()) first_sm[c.cluster] = c.sm;
        else gpc.join(static_cast<int>(c.sm), static_cast<int>(it->second));
      }
      if (round == 0) std::printf("clusters_at_one_per_sm,%d,%d\n", cluster, n);
    }
  std::map<int, std::vector<int>> groups;
  for (int s = 0; s < sms; ++s) groups[gpc.find(s)].push_back(s);
  std::vector<int> gpc_of(sms), gpc_sms;
  int id = 0;
  for (auto& [root, members] : groups) {
    std::printf("gpc,%d,%zu,", id, members.size());
    for (size_t i = 0; i < members.size(); ++i) std::printf("%s%d", i ? " " : "", members[i]), gpc_of[members[i]] = id;
    std::printf("\n");
    gpc_sms.push_back(static_cast<int>(members.size()));
    ++id;
  }

  // Part 2: each config's grid.
  std::vector<std::string> items;
  for (int i = 1; i < argc; ++i) items.push_back(argv[i]);
  if (items.empty())
    items = {"2112:tma_m8_r64_b2_s3_x8", "2112:tma_m16_r64_b2_s3_x8", "1536:tma_m8_r64_b2_s4_x8",
             "1536:tma_m16_r64_b2_s4_x8", "3648:tma_m8_r64_b2_s4_x4",  "3648:tma_m16_r64_b2_s4_x4",
             "2304:tma_m8_r64_b2_s4_x4", "2112:tma_m8_r64_b2_s4_x4", "2112:tma_m8_r32_b2_s8_x2",
             "2112:tma_m8_r32_b2_s6_x4"};
  for (const std::string& item : items) {
    int n = 0, tile_m = 0, rows = 0, boxes = 0, stages = 0, cluster = 0;
    if (std::sscanf(item.c_str(), "%d:tma_m%d_r%d_b%d_s%d_x%d", &n, &tile_m, &rows, &boxes, &stages, &cluster) != 6 ||
        cluster < 2) {
      std::fprintf(stderr, "skipped '%s': expected N:tma_m<tile>_r<rows>_b<boxes>_s<stages>_x<cluster>\n", item.c_str());
      continue;
    }
    const void* kernel = kernel_for(rows, tile_m, boxes);
    if (!kernel) {
      std::fprintf(stderr, "skipped '%s': no instance of r%d m%d b%d in this probe\n", item.c_str(), rows, tile_m, boxes);
      continue;
    }
    const size_t smem = static_cast<size_t>(smem_bytes(rows, tile_m, stages, boxes, cluster));
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_block));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, kernel));
    const int clusters_real = max_clusters(kernel, cluster, smem);
    // The holding kernel at the real kernel's CTAs per SM: its shared memory grown until no more fit.
    size_t hold_smem = smem;
    int hold_per_sm = 0;
    for (;; hold_smem += 1024) {
      CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&hold_per_sm, hold_sm, kThreads, hold_smem));
      if (hold_per_sm <= per_sm || hold_smem + 1024 > static_cast<size_t>(smem_block)) break;
    }
    const int clusters_hold = max_clusters(reinterpret_cast<const void*>(hold_sm), cluster, hold_smem);
    const int tiles = (n + rows - 1) / rows, ctas = tiles * cluster;
    const unsigned long long hold_ns = 50000;
    const std::vector<Cta> r = place(ctas, cluster, hold_smem, hold_ns);
    unsigned long long t_first = ~0ull;
    for (const Cta& c : r) t_first = std::min(t_first, c.t0);
    std::vector<int> on_sm(sms, 0), gpc_ctas(id, 0);
    int late = 0;
    for (const Cta& c : r) {
      if (c.t0 - t_first > hold_ns / 2) {
        ++late;
        continue;
      }
      ++on_sm[c.sm], ++gpc_ctas[gpc_of[c.sm]];
    }
    std::map<int, int> hist;  // CTAs on an SM -> SMs
    for (int s = 0; s < sms; ++s) ++hist[on_sm[s]];
    std::printf("place,%d,%s,regs=%d,smem=%zu,ctas_per_sm=%d,max_clusters=%d,hold_per_sm=%d,hold_max_clusters=%d,"
                "ctas=%d,clusters=%d,late=%d,sms_by_ctas=",
                n, item.c_str() + item.find(':') + 1, attr.numRegs, smem, per_sm, clusters_real, hold_per_sm,
                clusters_hold, ctas, tiles, late);
    for (auto& [k, v] : hist) std::printf("%d:%d ", k, v);
    std::printf("\nsm_load,%d,%s,ctas_over_sms_by_gpc=", n, item.c_str() + item.find(':') + 1);
    for (int g = 0; g < id; ++g) std::printf("%d/%d ", gpc_ctas[g], gpc_sms[g]);
    std::printf("\n");
  }
  return 0;
}
