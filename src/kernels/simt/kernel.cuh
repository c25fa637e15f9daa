// CUDA-core skinny GEMM family for the smallest M (1, 2, 4 tokens): FP32 FMAs on 16-byte streaming loads,
// the same work decomposition and epilogue as the tensor-core family (skinny_common.cuh).
// NOTE: FP32 FMA work grows linearly with M; past M = 4 the tensor-core family wins on issue rate
// (published Hopper skinny-GEMM work puts the SIMT->MMA crossover at M = 4..6).
#pragma once

#include "kernels/common/skinny_common.cuh"

namespace skinnygemm::cuda {

__device__ __forceinline__ float2 to_float2(uint32_t v, __nv_bfloat16*) {
  return make_float2(__uint_as_float(v << 16), __uint_as_float(v & 0xffff0000u));
}
__device__ __forceinline__ float2 to_float2(uint32_t v, __half*) {
  return __half22float2(*reinterpret_cast<const __half2*>(&v));
}

// acc += dot(w[0..7], x[0..7]) in a fixed order.
template <typename T>
__device__ __forceinline__ float dot8(float acc, const uint4& w, const uint4& x) {
  const uint32_t wv[4] = {w.x, w.y, w.z, w.w}, xv[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 a = to_float2(wv[i], static_cast<T*>(nullptr));
    const float2 b = to_float2(xv[i], static_cast<T*>(nullptr));
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
  }
  return acc;
}

template <typename T, int kTileM, int kUnroll>
__global__ void __launch_bounds__(256, 1) skinny_simt_kernel(const SkinnyParams p) {
  static_assert(kTileM >= 1 && kTileM <= 8, "the CUDA-core family is for M <= 8");
  static_assert(kUnroll >= 1 && kUnroll <= 8, "unroll is 1..8 chunks");
  constexpr int kStages = ring_stages(kUnroll);
  extern __shared__ uint4 smem[];

  const WarpPlace place = warp_place(p);
  auto ring = make_ring<T, kStages, kTileM>(p, place, smem, 1, 0);  // every lane stages every token
  ring.prologue();
  float* partials = reinterpret_cast<float*>(smem + p.warps_n * p.warps_k * kStages * decltype(ring)::kSlotVecs);
  const int pitch = partial_pitch(p.warps_n);

  int slot = 0;
  for (int blk = 0; blk < place.blocks; ++blk) {
    float acc_a[kTileM], acc_b[kTileM];
#pragma unroll
    for (int i = 0; i < kTileM; ++i) acc_a[i] = acc_b[i] = 0.f;
    for (int base = place.c_begin; base < place.c_end; base += kUnroll) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        if (base + j < place.c_end) {
          uint4 wa, wb, xv[kTileM];
          ring.read(slot, wa, wb, xv);
          ring.issue_next();
          slot = slot + 1 == kStages ? 0 : slot + 1;
#pragma unroll
          for (int i = 0; i < kTileM; ++i) {
            acc_a[i] = dot8<T>(acc_a[i], wa, xv[i]);
            acc_b[i] = dot8<T>(acc_b[i], wb, xv[i]);
          }
        }
      }
    }
    // The 4 lanes of a row group hold K-interleaved partial sums: combine them in a fixed order.
    float* mine = partials + place.wk * kTileM * pitch + place.wn * 16 + place.g;
#pragma unroll
    for (int i = 0; i < kTileM; ++i) {
      float a = acc_a[i], b = acc_b[i];
      a += __shfl_xor_sync(0xffffffffu, a, 1);
      b += __shfl_xor_sync(0xffffffffu, b, 1);
      a += __shfl_xor_sync(0xffffffffu, a, 2);
      b += __shfl_xor_sync(0xffffffffu, b, 2);
      if (place.t == 0) {
        mine[i * pitch] = a;
        mine[i * pitch + 8] = b;
      }
    }
    reduce_and_store<T, kTileM>(p, partials, static_cast<int>(blockIdx.y + blk * gridDim.y));
  }
  decltype(ring)::drain();
}

}  // namespace skinnygemm::cuda
