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

#include "core/tiling.h"

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

// Chunk range [begin, end) of K slice s out of slices: balanced, contiguous.
__device__ __forceinline__ void slice_range(int k_chunks, int s, int slices, int& begin, int& end) {
  begin = static_cast<int>((static_cast<long long>(k_chunks) * s) / slices);
  end = static_cast<int>((static_cast<long long>(k_chunks) * (s + 1)) / slices);
}

// A warp's private ring of weight chunks in shared memory, filled by cp.async (16 bytes per lane per row,
// zero-filled outside the matrix). Each lane reads back only the bytes it copied itself, so no barrier is
// needed: cp.async.wait_group makes a thread's own copies visible to it.
// NOTE: streaming w through registers capped each warp at kUnroll x 1 KB in flight and made narrow shapes
// latency-bound (one ~0.85 us HBM round trip per kUnroll chunks, docs/kernels.md); the ring holds
// 4 x kUnroll chunks per warp without spending registers.
template <int kStages>
struct WeightRing {
  uint4* slots;  // kStages x 64 uint4: [0, 32) row g of each lane, [32, 64) row g + 8
  const char* row_a;
  const char* row_b;
  bool has_a, has_b;
  int c_begin, c_end, k, lane, t;

  __device__ __forceinline__ void issue(int chunk) const {
    const int slot = (chunk - c_begin) % kStages;
    const int kk = chunk * kChunkK + 8 * t;
    const bool in = chunk < c_end && kk < k;
    copy16(slots + slot * 64 + lane, row_a + (in ? kk * 2 : 0), in && has_a);
    copy16(slots + slot * 64 + 32 + lane, row_b + (in ? kk * 2 : 0), in && has_b);
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  // Waits for chunk (the oldest of the kStages - 1 chunks in flight) and reads this lane's two rows.
  __device__ __forceinline__ void read(int chunk, uint4& a, uint4& b) const {
    asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 2) : "memory");
    const int slot = (chunk - c_begin) % kStages;
    a = slots[slot * 64 + lane];
    b = slots[slot * 64 + 32 + lane];
  }
  static __device__ __forceinline__ void copy16(uint4* dst, const void* src, bool valid) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
  }
  static __device__ __forceinline__ void drain() { asm volatile("cp.async.wait_all;" ::: "memory"); }
};

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
