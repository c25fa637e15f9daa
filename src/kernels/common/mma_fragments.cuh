// The swapped-operand tensor-core step of the bulk family (the register ring shared it until 0.2.0):
// mma.sync m16n8k16 (FP32 accumulation) with weights as the 16-row A operand and tokens as the 8-wide B
// operand, so M = 1..64 costs 1..8 MMAs per 16x16 weight block, and the store of a warp's accumulators into the CTA's FP32 partials.
// NOTE: no ldmatrix for w. Each lane loads 16 contiguous bytes of two weight rows and of x (from the
// stage ring's slot) and feeds them to the MMA as a *permuted* K order: within a 32-wide chunk,
// lane t's physical elements 8t..8t+3 play logical k {2t, 2t+1, 2t+8, 2t+9} of the first MMA and
// 8t+4..8t+7 those of the second. A and B use the same permutation, and a dot product does not care about
// the order of its terms, so the product is exact while every load stays 16 bytes wide and coalesced.
#pragma once

#include "kernels/common/skinny_common.cuh"

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

}  // namespace skinnygemm::cuda
