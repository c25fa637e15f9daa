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

__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;"); }

// A warp's private ring of K chunks in shared memory, filled by cp.async: per chunk, 16 bytes of the lane's
// two weight rows and kXVecs x 16 bytes of x (its tokens at the same K), zero-filled outside the operands.
// Each lane reads back only the bytes it copied itself, so no barrier is needed: cp.async.wait_group makes a
// thread's own copies visible to it.
// NOTE: v1 streamed w through registers (kUnroll x 1 KB in flight per warp) and v2 kept x in a register
// ring kUnroll chunks ahead: both left one round trip (~0.5 us to L2 for x, more to HBM) per kUnroll
// chunks on each warp's critical path, and narrow shapes ran latency-bound (docs/kernels.md). Here w and x
// share one deep ring, so a warp keeps kStages - 1 chunks of both in flight.
template <int kStages, int kXVecs>
struct ChunkRing {
  static constexpr int kSlotVecs = 64 + 32 * kXVecs;  // uint4 per slot: w rows a and b, then x
  uint4* slots;
  const char* row_a;
  const char* row_b;
  const char* x_row[kXVecs];  // this lane's token rows of x (nullptr: token >= M, zero-filled)
  bool has_a, has_b;
  int c_begin, c_end, k, lane, t;

  __device__ __forceinline__ uint4* slot(int chunk) const { return slots + ((chunk - c_begin) % kStages) * kSlotVecs; }
  __device__ __forceinline__ bool in_range(int chunk) const { return chunk < c_end && chunk * kChunkK + 8 * t < k; }
  __device__ __forceinline__ int byte_offset(int chunk) const { return (chunk * kChunkK + 8 * t) * 2; }

  __device__ __forceinline__ void issue_w(int chunk) const {
    const bool in = in_range(chunk);
    const int off = in ? byte_offset(chunk) : 0;
    copy16(slot(chunk) + lane, row_a + off, in && has_a);
    copy16(slot(chunk) + 32 + lane, row_b + off, in && has_b);
  }
  __device__ __forceinline__ void issue_x(int chunk) const {
    const bool in = in_range(chunk);
    const int off = in ? byte_offset(chunk) : 0;
#pragma unroll
    for (int i = 0; i < kXVecs; ++i)
      copy16(slot(chunk) + 64 + 32 * i + lane, x_row[i] ? x_row[i] + off : row_a, in && x_row[i] != nullptr);
  }
  static __device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
  // Chunk's data once the kStages - 2 younger groups may still be in flight.
  __device__ __forceinline__ void read(int chunk, uint4& a, uint4& b, uint4 (&x)[kXVecs]) const {
    asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 2) : "memory");
    const uint4* s = slot(chunk);
    a = s[lane];
    b = s[32 + lane];
#pragma unroll
    for (int i = 0; i < kXVecs; ++i) x[i] = s[64 + 32 * i + lane];
  }
  // Prologue: weights of the first kStages - 1 chunks before the PDL wait (they never depend on the
  // previous kernel), their x after it; then waits for all of them so read() can count groups uniformly.
  __device__ __forceinline__ void prologue() const {
    for (int s = 0; s < kStages - 1; ++s) {
      issue_w(c_begin + s);
      commit();
    }
    pdl_launch_dependents();
    pdl_wait();
    for (int s = 0; s < kStages - 1; ++s) issue_x(c_begin + s);
    commit();
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  }
  static __device__ __forceinline__ void copy16(uint4* dst, const void* src, bool valid) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
  }
  static __device__ __forceinline__ void drain() { asm volatile("cp.async.wait_all;" ::: "memory"); }
};



// Where a lane works: its warp's row tile and K slice, its two weight rows.
struct WarpPlace {
  int lane, warp, g, t, wn, wk, row_a, row_b, c_begin, c_end;
};
__device__ __forceinline__ WarpPlace warp_place(const SkinnyParams& p) {
  WarpPlace w;
  w.lane = threadIdx.x & 31;
  w.warp = threadIdx.x >> 5;
  w.g = w.lane >> 2;
  w.t = w.lane & 3;
  w.wn = w.warp % p.warps_n;
  w.wk = w.warp / p.warps_n;
  w.row_a = (blockIdx.y * p.warps_n + w.wn) * 16 + w.g;
  w.row_b = w.row_a + 8;
  slice_range(p.k_chunks, blockIdx.x * p.warps_k + w.wk, p.split_k * p.warps_k, w.c_begin, w.c_end);
  return w;
}

// The warp's ring in the CTA's shared memory; x vector i holds token i * token_stride + token_offset.
template <typename T, int kStages, int kXVecs>
__device__ __forceinline__ ChunkRing<kStages, kXVecs> make_ring(const SkinnyParams& p, const WarpPlace& w,
                                                                uint4* smem, int token_stride, int token_offset) {
  using Ring = ChunkRing<kStages, kXVecs>;
  Ring r;
  r.slots = smem + w.warp * kStages * Ring::kSlotVecs;
  const T* wt = static_cast<const T*>(p.w);
  const T* xt = static_cast<const T*>(p.x);
  r.has_a = w.row_a < p.n;
  r.has_b = w.row_b < p.n;
  r.row_a = reinterpret_cast<const char*>(wt + static_cast<long long>(r.has_a ? w.row_a : 0) * p.ldw);
  r.row_b = reinterpret_cast<const char*>(wt + static_cast<long long>(r.has_b ? w.row_b : 0) * p.ldw);
#pragma unroll
  for (int i = 0; i < kXVecs; ++i) {
    const int token = i * token_stride + token_offset;
    r.x_row[i] = token < p.m ? reinterpret_cast<const char*>(xt + static_cast<long long>(token) * p.ldx) : nullptr;
  }
  r.c_begin = w.c_begin;
  r.c_end = w.c_end;
  r.k = p.k;
  r.lane = w.lane;
  r.t = w.t;
  return r;
}

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
