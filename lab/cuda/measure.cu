// The GPU half of the benchmark protocol (docs/measuring.md): cold weights in rotating copies
// (>= 4x L2, >= 2 copies), one CUDA graph of R launches, warm-up, >= 5 samples of >= 20 replays, median per
// call; cuBLASLt and the stream-read limit measured the same way in the same process.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "lab/bench_device.h"
#include "runtime/backends.h"
#include "runtime/memory.h"
#include "lab/cuda/bench_common.cuh"
#include "backends/cuda/check.cuh"
#include "backends/cuda/cublaslt.h"
#include "kernels/tma/tma_family.h"

namespace skinnygemm::cuda {

namespace {

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

template <typename T>
__device__ double to_double(uint16_t v);
template <>
__device__ double to_double<__nv_bfloat16>(uint16_t v) { return __bfloat162float(__ushort_as_bfloat16(v)); }
template <>
__device__ double to_double<__half>(uint16_t v) { return __half2float(__ushort_as_half(v)); }

// FP64 reference, one thread per output.
template <typename T>
__global__ void reference_f64(const uint16_t* x, const uint16_t* w, double* out, int m, int n, int k, long long ldx,
                              long long ldw) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(m) * n) return;
  const int token = static_cast<int>(i / n), row = static_cast<int>(i % n);
  double s = 0;
  for (int kk = 0; kk < k; ++kk) s += to_double<T>(x[token * ldx + kk]) * to_double<T>(w[row * ldw + kk]);
  out[i] = s;
}

struct Buffers {
  Problem p;
  int copies = 0;
  int64_t w_stride_bytes = 0, y_stride_bytes = 0, probe_pad = 0;
  uint16_t* w = nullptr;  // copies x w_stride_bytes (+ probe_pad so the probe can read total_bytes from any copy)
  uint16_t* x = nullptr;
  uint16_t* y = nullptr;  // copies x y_stride_bytes
  uint32_t* sink = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<double> reference;  // FP64 y of copy 0, computed on first use

