// The stream-read limit: a plain streaming read of the same bytes, launched the same way (graph of
// back-to-back launches over rotating copies, PDL). The fastest of several variants is the limit, so that
// a weak probe cannot inflate efficiencies.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace skinnygemm::cuda {

// Reads bytes (a multiple of 16) starting at src; writes *sink only if an impossible value appears, so
// that the reads cannot be removed. kInflight loads of 16 bytes per thread per step.
template <int kInflight>
__global__ void __launch_bounds__(512) stream_read_kernel(const uint4* src, long long vectors, uint32_t* sink) {
  asm volatile("griddepcontrol.launch_dependents;");
  uint32_t acc = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kInflight - 1) * stride < vectors; i += kInflight * stride) {
    uint4 v[kInflight];
#pragma unroll
    for (int j = 0; j < kInflight; ++j)
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w)
                   : "l"(src + i + j * stride));
#pragma unroll
    for (int j = 0; j < kInflight; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < vectors; i += stride) {
    const uint4 v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (acc == 0x9e3779b9u && threadIdx.x == 1023) *sink = acc;  // never true: blockDim <= 512
}

}  // namespace skinnygemm::cuda
