// The TMA family's row stream (config tma_m<tile>_r<rows>_b<boxes>_s<stages>_rs): one CTA per 8, 16 or 32 weight rows over
// the whole K, no split, so no reduction leaves the CTA.
//
// Why (docs/kernels.md "Session 39"): the dependent-chain floor is a grid of CTAs that each stream their bytes through a
// ring filled before griddepcontrol.wait and end with nothing to hand over. The split configs pay after their last
// stage (a cluster's reduce-scatter, a lead part's gather); the x1 grid of the main kernel (weights on the MMA's 16-row
// side) needs 16 rows per CTA and carries x in tile_m rows per stage. Here the tokens ride on mma.sync m16n8k16's 16-row
// side and the weights on its 8-wide side, so a CTA may own 8 rows (2112 x 7168: 264 CTAs, two per SM as the floor's);
// x comes per stage in boxes of M token rows (not the tile's), beside a 16 KB weight stage. Probe
// (tools/probes/row_stream.cu, call 1, same process as the floor): 2112 x 7168 8.28 / 8.29 / 8.36 / 8.75 / 8.96 us at M = 1 /
// 2 / 4 / 8 / 16 on 16-row tiles (the shipped clusters of eight 9.39-10.03 in the same call), 3648 x 7168 12.70-12.91 at
// M = 1-8 (14.00-14.05), 1536 x 7168 6.77-7.08 on 8-row tiles at M = 1-8 (7.54-7.59). x once per CTA for the whole K
// (a separate buffer after the wait) was no faster than x per stage at M <= 2 and slower above: not built here.
//   - one producer warp: every slot's weights (one 3D copy of rows x boxes x 64, 128-byte swizzle, evict-first) before the
//     wait, the stage's x box (M rows x boxes x 64) after it;
//   - four consumer warps split each stage's K steps (warp w: steps w, w + 4, ...); ldmatrix reads x rows (tokens past M
//     read token M - 1, whose outputs are never stored) and the weight rows; at the end warps 1-3 hand their sums to warp
//     0 through shared memory, added in warp order (the same bits every run), which stores y.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/common/output_segments.cuh"
#include "kernels/tma/ptx.cuh"
#include "kernels/tma/tma_params.cuh"
#include "kernels/tma/tma_shape.h"

