// What the skinny kernel families share: parameters, the work decomposition, streaming loads, PDL and
// the deterministic split-K epilogue (warps of a CTA through shared memory, CTAs of a cluster through
// distributed shared memory; fixed summation order, no atomics, no second kernel).
//
// Decomposition (host and device agree through these functions):
//   a warp owns a 16-row tile of w and one K slice; a CTA has warps_n x warps_k warps (warps_n row tiles,
//   warps_k K slices) and covers one row block at a time; a cluster of split_k CTAs (grid.x) splits K
//   further. The grid is persistent: grid.y CTAs (clusters) walk the row blocks rb = blockIdx.y,
//   blockIdx.y + gridDim.y, ..., and each warp's chunk ring runs on across row blocks, so the pipeline
//   fills once per CTA instead of once per row block.
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

// A warp's private ring of K chunks in shared memory, filled by cp.async: per chunk, 16 bytes of the lane's
// two weight rows and kXVecs x 16 bytes of x (its tokens at the same K), zero-filled outside the operands.
// Each lane reads back only the bytes it copied itself, so no barrier is needed: cp.async.wait_group makes a
// thread's own copies visible to it. Chunks are consumed in the order (row block, chunk of the slice) and
// the producer runs kStages - 1 chunks ahead of the consumer, across row-block boundaries.
// NOTE: v1 streamed w through registers (kUnroll x 1 KB in flight per warp) and v2 kept x in a register
// ring kUnroll chunks ahead: both left one round trip (~0.5 us to L2 for x, more to HBM) per kUnroll
// chunks on each warp's critical path, and narrow shapes ran latency-bound (docs/kernels.md). Here w and x
// share one deep ring.
template <int kStages, int kXVecs>
struct ChunkRing {
  static constexpr int kSlotVecs = 64 + 32 * kXVecs;  // uint4 per slot: w rows a and b, then x
  uint4* slots;
  const char* w;              // this lane's row g of row block 0 (row g + 8 is 8 rows further)
  long long block_bytes;      // bytes between the same row of consecutive row blocks of this CTA
  long long row8_bytes;       // 8 rows
  const char* x_row[kXVecs];  // this lane's token rows of x (nullptr: token >= M, zero-filled)
  int n_left_a, n_left_b;     // rows of w at and after this lane's rows a and b in row block 0
  int rows_per_step;          // rows between this CTA's consecutive row blocks
  int c_begin, c_end, k, lane, t, blocks;
  // producer position
  int issue_slot = 0, issue_block = 0, issue_chunk = 0;

  __device__ __forceinline__ bool in_k(int chunk) const { return chunk * kChunkK + 8 * t < k; }

  __device__ __forceinline__ void copy_w(int slot, int block, int chunk) const {
    const bool live = block < blocks && in_k(chunk);
    const long long off = live ? block * block_bytes + (chunk * kChunkK + 8 * t) * 2 : 0;
    const int row_off = block * rows_per_step;
    copy16(slots + slot * kSlotVecs + lane, w + off, live && n_left_a > row_off);
    copy16(slots + slot * kSlotVecs + 32 + lane, w + off + (live ? row8_bytes : 0), live && n_left_b > row_off);
  }
  __device__ __forceinline__ void copy_x(int slot, int block, int chunk) const {
    const bool live = block < blocks && in_k(chunk);
    const int off = live ? (chunk * kChunkK + 8 * t) * 2 : 0;
#pragma unroll
    for (int i = 0; i < kXVecs; ++i)
      copy16(slots + slot * kSlotVecs + 64 + 32 * i + lane, x_row[i] ? x_row[i] + off : w, live && x_row[i] != nullptr);
  }
  __device__ __forceinline__ void advance(int& slot, int& block, int& chunk) const {
    slot = slot + 1 == kStages ? 0 : slot + 1;
    if (++chunk == c_end) {
      chunk = c_begin;
      ++block;
    }
  }
  // Issues the next chunk (w and x) as one group; past the last row block the copies zero-fill.
  __device__ __forceinline__ void issue_next() {
    copy_w(issue_slot, issue_block, issue_chunk);
    copy_x(issue_slot, issue_block, issue_chunk);
    commit();
    advance(issue_slot, issue_block, issue_chunk);
  }
  // Weights of the first kStages - 1 chunks before the PDL wait (they never depend on the previous
  // kernel), their x after it; then waits for all of them so that read() can count groups uniformly.
  __device__ __forceinline__ void prologue() {
    issue_chunk = c_begin;
    int slot = 0, block = 0, chunk = c_begin;
    for (int s = 0; s < kStages - 1; ++s) {
      copy_w(slot, block, chunk);
      commit();
      advance(slot, block, chunk);
    }
    pdl_launch_dependents();
    pdl_wait();
    for (int s = 0; s < kStages - 1; ++s) {
      copy_x(issue_slot, issue_block, issue_chunk);
      advance(issue_slot, issue_block, issue_chunk);
    }
    commit();
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  }
  static __device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
  // The chunk in slot once the kStages - 2 younger groups may still be in flight.
  __device__ __forceinline__ void read(int slot, uint4& a, uint4& b, uint4 (&x)[kXVecs]) const {
    asm volatile("cp.async.wait_group %0;" ::"n"(kStages - 2) : "memory");
    const uint4* s = slots + slot * kSlotVecs;
    a = s[lane];
    b = s[32 + lane];
#pragma unroll
    for (int i = 0; i < kXVecs; ++i) x[i] = s[64 + 32 * i + lane];
  }
  static __device__ __forceinline__ void copy16(uint4* dst, const void* src, bool valid) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
  }
  static __device__ __forceinline__ void drain() { asm volatile("cp.async.wait_all;" ::: "memory"); }
};

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

// The warp's ring in the CTA's shared memory; x vector i holds token i * token_stride + token_offset.
template <typename T, int kStages, int kXVecs>
__device__ __forceinline__ ChunkRing<kStages, kXVecs> make_ring(const SkinnyParams& p, const WarpPlace& w,
                                                                uint4* smem, int token_stride, int token_offset) {
  using Ring = ChunkRing<kStages, kXVecs>;
  Ring r;
  r.slots = smem + w.warp * kStages * Ring::kSlotVecs;
  const int rows_per_cta = 16 * p.warps_n;
  const int row_a = blockIdx.y * rows_per_cta + w.wn * 16 + w.g;  // in this CTA's first row block
  r.rows_per_step = rows_per_cta * static_cast<int>(gridDim.y);
  r.n_left_a = p.n - row_a;
  r.n_left_b = p.n - row_a - 8;
  const T* wt = static_cast<const T*>(p.w);
  r.w = reinterpret_cast<const char*>(wt + static_cast<long long>(row_a < p.n ? row_a : 0) * p.ldw);
  r.block_bytes = static_cast<long long>(r.rows_per_step) * p.ldw * 2;
  r.row8_bytes = 8 * p.ldw * 2;
  const T* xt = static_cast<const T*>(p.x);
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
  r.blocks = w.blocks;
  return r;
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