  explicit Buffers(const Problem& problem, int64_t l2_bytes) : p(problem) {
    try {
      allocate(l2_bytes);
    } catch (...) {
      release();
      cudaGetLastError();  // a failed allocation must not surface as the next call's error
      throw;
    }
  }
  ~Buffers() { release(); }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  void allocate(int64_t l2_bytes) {
    const int64_t e = static_cast<int64_t>(dtype_size(p.dtype));
    w_stride_bytes = round_up(((p.n - 1) * p.w_stride() + p.k) * e, 256);
    y_stride_bytes = round_up(((p.m - 1) * p.y_stride() + p.n) * e, 256);
    copies = cold_copies(w_stride_bytes, l2_bytes);
    probe_pad = round_up(p.total_bytes(), 256);
    check_bench_memory(p, l2_bytes);  // with the numbers, before the first allocation
    SKINNYGEMM_CUDA_CHECK(cudaMalloc(&w, copies * w_stride_bytes + probe_pad));
    SKINNYGEMM_CUDA_CHECK(cudaMalloc(&x, round_up(((p.m - 1) * p.x_stride() + p.k) * e, 256)));
    SKINNYGEMM_CUDA_CHECK(cudaMalloc(&y, copies * y_stride_bytes));
    SKINNYGEMM_CUDA_CHECK(cudaMalloc(&sink, sizeof(uint32_t)));
    stream = bench_stream();
    fill_random(w, (copies * w_stride_bytes + probe_pad) / 2, 0x1234u, p.dtype, stream, 1024);
    fill_random(x, ((p.m - 1) * p.x_stride() + p.k), 0xBEEFu, p.dtype, stream, 256);
    SKINNYGEMM_CUDA_CHECK(cudaGetLastError());
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void release() {
    if (stream) cudaStreamSynchronize(stream);
    cudaFree(w);
    cudaFree(x);
    cudaFree(y);
    cudaFree(sink);
    w = x = y = nullptr;
    sink = nullptr;
  }
  const void* w_copy(int r) const { return reinterpret_cast<const char*>(w) + r * w_stride_bytes; }
  void* y_copy(int r) const { return reinterpret_cast<char*>(y) + r * y_stride_bytes; }
};

using Timing = GraphTiming;

// Captures launch(r) for every copy r into one graph and times its replays (bench_common.cuh).
Timing time_graph(Buffers& b, int samples, int replays, const std::function<void(int)>& launch_copy) {
  return cuda::time_graph(b.stream, b.copies, samples, replays, launch_copy);
}

// Output of config (copy 0, poisoned first) against the FP64 reference: relative Frobenius error.
double check_output(Buffers& b, const Config& config) {
  const Problem& p = b.p;
  const int64_t e = static_cast<int64_t>(dtype_size(p.dtype));
  SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(b.y, 0xFF, b.y_stride_bytes, b.stream));  // NaN in bf16 and fp16
  gemm(p, b.x, b.w_copy(0), b.y_copy(0), config, b.stream);
  const long long outputs = p.m * p.n;
  if (b.reference.empty()) {
    double* ref = nullptr;
    SKINNYGEMM_CUDA_CHECK(cudaMalloc(&ref, outputs * sizeof(double)));
    const unsigned blocks = static_cast<unsigned>((outputs + 255) / 256);
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    if (p.dtype == DType::BF16)
      reference_f64<__nv_bfloat16><<<blocks, 256, 0, b.stream>>>(b.x, b.w, ref, m, n, k, p.x_stride(), p.w_stride());
    else
      reference_f64<__half><<<blocks, 256, 0, b.stream>>>(b.x, b.w, ref, m, n, k, p.x_stride(), p.w_stride());
    SKINNYGEMM_CUDA_CHECK(cudaGetLastError());
    b.reference.resize(static_cast<std::size_t>(outputs));
    SKINNYGEMM_CUDA_CHECK(
        cudaMemcpyAsync(b.reference.data(), ref, outputs * sizeof(double), cudaMemcpyDeviceToHost, b.stream));
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(b.stream));
    cudaFree(ref);
  }
  const std::vector<double>& want = b.reference;
  std::vector<uint16_t> got(static_cast<std::size_t>(b.y_stride_bytes / e));
  SKINNYGEMM_CUDA_CHECK(cudaMemcpyAsync(got.data(), b.y, b.y_stride_bytes, cudaMemcpyDeviceToHost, b.stream));
  SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(b.stream));
  double err = 0, norm = 0;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      const uint16_t v = got[i * p.y_stride() + j];
      const float f = p.dtype == DType::BF16 ? __bfloat162float(__ushort_as_bfloat16(v))
                                             : __half2float(__ushort_as_half(v));
      const double r = want[i * p.n + j];
      SKINNYGEMM_CHECK(std::isfinite(f), config.name() << " left y[" << i << "," << j << "] unwritten or non-finite ("
                                                        << f << ") for " << p.str());
      err += (f - r) * (f - r);
      norm += r * r;
    }
  return norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
}

