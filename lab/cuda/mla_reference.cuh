// The MLA layer's reference on the GPU (lab/cuda/mla.cu): plain kernels, one thread per output, FP64 sums in
// plain order, BF16 stores at the same places as the layer (lab/mla.h), and an exact softmax over the whole
// context. Nothing is shared with the kernels it checks (mla_kernels.cuh) or with the library's GEMMs. It exists
// because the host reference (lab/mla_reference.cpp) is far too slow at 64 sequences of 128K tokens.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace skinnygemm::cuda::mla_ref {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ double d(bf16 v) { return static_cast<double>(__bfloat162float(v)); }
__device__ __forceinline__ bf16 b(double v) { return __float2bfloat16_rn(static_cast<float>(v)); }

// One thread per row: y = bf16(x · rsqrt(mean(x^2) + eps) · gamma), then `tail` columns copied.
__global__ void rmsnorm(const bf16* x, long long ldx, bf16* y, long long ldy, const bf16* gamma, int rows, int width,
                        int tail, double eps) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  double ss = 0;
  for (int c = 0; c < width; ++c) ss += d(x[r * ldx + c]) * d(x[r * ldx + c]);
  const double inv = 1.0 / sqrt(ss / width + eps);
  for (int c = 0; c < width; ++c) y[r * ldy + c] = b(d(x[r * ldx + c]) * inv * d(gamma[c]));
  for (int c = width; c < width + tail; ++c) y[r * ldy + c] = x[r * ldx + c];
}

// One thread per output: y[t, j] = Σ_i x[t, i] w[j, i]; to y (BF16) or, when yd is set, to yd (FP64, unrounded).
__global__ void linear(const bf16* x, long long ldx, const bf16* w, bf16* y, double* yd, long long ldy, int m, int n,
                       int k) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<long long>(m) * n) return;
  const int t = static_cast<int>(idx / n), j = static_cast<int>(idx % n);
  double s = 0;
  for (int i = 0; i < k; ++i) s += d(x[t * ldx + i]) * d(w[static_cast<long long>(j) * k + i]);
  if (yd) yd[t * ldy + j] = s;
  else y[t * ldy + j] = b(s);
}

// One thread per (t, h, j): y[t, h·y_head + j] = bf16(σ · Σ_i x[t, h·x_head + i] w[h][j][i]).
__global__ void head_proj(const bf16* x, long long ldx, long long x_head, const bf16* w, bf16* y, long long ldy,
                          long long y_head, const bf16* gate, long long ldg, int m, int heads, int n, int k) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<long long>(m) * heads * n) return;
  const int j = static_cast<int>(idx % n), h = static_cast<int>(idx / n % heads), t = static_cast<int>(idx / n / heads);
  double s = 0;
  for (int i = 0; i < k; ++i) s += d(x[t * ldx + h * x_head + i]) * d(w[(static_cast<long long>(h) * n + j) * k + i]);
  if (gate) s /= 1.0 + exp(-d(gate[t * ldg + h * n + j]));
  y[t * ldy + h * y_head + j] = b(s);
}

// Cache row s of sequence t: the new token's (slot: [m][row]) for the last row, else the cache's.
__device__ __forceinline__ const bf16* cache_row(const bf16* cache, long long seq_stride, const bf16* slot, int t,
                                                 int s, int context, int row) {
  return s == context - 1 ? slot + static_cast<long long>(t) * row : cache + t * seq_stride + static_cast<long long>(s) * row;
}

// One thread per (t, h, s): scores[(t·heads + h)·context + s] = scale · (q_lat·c + q_rope·r).
__global__ void scores(const bf16* q_lat, long long ld_qlat, const bf16* q, long long ld_q, long long q_head,
                       long long rope_offset, const bf16* cache, long long seq_stride, const bf16* slot, float* out,
                       int m, int heads, int context, int kv_lora, int rope, double scale) {
  const long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (idx >= static_cast<long long>(m) * heads * context) return;
  const int s = static_cast<int>(idx % context), h = static_cast<int>(idx / context % heads);
  const int t = static_cast<int>(idx / context / heads);
  const bf16* c = cache_row(cache, seq_stride, slot, t, s, context, kv_lora + rope);
  double v = 0;
  for (int l = 0; l < kv_lora; ++l) v += d(q_lat[t * ld_qlat + static_cast<long long>(h) * kv_lora + l]) * d(c[l]);
  for (int r = 0; r < rope; ++r) v += d(q[t * ld_q + h * q_head + rope_offset + r]) * d(c[kv_lora + r]);
  out[idx] = static_cast<float>(v * scale);
}

constexpr int kSoftmaxThreads = 256;

// Block (h, t): the exact softmax of the scores row (overwritten with exp(score - max)), then
// o_lat[t, h·kv_lora + l] = bf16(Σ_s p_s c_s[l] / Σ_s p_s), FP64 sums, one thread per l.
__global__ void __launch_bounds__(kSoftmaxThreads) softmax_output(float* scores, const bf16* cache, long long seq_stride,
                                                                  const bf16* slot, bf16* o_lat, long long ld_olat,
                                                                  int heads, int context, int kv_lora, int rope) {
  __shared__ double red[kSoftmaxThreads];
  const int h = blockIdx.x, t = blockIdx.y, tid = threadIdx.x;
  float* row = scores + (static_cast<long long>(t) * heads + h) * context;
  double mx = -INFINITY;
  for (int s = tid; s < context; s += kSoftmaxThreads) mx = fmax(mx, static_cast<double>(row[s]));
  red[tid] = mx;
  __syncthreads();
  for (int w = kSoftmaxThreads / 2; w > 0; w /= 2) {
    if (tid < w) red[tid] = fmax(red[tid], red[tid + w]);
    __syncthreads();
  }
  mx = red[0];
  __syncthreads();
  double sum = 0;
  for (int s = tid; s < context; s += kSoftmaxThreads) {
    const double p = exp(static_cast<double>(row[s]) - mx);
    row[s] = static_cast<float>(p);
    sum += p;
  }
  red[tid] = sum;
  __syncthreads();
  for (int w = kSoftmaxThreads / 2; w > 0; w /= 2) {
    if (tid < w) red[tid] += red[tid + w];
    __syncthreads();
  }
  sum = red[0];
  for (int l = tid; l < kv_lora; l += kSoftmaxThreads) {
    double v = 0;
    for (int s = 0; s < context; ++s) v += static_cast<double>(row[s]) * d(cache_row(cache, seq_stride, slot, t, s, context, kv_lora + rope)[l]);
    o_lat[t * ld_olat + static_cast<long long>(h) * kv_lora + l] = b(v / sum);
  }
}

}  // namespace skinnygemm::cuda::mla_ref
