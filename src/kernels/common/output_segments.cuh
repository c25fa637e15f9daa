// Where a kernel's output rows go: all to y, or, for a fused projection, each segment's rows to its own
// destination (runtime/backends.h OutputSegment, checked by check_segments before a launch). One parameter
// block and one store for every kernel family that writes segments.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

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

}  // namespace skinnygemm::cuda