BenchResult bench_on(Buffers& b, const BenchRequest& req, const DeviceInfo& dev) {
  BenchResult out;
  // Set up cuBLASLt (handle, workspace, heuristics) and the config once before any capture.
  gemm(b.p, b.x, b.w_copy(0), b.y_copy(0), req.config, b.stream);
  if (req.check) {
    out.rel_error = check_output(b, req.config);
    out.checked = true;
    const double tolerance = b.p.dtype == DType::BF16 ? 8e-3 : 2e-3;  // a few output ulps, Frobenius
    SKINNYGEMM_CHECK(out.rel_error <= tolerance, req.config.name() << " on " << b.p.str() << ": relative error "
                                                                   << out.rel_error << " exceeds " << tolerance);
  }
  auto time_config = [&](const Config& c) {
    return time_graph(b, req.samples, req.replays,
                      [&](int r) { gemm(b.p, b.x, b.w_copy(r), b.y_copy(r), c, b.stream); });
  };
  // req.lab_ablate (the lab's ablation, as in the step's timing graphs, lab/cuda/step.cu; `bench` only): the config's
  // timed launches carry TmaParams::ablate (wrong results; the check above ran without), the baselines do not.
  Timing mine;
  {
    tma::AblateScope ablate(req.lab_ablate);
    mine = time_config(req.config);
  }
  out.us = mine.median_us;
  out.spread = mine.spread;
  if (!req.baselines) return out;
  Config lt = Config::parse("cublaslt");
  gemm(b.p, b.x, b.w_copy(0), b.y_copy(0), lt, b.stream);
  out.cublaslt_us = time_config(lt).median_us;
  out.cublaslt_best_us = out.cublaslt_us;
  out.cublaslt_best_config = "cublaslt";
  const int algos = cublaslt_algo_count(b.p, b.x, b.w_copy(0), b.y_copy(0));
  for (int a = 0; a < algos; ++a) {
    lt.algo = a;
    gemm(b.p, b.x, b.w_copy(0), b.y_copy(0), lt, b.stream);  // first use outside the capture
    const double us = time_config(lt).median_us;
    if (us < out.cublaslt_best_us) {
      out.cublaslt_best_us = us;
      out.cublaslt_best_config = lt.name();
    }
  }
  const Config torch = Config::parse("cublaslt_torch");
  gemm(b.p, b.x, b.w_copy(0), b.y_copy(0), torch, b.stream);  // plan outside the capture
  out.cublaslt_torch_us = time_config(torch).median_us;
  out.stream_read_us =
      stream_read_us(b.stream, b.w, b.w_stride_bytes, b.copies, b.p.total_bytes(), b.sink, dev.sms, req.samples,
                     req.replays);
  out.chain_us =
      chain_floor_us(b.stream, b.w, b.w_stride_bytes, b.copies, b.p.total_bytes(), dev.sms, req.samples, req.replays);
  return out;
}


}  // namespace

void check_bench_memory(const Problem& p, int64_t l2_bytes) {
  // The sizes of Buffers::allocate, saturating: a huge shape otherwise ends in an allocation error without the
  // size, or in minutes of work before it.
  const int64_t e = static_cast<int64_t>(dtype_size(p.dtype));
  const int64_t w_bytes = round_up(operand_bytes(p.n, p.k, p.w_stride(), e), 256);
  const int64_t y_bytes = round_up(operand_bytes(p.m, p.n, p.y_stride(), e), 256);
  const int64_t copies = cold_copies(w_bytes, l2_bytes);
  const int64_t reference_bytes = mul_bytes(mul_bytes(p.m, p.n), sizeof(double));
  const int64_t needed = add_bytes(add_bytes(add_bytes(mul_bytes(copies, w_bytes), p.total_bytes() + 256),
                                             round_up(operand_bytes(p.m, p.k, p.x_stride(), e), 256)),
                                   add_bytes(mul_bytes(copies, y_bytes), reference_bytes));
  std::size_t free_bytes = 0, total_bytes = 0;
  SKINNYGEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  SKINNYGEMM_CHECK(needed <= static_cast<int64_t>(free_bytes),
                   "benchmarking " << p.str() << " needs " << bytes_text(needed) << " of device memory (" << copies
                                   << " cold weight copies, x, y, FP64 reference) but "
                                   << bytes_text(static_cast<int64_t>(free_bytes)) << " are free (of "
                                   << bytes_text(static_cast<int64_t>(total_bytes)) << ")");
  check_host_memory(reference_bytes, "the host copy of the FP64 reference of " + p.str());
}

void check_bench_memory(const Problem& p) { check_bench_memory(p, device_info().l2_bytes); }

BenchResult bench(const BenchRequest& req) {
  const DeviceInfo dev = device_info();
  // The tuner and sweeps time many configs on one problem in a row: keep the last problem's buffers (and
  // its FP64 reference) instead of allocating and filling up to 4x L2 again for every config.
  static std::unique_ptr<Buffers> cached;
  if (!cached || !(cached->p == req.problem)) {
    cached.reset();
    cached = std::make_unique<Buffers>(req.problem, dev.l2_bytes);
  }
  try {
    return bench_on(*cached, req, dev);
  } catch (...) {
    cached.reset();  // whatever state the failure left (a stream, a half-written reference) goes with it
    throw;
  }
}

}  // namespace skinnygemm::cuda
