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

// kTileM: tokens per launch (8, 16, 32, 64) = kTileM / 8 MMA column tiles.
// kUnroll: depth of the x register ring and loop unroll; the weight ring is weight_stages(kUnroll) deep.
template <typename T, int kTileM, int kUnroll>
__global__ void __launch_bounds__(256) skinny_mma_kernel(const SkinnyParams p) {
  static_assert(kTileM % 8 == 0 && kTileM <= 64, "token tile must be 8..64 in steps of 8 (n8 MMA tiles)");
  static_assert(kUnroll >= 1 && kUnroll <= 8, "unroll is 1..8 chunks");
  constexpr int kTiles = kTileM / 8;
  constexpr int kStages = weight_stages(kUnroll);
  extern __shared__ uint4 smem[];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wn = warp % p.warps_n, wk = warp / p.warps_n;
  const int row_a = (blockIdx.y * p.warps_n + wn) * 16 + g;  // this lane's two weight rows
  const int row_b = row_a + 8;
  int c_begin, c_end;
  slice_range(p.k_chunks, blockIdx.x * p.warps_k + wk, p.split_k * p.warps_k, c_begin, c_end);

  const T* w = static_cast<const T*>(p.w);
  const T* x = static_cast<const T*>(p.x);
  WeightRing<kStages> ring;
  ring.slots = smem + warp * kStages * 64;
  ring.has_a = row_a < p.n;
  ring.has_b = row_b < p.n;
  ring.row_a = reinterpret_cast<const char*>(w + static_cast<long long>(ring.has_a ? row_a : 0) * p.ldw);
  ring.row_b = reinterpret_cast<const char*>(w + static_cast<long long>(ring.has_b ? row_b : 0) * p.ldw);
  ring.c_begin = c_begin;
  ring.c_end = c_end;
  ring.k = p.k;
  ring.lane = lane;
  ring.t = t;

  // x fragments ride in a register ring kUnroll chunks ahead of their MMA.
  // NOTE: loading x right before its MMA put one L2 round trip per chunk on each warp's critical path;
  // under full HBM load that cost several microseconds per warp (docs/kernels.md).
  uint4 xr[kUnroll][kTiles];
  auto load_x = [&](int chunk, uint4 (&rx)[kTiles]) {
    const int kk = chunk * kChunkK + 8 * t;
    const bool in = chunk < c_end && kk < p.k;
#pragma unroll
    for (int i = 0; i < kTiles; ++i) {
      const int token = i * 8 + g;
      rx[i] = (in && token < p.m) ? load_cached(x + static_cast<long long>(token) * p.ldx + kk) : make_uint4(0, 0, 0, 0);
    }
  };

  // Weights never depend on the previous kernel: they are in flight before the wait; x is read after it.
  for (int s = 0; s < kStages - 1; ++s) ring.issue(c_begin + s);
  pdl_launch_dependents();
  pdl_wait();
#pragma unroll
  for (int j = 0; j < kUnroll; ++j) load_x(c_begin + j, xr[j]);

  float acc[kTiles][4];
#pragma unroll
  for (int i = 0; i < kTiles; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;

  for (int base = c_begin; base < c_end; base += kUnroll) {
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
      // Chunks past the slice hold zeros: the MMA adds nothing, and no branch splits the unrolled loop.
      uint4 wa, wb;
      ring.read(base + j, wa, wb);
      ring.issue(base + j + kStages - 1);  // refills the slot this lane emptied one chunk ago
#pragma unroll
      for (int i = 0; i < kTiles; ++i) {
        mma_16816<T>(acc[i], wa.x, wb.x, wa.y, wb.y, xr[j][i].x, xr[j][i].y);
        mma_16816<T>(acc[i], wa.z, wb.z, wa.w, wb.w, xr[j][i].z, xr[j][i].w);
      }
      load_x(base + j + kUnroll, xr[j]);
    }
  }
  WeightRing<kStages>::drain();  // zero-fills past the slice may still land in the ring we reuse below
  __syncthreads();

  // Partials: [wk][token][pitch], row index wn*16 + (g or g+8); tokens 2t, 2t+1 of each column tile.
  float* partials = reinterpret_cast<float*>(smem);
  const int pitch = partial_pitch(p.warps_n);
  float* mine = partials + wk * kTileM * pitch + wn * 16 + g;
#pragma unroll
  for (int i = 0; i < kTiles; ++i) {
    const int token = i * 8 + 2 * t;
    mine[token * pitch] = acc[i][0];
    mine[(token + 1) * pitch] = acc[i][1];
    mine[token * pitch + 8] = acc[i][2];
    mine[(token + 1) * pitch + 8] = acc[i][3];
  }
  reduce_and_store<T, kTileM>(p, partials);
}

}  // namespace skinnygemm::cuda