namespace skinnygemm::tma {

// Weight rows 8, 16 or 32; stages of 16 KB of weights (128 / rows boxes of 64 K). TmaParams: y, m, n, k, ldy, k_stages,
// stages, seg and trace are read; the split fields are not.
template <typename T, int kRows>
__global__ void __launch_bounds__(kThreads, 2) row_stream_kernel(const __grid_constant__ CUtensorMap w_map,
                                                                 const __grid_constant__ CUtensorMap x_map,
                                                                 const TmaParams p) {
  constexpr int kBoxes = row_stream_boxes(kRows);
  constexpr int kNt = kRows / 8;                          // 8-row MMA tiles of weights
  constexpr int kWarpSteps = kBoxes * 4 / kConsumerWarps;  // K steps of 16 per warp and stage
  constexpr unsigned kWBytes = kRowStreamStageBytes;
  extern __shared__ char smem_raw[];
  char* smem = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  char* ring = smem + 1024;
  const int S = p.stages, M = p.m, count = p.k_stages;
  // A stage's slot: the weights, then x's M rows of each box (1024-byte aligned, so the swizzle starts at every box).
  const unsigned x_bytes = static_cast<unsigned>(kBoxes * M * kStageBytes);
  const unsigned slot_stride = kWBytes + ((x_bytes + 1023u) & ~1023u);  // as row_stream_smem_bytes(rows, M, stages)
  float* warp_sums = reinterpret_cast<float*>(ring + S * slot_stride);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, tile = static_cast<int>(blockIdx.x);

  if (p.trace && threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    trace_now(p, 0);
    p.trace[static_cast<long long>(kTraceWords) * tile + 3] = sm;
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(full + s, 1), mbar_init(empty + s, kConsumerWarps);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  pdl_launch_dependents();

  if (warp == kConsumerWarps) {  // producer
    if (lane == 0) {
      const uint64_t policy = evict_first_policy();
      const int ahead = count < S ? count : S;
      for (int i = 0; i < ahead; ++i) {  // weights never depend on the previous kernel: every slot before the wait
        mbar_expect_tx(full + i, kWBytes + x_bytes);
        tma_load_3d_hint(ring + i * slot_stride, &w_map, full + i, tile * kRows, i * kBoxes, policy);
      }
      pdl_wait();
      trace_now(p, 1);
      for (int i = 0; i < ahead; ++i) tma_load_3d(ring + i * slot_stride + kWBytes, &x_map, full + i, 0, i * kBoxes);
      for (int i = ahead, s = ahead % S, phase = 0; i < count; ++i) {
        mbar_wait(empty + s, phase);
        mbar_expect_tx(full + s, kWBytes + x_bytes);
        tma_load_3d_hint(ring + s * slot_stride, &w_map, full + s, tile * kRows, i * kBoxes, policy);
        tma_load_3d(ring + s * slot_stride + kWBytes, &x_map, full + s, 0, i * kBoxes);
        if (++s == S) s = 0, phase ^= 1;
      }
    }
    return;
  }

  // Consumers. Nothing global is written before the previous kernel is done (it may still read our outputs).
  pdl_wait();
  const int q = lane >> 3, r8 = lane & 7, g4 = lane >> 2, t4 = lane & 3;
  const int tok_lo = min(r8, M - 1), tok_hi = min(8 + r8, M - 1);  // ldmatrix rows of x within a box of M rows
  float acc[kNt][4];
#pragma unroll
  for (int j = 0; j < kNt; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  if (p.trace) {
    mbar_wait(full, 0);
    if (threadIdx.x == 0) trace_now(p, 4);
  }
  for (int i = 0, s = 0, phase = 0; i < count; ++i) {
    mbar_wait(full + s, phase);
    const uint32_t wb = shared_addr(ring + s * slot_stride), xb = wb + kWBytes;
#pragma unroll
    for (int ws = 0; ws < kWarpSteps; ++ws) {
      const int kb = ws * kConsumerWarps + warp, box = kb >> 2, kk = kb & 3;
      uint32_t a[4];  // tokens 0-7 and 8-15 of K 0-7, then of K 8-15 (mma's A fragment)
      if (M > 8) {
        ldmatrix_x4(a, swizzled(xb, box * M + ((q & 1) ? tok_hi : tok_lo), 2 * kk + (q >> 1)));
      } else {
        ldmatrix_x2(a[0], a[2], swizzled(xb, box * M + tok_lo, 2 * kk + (q & 1)));
        a[1] = a[3] = 0u;
      }
#pragma unroll
      for (int j = 0; j < kNt; ++j) {
        uint32_t b0, b1;  // weight rows 8 j .. 8 j + 7 at K 0-7 and 8-15 of the step
        ldmatrix_x2(b0, b1, swizzled(wb + box * kRows * kStageBytes, 8 * j + r8, 2 * kk + (q & 1)));
        mma<T>(acc[j], a, b0, b1);
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(empty + s);
    if (++s == S) s = 0, phase ^= 1;
  }
  if (p.trace && threadIdx.x == 0) trace_now(p, 5);
  if (warp > 0) {
#pragma unroll
    for (int j = 0; j < kNt; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) warp_sums[(((warp - 1) * kNt + j) * 4 + e) * 32 + lane] = acc[j][e];
  }
  consumers_sync();
  if (warp != 0) return;
#pragma unroll
  for (int w = 1; w < kConsumerWarps; ++w)
#pragma unroll
    for (int j = 0; j < kNt; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[j][e] += warp_sums[(((w - 1) * kNt + j) * 4 + e) * 32 + lane];
  // The D fragment: tokens g4 (e = 0, 1) and g4 + 8 (e = 2, 3), rows 2 t4 and 2 t4 + 1 of 8-row tile j.
#pragma unroll
  for (int j = 0; j < kNt; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int token = g4 + 8 * (e >> 1), row = tile * kRows + 8 * j + 2 * t4 + (e & 1);
      if (token < M && row < p.n) cuda::store_output<T>(p.y, p.ldy, p.seg, token, row, acc[j][e]);
    }
  if (lane == 0) trace_now(p, 2);
}

}  // namespace skinnygemm::tma
