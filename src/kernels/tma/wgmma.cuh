// wgmma for the TMA family (sm_90a): the warpgroup of the four consumer warps multiplies a stage's 64-row weight tile,
// or each 64-row half of a 128-row one (the 64-row A operand; session 23), by its x tile (the N = token tile operand), both read by the tensor cores straight from the
// swizzled slots the copy engine wrote. mma.sync had every warp ldmatrix the whole x tile per K step: at 64 tokens
// the four warps read 4x the stage's x bytes from shared memory, as many as its weights (docs/kernels.md "Session 6",
// the MMAs adding 3.5-8 us at M = 64). Measured against it in one call (session 22): 0.1-0.3 us faster at M <= 16 and
// 0.2-2.1 us at M = 32-64 on the Kimi-K3 shapes alone. The accumulators land in mma.sync's fragment layout (warp w
// holds rows 16 w + g4 and + 8, tokens 8 j + 2 t4 and + 1 in d[j][0..3]), so the epilogues read them as before;
// tma_gemm.cuh's row_in_tile adds 64 for a 128-row tile's second half.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace skinnygemm::tma {

// The shared-memory matrix descriptor of a K-major tile in the copy engine's 128-byte swizzle: start address in
// 16-byte units (bits 0-13), 8-row groups 1024 bytes apart (stride byte offset, bits 32-45), swizzle mode 1 = 128
// bytes (bits 62-63); the leading byte offset is unused for this layout. A K step of 16 inside the 128-byte row
// is the start address plus 32 bytes (the hardware applies the swizzle to the full address; the slots are
// 1024-byte aligned).
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t shared_address) {
  return (uint64_t{1} << 62) | (uint64_t{1024 >> 4} << 32) | static_cast<uint64_t>((shared_address & 0x3FFFF) >> 4);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

// Keeps the compiler from moving reads or writes of the accumulators across the asynchronous MMAs (their registers are
// written by the tensor cores until wgmma_wait_all returns).
template <int kNt>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[kNt][4]) {
#pragma unroll
  for (int j = 0; j < kNt; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[j][e])::"memory");
}

// d[64 rows x N tokens] += A[64 x 16] B[16 x N]^T, both K-major in shared memory; N = 8 kNt. One specialization per
// (type, N), written once for both types: the instruction differs only in its type suffix (bf16 or f16).
template <typename T, int kNt>
__device__ __forceinline__ void wgmma_k16(float (&d)[kNt][4], uint64_t desc_a, uint64_t desc_b);

#define SKINNYGEMM_WGMMA_K16(T, TY)                                                                    \
  template <>                                                                                          \
  __device__ __forceinline__ void wgmma_k16<T, 1>(float(&d)[1][4], uint64_t desc_a, uint64_t desc_b) { \
    asm volatile(                                                                                      \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                                                    \
        "wgmma.mma_async.sync.aligned.m64n8k16.f32." TY "." TY " {"                                    \
        "%0, %1, %2, %3"                                                                               \
        "}, %4, %5, p, 1, 1, 0, 0;\n}\n"                                                               \
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3])                                   \
        : "l"(desc_a), "l"(desc_b), "r"(1));                                                           \
  }                                                                                                    \
  template <>                                                                                          \
  __device__ __forceinline__ void wgmma_k16<T, 2>(float(&d)[2][4], uint64_t desc_a, uint64_t desc_b) { \
    asm volatile(                                                                                      \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"                                                   \
        "wgmma.mma_async.sync.aligned.m64n16k16.f32." TY "." TY " {"                                   \
        "%0, %1, %2, %3, %4, %5, %6, %7"                                                               \
        "}, %8, %9, p, 1, 1, 0, 0;\n}\n"                                                               \
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                                  \
          "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3])                                   \
        : "l"(desc_a), "l"(desc_b), "r"(1));                                                           \
  }                                                                                                    \
  template <>                                                                                          \
  __device__ __forceinline__ void wgmma_k16<T, 4>(float(&d)[4][4], uint64_t desc_a, uint64_t desc_b) { \
    asm volatile(                                                                                      \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                                   \
        "wgmma.mma_async.sync.aligned.m64n32k16.f32." TY "." TY " {"                                   \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"                         \
        "}, %16, %17, p, 1, 1, 0, 0;\n}\n"                                                             \
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                                  \
          "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                                  \
          "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                                  \
          "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])                                   \
        : "l"(desc_a), "l"(desc_b), "r"(1));                                                           \
  }                                                                                                    \
  template <>                                                                                          \
  __device__ __forceinline__ void wgmma_k16<T, 8>(float(&d)[8][4], uint64_t desc_a, uint64_t desc_b) { \
    asm volatile(                                                                                      \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                   \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {"                                   \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"               \
        "}, %32, %33, p, 1, 1, 0, 0;\n}\n"                                                             \
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                                  \
          "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                                  \
          "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                                  \
          "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                                  \
          "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                                  \
          "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                                  \
          "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                                  \
          "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])                                   \
        : "l"(desc_a), "l"(desc_b), "r"(1));                                                           \
  }

SKINNYGEMM_WGMMA_K16(__nv_bfloat16, "bf16")
SKINNYGEMM_WGMMA_K16(__half, "f16")
#undef SKINNYGEMM_WGMMA_K16

}  // namespace skinnygemm::tma
