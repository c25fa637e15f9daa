// Access-pattern probe (docs/kernels.md, "What limits the kernels"): times loads-only kernels that read a
// weight matrix in the skinny kernels' fragment pattern (16 rows x 64 bytes per warp instruction) and in a
// row-contiguous pattern (512 bytes of one row per warp instruction), next to the plain stream read and the
// register-ring GEMM itself, each launched 40 times back to back with PDL inside one CUDA graph over
// rotating cold copies. If the fragment probe is as slow as the GEMM, the access pattern is the limit.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude tools/probes/access_pattern.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "kernels/reg/kernel.cuh"
#include "lab/cuda/stream_read.cuh"

#include "probe_harness.h"

using namespace skinnygemm::cuda;
using probe::launch_pdl;
using probe::time_launches;


__device__ __forceinline__ uint32_t fold(const uint4& v) { return v.x ^ v.y ^ v.z ^ v.w; }

// Fragment pattern: warp = 16 rows x one K slice (grid.x * warps slices); lane (g, t) reads rows g and g + 8
// at k = 32 c + 8 t; a ring of kU chunks per lane, like skinny_reg_kernel.
template <int kU>
__global__ void __launch_bounds__(512) frag_probe(const char* w, int n, int k, uint32_t* sink) {
  pdl_launch_dependents();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int row = blockIdx.y * 16 + g;
  int c0, c1;
  slice_range(k / 32, blockIdx.x * warps + warp, gridDim.x * warps, c0, c1);
  const char* pa = w + static_cast<long long>(min(row, n - 1)) * k * 2 + 16 * t;
  const char* pb = w + static_cast<long long>(min(row + 8, n - 1)) * k * 2 + 16 * t;
  uint4 a[kU], b[kU];
  auto load = [&](int c, uint4& ra, uint4& rb) {
    const bool in = c < c1;
    ra = in ? load_stream(pa + c * 64) : make_uint4(0, 0, 0, 0);
    rb = in ? load_stream(pb + c * 64) : make_uint4(0, 0, 0, 0);
  };
#pragma unroll
  for (int j = 0; j < kU; ++j) load(c0 + j, a[j], b[j]);
  uint32_t acc = 0;
  for (int base = c0; base < c1; base += kU) {
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      acc ^= fold(a[j]) ^ fold(b[j]);
      load(base + j + kU, a[j], b[j]);
    }
  }
  pdl_wait();
  if (acc == 0x9e3779b9u && threadIdx.x == 1023) *sink = acc;
}

// Row-contiguous pattern: warp = 16 rows x one K slice in units of 256 elements; every load instruction reads
// 512 contiguous bytes of one row (items ordered unit-major, row-minor); a ring of kU loads per lane.
template <int kU>
__global__ void __launch_bounds__(512) row_probe(const char* w, int n, int k, uint32_t* sink) {
  pdl_launch_dependents();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int u0, u1;
  slice_range(k / 256, blockIdx.x * warps + warp, gridDim.x * warps, u0, u1);
  const int i0 = u0 * 16, i1 = u1 * 16;  // items = (unit, row)
  const int row0 = blockIdx.y * 16;
  auto addr = [&](int i) {
    const int row = min(row0 + (i & 15), n - 1);
    return w + static_cast<long long>(row) * k * 2 + (i >> 4) * 512 + 16 * lane;
  };
  uint4 v[kU];
#pragma unroll
  for (int j = 0; j < kU; ++j) v[j] = i0 + j < i1 ? load_stream(addr(i0 + j)) : make_uint4(0, 0, 0, 0);
  uint32_t acc = 0;
  for (int base = i0; base < i1; base += kU) {
#pragma unroll
    for (int j = 0; j < kU; ++j) {
      acc ^= fold(v[j]);
      const int i = base + j + kU;
      v[j] = i < i1 ? load_stream(addr(i)) : make_uint4(0, 0, 0, 0);
    }
  }
  pdl_wait();
  if (acc == 0x9e3779b9u && threadIdx.x == 1023) *sink = acc;
}

struct Pool {
  char* base = nullptr;
  size_t bytes = 0;
};



