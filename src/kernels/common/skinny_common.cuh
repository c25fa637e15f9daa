// What the skinny kernel families share: parameters, the work decomposition, streaming loads, PDL and
// the deterministic split-K epilogue (warps of a CTA through shared memory, CTAs of a cluster through
// distributed shared memory; fixed summation order, no atomics, no second kernel).
//
// Decomposition (host and device agree through these functions):
//   a warp owns a 16-row tile of w and one K slice; a CTA has warps_n x warps_k warps (warps_n row tiles,
//   warps_k K slices) and covers one row block at a time; a cluster of split_k CTAs (grid.x) splits K
//   further. The grid is persistent: grid.y CTAs (clusters) walk the row blocks rb = blockIdx.y,
//   blockIdx.y + gridDim.y, ..., and each warp's ring runs on across row blocks, so the pipeline fills once
//   per CTA instead of once per row block.
//   K is walked in chunks of 32: lane (g = lane/4, t = lane%4) streams 16 bytes of rows g and g+8 at
//   k = chunk*32 + 8t, and the same 16 bytes of x for its tokens.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/common/output_segments.cuh"
#include "kernels/common/tiling.h"

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
  int row_blocks;           // ceil(n / (16 warps_n))
  OutputSegments seg;  // fused-kernel rung: the segments' destinations (count 0: write y)
  // Bulk family only, for tools/probes/chain_pairs.cu: 1 = let the next kernel in after the main loop instead
  // of at the start (the library launches with 0).
  int late_trigger;
};

// One instance of a skinny kernel (src/kernels/<family>/<family>_<dtype>.cu).
using SkinnyKernel = void (*)(SkinnyParams);

// Chunk range [begin, end) of K slice s out of slices: balanced, contiguous.
__device__ __forceinline__ void slice_range(int k_chunks, int s, int slices, int& begin, int& end) {
  begin = static_cast<int>((static_cast<long long>(k_chunks) * s) / slices);
  end = static_cast<int>((static_cast<long long>(k_chunks) * (s + 1)) / slices);
}

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;"); }

// Where a lane works: its warp's row tile and K slice, and how many row blocks its CTA walks.
struct WarpPlace {
  int lane, warp, g, t, wn, wk, c_begin, c_end, blocks;
};
__device__ __forceinline__ WarpPlace warp_place(const SkinnyParams& p) {
  WarpPlace w;
  w.lane = threadIdx.x & 31;
  w.warp = threadIdx.x >> 5;
  w.g = w.lane >> 2;
  w.t = w.lane & 3;
  w.wn = w.warp % p.warps_n;
  w.wk = w.warp / p.warps_n;
  slice_range(p.k_chunks, blockIdx.x * p.warps_k + w.wk, p.split_k * p.warps_k, w.c_begin, w.c_end);
  w.blocks = (p.row_blocks - static_cast<int>(blockIdx.y) + static_cast<int>(gridDim.y) - 1) / static_cast<int>(gridDim.y);
  return w;
}

// Stores one output element: into y, or into the segment that owns output row `row`.
template <typename T>
__device__ __forceinline__ void store_output(const SkinnyParams& p, int token, int row, float v) {
  store_output<T>(p.y, p.ldy, p.seg, token, row, v);
}

// Sums the partials of every warp (and every CTA of the cluster) in a fixed order and stores y.
// partials: [warps_k][tile_m][pitch] FP32, already written by every warp; called by all threads.
template <typename T, int kTileM>
__device__ __forceinline__ void reduce_and_store(const SkinnyParams& p, float* partials, int row_block) {
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
  const int row0 = row_block * rows;
  if (p.split_k == 1) {
    __syncthreads();
    for (int i = threadIdx.x; i < outputs; i += threads) {
      const int token = i / rows, row = i % rows;
      if (token < p.m && row0 + row < p.n) store_output<T>(p, token, row0 + row, partials[token * pitch + row]);
    }
    __syncthreads();  // the partials are rewritten for the next row block
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
    store_output<T>(p, token, row0 + row, s);
  }
  cluster.sync();  // keep every CTA's shared memory alive until all peers have read it
}

}  // namespace skinnygemm::cuda
