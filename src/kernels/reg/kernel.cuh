// Tensor-core skinny GEMM family with a register ring (v1 in docs/kernels.md): the same swapped-operand MMAs
// as kernels/common/mma_fragments.cuh, but each lane keeps kUnroll chunks of its two weight rows and of x in registers, loaded
// straight from global memory with 16-byte loads. No shared memory besides the FP32 partials.
// NOTE: the simplest design measured fastest on most H200 sweeps (2026-11-29): fewer instructions per byte
// than the cp.async ring, at the price of kUnroll KB in flight per warp.
#pragma once

#include "kernels/common/skinny_common.cuh"
#include "kernels/common/mma_fragments.cuh"

namespace skinnygemm::cuda {

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

template <typename T, int kTileM, int kUnroll>
__global__ void __launch_bounds__(256) skinny_reg_kernel(const SkinnyParams p) {
  static_assert(kTileM % 8 == 0 && kTileM <= 64, "token tile must be 8..64 in steps of 8 (n8 MMA tiles)");
  static_assert(kUnroll >= 1 && kUnroll <= 8, "unroll is 1..8 chunks");
  constexpr int kTiles = kTileM / 8;
  extern __shared__ float reg_partials[];

  const WarpPlace place = warp_place(p);
  const int lane_k = 8 * place.t;  // this lane's 8 elements in every 32-wide chunk
  const T* x = static_cast<const T*>(p.x);
  const int pitch = partial_pitch(p.warps_n);

  for (int blk = 0; blk < place.blocks; ++blk) {
    const int row_block = static_cast<int>(blockIdx.y + blk * gridDim.y);
    const int row_a = row_block * 16 * p.warps_n + place.wn * 16 + place.g;  // this lane's two weight rows
    const int row_b = row_a + 8;
    const bool has_a = row_a < p.n, has_b = row_b < p.n;
    const T* w = static_cast<const T*>(p.w);
    const T* wa_ptr = w + static_cast<long long>(has_a ? row_a : 0) * p.ldw + lane_k;
    const T* wb_ptr = w + static_cast<long long>(has_b ? row_b : 0) * p.ldw + lane_k;

    // Rolling ring of kUnroll chunks: slot j holds chunk base + j, its w rows and its x fragments.
    uint4 wa[kUnroll], wb[kUnroll], xr[kUnroll][kTiles];
    auto load_w = [&](int chunk, uint4& ra, uint4& rb) {
      const int kk = chunk * kChunkK;
      const bool in = chunk < place.c_end && kk + lane_k < p.k;
      ra = (in && has_a) ? load_stream(wa_ptr + kk) : make_uint4(0, 0, 0, 0);
      rb = (in && has_b) ? load_stream(wb_ptr + kk) : make_uint4(0, 0, 0, 0);
    };
    auto load_x = [&](int chunk, uint4 (&rx)[kTiles]) {
      const int kk = chunk * kChunkK + lane_k;
      const bool in = chunk < place.c_end && kk < p.k;
#pragma unroll
      for (int i = 0; i < kTiles; ++i) {
        const int token = i * 8 + place.g;
        rx[i] = (in && token < p.m) ? load_cached(x + static_cast<long long>(token) * p.ldx + kk)
                                    : make_uint4(0, 0, 0, 0);
      }
    };
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) load_w(place.c_begin + j, wa[j], wb[j]);
    if (blk == 0) pdl_wait();  // weights never depend on the previous kernel: in flight before the wait
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) load_x(place.c_begin + j, xr[j]);

    float acc[kTiles][4];
#pragma unroll
    for (int i = 0; i < kTiles; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    for (int base = place.c_begin; base < place.c_end; base += kUnroll) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        // Chunks past the slice hold zeros: the MMA adds nothing, and no branch splits the unrolled ring.
#pragma unroll
        for (int i = 0; i < kTiles; ++i) {
          mma_16816<T>(acc[i], wa[j].x, wb[j].x, wa[j].y, wb[j].y, xr[j][i].x, xr[j][i].y);
          mma_16816<T>(acc[i], wa[j].z, wb[j].z, wa[j].w, wb[j].w, xr[j][i].z, xr[j][i].w);
        }
        load_w(base + j + kUnroll, wa[j], wb[j]);
        load_x(base + j + kUnroll, xr[j]);
      }
    }
    // NOTE: the next kernel is let in only once this CTA's weights have all arrived, not at the start:
    // measured on the H200 (tools/probes/gemm_structure.cu, deleted with the mma family in fa961c6; docs/kernels.md), an early trigger lets its CTAs
    // take SM slots and bandwidth for a prefetch they cannot use before this grid ends; 3648x7168 M=1
    // u4 w1x8: 19.4 -> 16.0 us, 1536x7168 split 4: 7.34 -> 7.18 us.
    if (blk == place.blocks - 1) pdl_launch_dependents();
    store_mma_partials<kTileM>(reg_partials, acc, pitch, place.wk, place.wn, place.g, place.t);
    reduce_and_store<T, kTileM>(p, reg_partials, row_block);
  }
}

}  // namespace skinnygemm::cuda