int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Pool pool;
  pool.bytes = size_t(1) << 30;
  CHECK(cudaMalloc(&pool.base, pool.bytes));
  CHECK(cudaMemset(pool.base, 0x3c, pool.bytes));  // small finite BF16 values
  uint32_t* sink;
  CHECK(cudaMalloc(&sink, 64));
  void *x, *y;
  CHECK(cudaMalloc(&x, 64 * 16384 * 2));
  CHECK(cudaMemset(x, 0x3c, 64 * 16384 * 2));
  CHECK(cudaMalloc(&y, 64 * 32768 * 2));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int shapes[][2] = {{1536, 7168}, {3648, 7168}, {7168, 1536}, {20480, 7168}, {144, 7168}};
  std::printf("kernel,n,k,config,us,tbps\n");
  for (const auto& sh : shapes) {
    const int n = sh[0], k = sh[1];
    const size_t bytes = size_t(n) * k * 2;
    const int copies = static_cast<int>(std::min<size_t>(64, pool.bytes / bytes));
    auto w_copy = [&](int i) { return pool.base + size_t(i % copies) * bytes; };
    auto report = [&](const char* kernel, const char* config, double us) {
      std::printf("%s,%d,%d,%s,%.3f,%.3f\n", kernel, n, k, config, us, bytes / us * 1e-6);
      std::fflush(stdout);
    };
    char cfg[64];
    for (int bps : {1, 2, 4}) {
      const long long vectors = bytes / 16;
      std::snprintf(cfg, sizeof cfg, "inflight8_bps%d", bps);
      report("stream", cfg, time_launches(s, [&](int i) {
               launch_pdl(stream_read_kernel<8>, dim3(bps * sms), dim3(512), 0, s,
                          reinterpret_cast<const uint4*>(w_copy(i)), vectors, sink);
             }));
    }
    const int row_blocks = (n + 15) / 16;
    for (int warps : {4, 8, 16})
      for (int split : {1, 2, 4}) {
        std::snprintf(cfg, sizeof cfg, "u4_w%d_s%d", warps, split);
        report("frag", cfg, time_launches(s, [&](int i) {
                 launch_pdl(frag_probe<4>, dim3(split, row_blocks), dim3(32 * warps), 0, s, w_copy(i), n, k, sink);
               }));
        std::snprintf(cfg, sizeof cfg, "u8_w%d_s%d", warps, split);
        report("frag", cfg, time_launches(s, [&](int i) {
                 launch_pdl(frag_probe<8>, dim3(split, row_blocks), dim3(32 * warps), 0, s, w_copy(i), n, k, sink);
               }));
        std::snprintf(cfg, sizeof cfg, "u8_w%d_s%d", warps, split);
        report("row", cfg, time_launches(s, [&](int i) {
                 launch_pdl(row_probe<8>, dim3(split, row_blocks), dim3(32 * warps), 0, s, w_copy(i), n, k, sink);
               }));
        std::snprintf(cfg, sizeof cfg, "u16_w%d_s%d", warps, split);
        report("row", cfg, time_launches(s, [&](int i) {
                 launch_pdl(row_probe<16>, dim3(split, row_blocks), dim3(32 * warps), 0, s, w_copy(i), n, k, sink);
               }));
      }
    for (int warps : {4, 8}) {
      SkinnyParams p{};
      p.x = x;
      p.y = y;
      p.m = 1;
      p.n = n;
      p.k = k;
      p.ldx = k;
      p.ldw = k;
      p.ldy = n;
      p.warps_n = 1;
      p.warps_k = warps;
      p.split_k = 1;
      p.k_chunks = (k + 31) / 32;
      p.row_blocks = row_blocks;
      const size_t smem = skinnygemm::partial_floats(8, 1, warps) * 4;
      std::snprintf(cfg, sizeof cfg, "m8_u4_w1x%d_sk1", warps);
      report("reg_gemm_m1", cfg, time_launches(s, [&](int i) {
               SkinnyParams q = p;
               q.w = w_copy(i);
               launch_pdl(skinny_reg_kernel<__nv_bfloat16, 8, 4>, dim3(1, row_blocks), dim3(32 * warps), smem, s, q);
             }));
    }
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
