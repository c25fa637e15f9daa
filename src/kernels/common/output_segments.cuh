// Where a kernel's output rows go: all to y, or, for a fused projection, each segment's rows to its own
// destination (runtime/backends.h OutputSegment, checked by check_segments before a launch). One parameter
// block and one store for every kernel family that writes segments.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "runtime/backends.h"

namespace skinnygemm::cuda {

// Output row r goes to y[s] at column r - begin[s] for the segment s with begin[s] <= r < begin[s] + rows[s];
// rows in no segment (padding) go nowhere. count 0: every row to the kernel's own y.
struct OutputSegments {
  int count;
  int begin[kMaxOutputSegments], rows[kMaxOutputSegments];
  void* y[kMaxOutputSegments];
  long long ldy[kMaxOutputSegments];
};

// The parameter block of count checked segments (count 0: none).
inline OutputSegments output_segments(const Problem& p, const OutputSegment* segments, int count) {
  check_segments(p, segments, count);
  OutputSegments out{};
  out.count = count;
  for (int s = 0; s < count; ++s) {
    out.begin[s] = static_cast<int>(segments[s].begin);
    out.rows[s] = static_cast<int>(segments[s].rows);
    out.y[s] = segments[s].y;
    out.ldy[s] = segments[s].ldy;
  }
  return out;
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

// Two rounded elements in one word, the first in the low half (the lower address).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float a, float b);
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// Stores one output element of token `token`, row `row`: into y (row stride ldy), or into the segment owning it.
template <typename T>
__device__ __forceinline__ void store_output(void* y, long long ldy, const OutputSegments& seg, int token, int row,
                                             float v) {
  if (seg.count == 0) {
    static_cast<T*>(y)[token * ldy + row] = from_float<T>(v);
    return;
  }
#pragma unroll
  for (int s = 0; s < kMaxOutputSegments; ++s) {
    const int local = row - seg.begin[s];
    if (s < seg.count && local >= 0 && local < seg.rows[s]) {
      static_cast<T*>(seg.y[s])[token * seg.ldy[s] + local] = from_float<T>(v);
      return;
    }
  }
}

// Eight consecutive rows row..row+7 of token `token` (v[i] for row + i; rows at or past n go nowhere): one 16-byte store
// where all eight go to one destination (y, or the first segment that any of them falls in holds all eight, so that
// each row goes where store_output sends it) at a 16-byte aligned address, one store_output per row otherwise.
template <typename T>
__device__ __forceinline__ void store_output8(void* y, long long ldy, const OutputSegments& seg, int n, int token, int row,
                                              const float (&v)[8]) {
  T* dst = nullptr;
  if (row + 8 <= n) {
    if (seg.count == 0) {
      dst = static_cast<T*>(y) + token * ldy + row;
    } else {
      bool decided = false;  // by the first segment that holds any of the eight rows (unrolled: the segments stay in
                             // the parameter bank, as in store_output)
#pragma unroll
      for (int s = 0; s < kMaxOutputSegments; ++s) {
        const int local = row - seg.begin[s];
        if (!decided && s < seg.count && local + 8 > 0 && local < seg.rows[s]) {
          decided = true;
          if (local >= 0 && local + 8 <= seg.rows[s]) dst = static_cast<T*>(seg.y[s]) + token * seg.ldy[s] + local;
        }
      }
    }
  }
  if (dst != nullptr && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
    *reinterpret_cast<uint4*>(dst) =
        make_uint4(pack2<T>(v[0], v[1]), pack2<T>(v[2], v[3]), pack2<T>(v[4], v[5]), pack2<T>(v[6], v[7]));
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (row + i < n) store_output<T>(y, ldy, seg, token, row + i, v[i]);
}

}  // namespace skinnygemm::cuda
