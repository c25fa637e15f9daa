// Tensor-core skinny GEMM family (mma.sync m16n8k16, FP32 accumulation) with swapped operands:
// weights are the 16-row A operand, tokens the 8-wide B operand, so M = 1..64 costs 1..8 MMAs per
// 16x16 weight block and the kernel stays bound by streaming w.
//
// NOTE: no shared memory or ldmatrix for w. Each lane loads 16 contiguous bytes of two weight rows and
// of x straight into registers and feeds them to the MMA as a *permuted* K order: within a 32-wide chunk,
// lane t's physical elements 8t..8t+3 play logical k {2t, 2t+1, 2t+8, 2t+9} of the first MMA and
// 8t+4..8t+7 those of the second. A and B use the same permutation, and a dot product does not care about
// the order of its terms, so the product is exact while every load stays 16 bytes wide and coalesced.
#pragma once

#include "cuda/kernels/skinny_common.cuh"

namespace skinnygemm::cuda {

template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                          uint32_t b0, uint32_t b1);

template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                                         uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                                  uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Writes a warp's MMA accumulators into the CTA's FP32 partials [wk][token][pitch]: row index wn*16 + g
// (c0, c1) and wn*16 + g + 8 (c2, c3), tokens 2t and 2t+1 of each 8-token column tile.
template <int kTileM>
__device__ __forceinline__ void store_mma_partials(float* partials, const float (&acc)[kTileM / 8][4], int pitch,
                                                   int wk, int wn, int g, int t) {
  float* mine = partials + wk * kTileM * pitch + wn * 16 + g;
#pragma unroll
  for (int i = 0; i < kTileM / 8; ++i) {
    const int token = i * 8 + 2 * t;
    mine[token * pitch] = acc[i][0];
    mine[(token + 1) * pitch] = acc[i][1];
    mine[token * pitch + 8] = acc[i][2];
    mine[(token + 1) * pitch + 8] = acc[i][3];
  }
}

// kTileM: tokens per launch (8, 16, 32, 64) = kTileM / 8 MMA column tiles.
// kUnroll: loop unroll; the chunk ring is ring_stages(kUnroll) deep.
template <typename T, int kTileM, int kUnroll>
__global__ void __launch_bounds__(256, 1) skinny_mma_kernel(const SkinnyParams p) {
  static_assert(kTileM % 8 == 0 && kTileM <= 64, "token tile must be 8..64 in steps of 8 (n8 MMA tiles)");
  static_assert(kUnroll >= 1 && kUnroll <= 8, "unroll is 1..8 chunks");
  constexpr int kTiles = kTileM / 8;
  constexpr int kStages = ring_stages(kUnroll);
  extern __shared__ uint4 smem[];

  const WarpPlace place = warp_place(p);
  auto ring = make_ring<T, kStages, kTiles>(p, place, smem, 8, place.g);  // lane's token: 8i + g
  ring.prologue();
  float* partials = reinterpret_cast<float*>(smem + p.warps_n * p.warps_k * kStages * decltype(ring)::kSlotVecs);
  const int pitch = partial_pitch(p.warps_n);

  int slot = 0;
  for (int blk = 0; blk < place.blocks; ++blk) {
    float acc[kTiles][4];
#pragma unroll
    for (int i = 0; i < kTiles; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    for (int base = place.c_begin; base < place.c_end; base += kUnroll) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        if (base + j < place.c_end) {
          uint4 wa, wb, xv[kTiles];
          ring.read(slot, wa, wb, xv);
          ring.issue_next();  // refills the slot this lane emptied one chunk ago
          slot = slot + 1 == kStages ? 0 : slot + 1;
#pragma unroll
          for (int i = 0; i < kTiles; ++i) {
            mma_16816<T>(acc[i], wa.x, wb.x, wa.y, wb.y, xv[i].x, xv[i].y);
            mma_16816<T>(acc[i], wa.z, wb.z, wa.w, wb.w, xv[i].z, xv[i].w);
          }
        }
      }
    }
    store_mma_partials<kTileM>(partials, acc, pitch, place.wk, place.wn, place.g, place.t);
    reduce_and_store<T, kTileM>(p, partials, static_cast<int>(blockIdx.y + blk * gridDim.y));
  }
  decltype(ring)::drain();  // the zero-filling copies past the last row block
}

}  // namespace skinnygemm::cuda
