// What the skinny kernel families share: parameters, the work decomposition, streaming loads, PDL and
// the deterministic split-K epilogue (warps of a CTA through shared memory, CTAs of a cluster through
// distributed shared memory; fixed summation order, no atomics, no second kernel).
//
// Decomposition (host and device agree through these functions):
//   a warp owns a 16-row tile of w and one K slice; a CTA has warps_n x warps_k warps (warps_n row tiles,
//   warps_k K slices); a cluster of split_k CTAs (grid.x) splits K further; grid.y walks the row blocks.
//   K is walked in chunks of 32: lane (g = lane/4, t = lane%4) streams 16 bytes of rows g and g+8 at
//   k = chunk*32 + 8t, and the same 16 bytes of x for its tokens.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace skinnygemm::cuda {

struct SkinnyParams {
  const void* x;
  const void* w;
  void* y;
  int m, n, k;
  long long ldx, ldw, ldy;  // row strides in elements
  int warps_n, warps_k;     // CTA layout
  int split_k;              // CTAs per cluster along K (== gridDim.x)
  int k_chunks;             // ceil(k / 32)
};

constexpr int kChunkK = 32;  // K elements per chunk: 4 lanes x 8 elements

// Padded row pitch of the FP32 partials so that lanes t = 0..3 (token stride 2) hit different banks.
__host__ __device__ constexpr int partial_pitch(int warps_n) { return 16 * warps_n + 4; }
__host__ __device__ constexpr int partial_floats(int tile_m, int warps_n, int warps_k) {
  return warps_k * tile_m * partial_pitch(warps_n);
}

// Chunk range [begin, end) of K slice s out of slices: balanced, contiguous.
__device__ __forceinline__ void slice_range(int k_chunks, int s, int slices, int& begin, int& end) {
  begin = static_cast<int>((static_cast<long long>(k_chunks) * s) / slices);
  end = static_cast<int>((static_cast<long long>(k_chunks) * (s + 1)) / slices);
}

// Weights are read exactly once: bypass L1 (they would only evict x).
__device__ __forceinline__ uint4 load_stream(const void* ptr) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(ptr));
  return v;
}

// x is re-read by every row block: keep it in L1/L2.
__device__ __forceinline__ uint4 load_cached(const void* ptr) { return __ldg(reinterpret_cast<const uint4*>(ptr)); }

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;"); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

// Sums the partials of every warp (and every CTA of the cluster) in a fixed order and stores y.
// partials: [warps_k][tile_m][pitch] FP32, already written by every warp; called by all threads.
template <typename T, int kTileM>
__device__ __forceinline__ void reduce_and_store(const SkinnyParams& p, float* partials) {
  namespace cg = cooperative_groups;
  const int pitch = partial_pitch(p.warps_n);
  const int rows = 16 * p.warps_n;
  const int outputs = kTileM * rows;  // index = token * rows + row
  const int slice_floats = kTileM * pitch;
  const int threads = blockDim.x;
  __syncthreads();
  // 1. Warps of this CTA, in warp order, into slice 0.
  for (int i = threadIdx.x; i < outputs; i += threads) {
    const int token = i / rows, row = i % rows;
    const int off = token * pitch + row;
    float s = partials[off];
    for (int wk = 1; wk < p.warps_k; ++wk) s += partials[wk * slice_floats + off];
    partials[off] = s;
  }
  const int row0 = blockIdx.y * rows;
  T* y = static_cast<T*>(p.y);
  if (p.split_k == 1) {
    __syncthreads();
    for (int i = threadIdx.x; i < outputs; i += threads) {
      const int token = i / rows, row = i % rows;
      if (token < p.m && row0 + row < p.n) y[token * p.ldy + row0 + row] = from_float<T>(partials[token * pitch + row]);
    }
    return;
  }
  // 2. CTAs of the cluster, in rank order; each rank stores an equal share of the outputs.
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int rank = static_cast<int>(cluster.block_rank());
  const int share = (outputs + p.split_k - 1) / p.split_k;
  const int begin = rank * share;
  const int end = min(outputs, begin + share);
  for (int i = begin + threadIdx.x; i < end; i += threads) {
    const int token = i / rows, row = i % rows;
    if (token >= p.m || row0 + row >= p.n) continue;
    const int off = token * pitch + row;
    float s = 0.f;
    for (int r = 0; r < p.split_k; ++r) s += cluster.map_shared_rank(partials, r)[off];
    y[token * p.ldy + row0 + row] = from_float<T>(s);
  }
  cluster.sync();  // keep every CTA's shared memory alive until all peers have read it
}

}  // namespace skinnygemm::cuda
