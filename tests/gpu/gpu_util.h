// GPU test helpers: a visible skip without a device, device buffers, and running a problem through the
// public API on device copies of host operands.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/test_util.h"
#include "runtime/backends.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm::test {

#define SKIP_WITHOUT_GPU()                                                                          \
  do {                                                                                              \
    if (!::skinnygemm::cuda::available()) GTEST_SKIP() << "no CUDA device: GPU tests need an H200"; \
  } while (0)

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

// A device copy of 16-bit elements (with optional offset in elements for misalignment tests).
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t elems, std::size_t offset = 0) : offset_(offset) {
    if (cudaMalloc(&base_, (elems + offset + 8) * sizeof(uint16_t)) != cudaSuccess) base_ = nullptr;
  }
  DeviceArray(const std::vector<uint16_t>& host, std::size_t offset = 0) : DeviceArray(host.size(), offset) {
    upload(host);
  }
  ~DeviceArray() { cudaFree(base_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  uint16_t* get() const { return base_ + offset_; }
  void upload(const std::vector<uint16_t>& host) const {
    cudaMemcpy(get(), host.data(), host.size() * sizeof(uint16_t), cudaMemcpyHostToDevice);
  }
  std::vector<uint16_t> download(std::size_t elems) const {
    std::vector<uint16_t> host(elems);
    cudaMemcpy(host.data(), get(), elems * sizeof(uint16_t), cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  uint16_t* base_ = nullptr;
  std::size_t offset_ = 0;
};

struct HostOperands {
  std::vector<uint16_t> x, w;
};

inline HostOperands random_operands(const Problem& p, uint32_t seed, bool small_ints = false) {
  std::mt19937 rng(seed);
  HostOperands h;
  const std::size_t nx = matrix_elems(p.m, p.k, p.x_stride()), nw = matrix_elems(p.n, p.k, p.w_stride());
  h.x = small_ints ? small_int_values(p.dtype, nx, rng) : random_values(p.dtype, nx, rng);
  h.w = small_ints ? small_int_values(p.dtype, nw, rng) : random_values(p.dtype, nw, rng);
  return h;
}

// The naive low-precision reference (FP32 accumulation in k order, rounded to the dtype) and the FP64 one.
inline std::vector<uint16_t> naive(const Problem& p, const HostOperands& h) {
  std::vector<uint16_t> y(matrix_elems(p.m, p.n, p.y_stride()), kPoison);
  cpu::reference_naive(p, h.x.data(), h.w.data(), y.data());
  return y;
}
inline std::vector<double> fp64(const Problem& p, const HostOperands& h) {
  std::vector<double> ref(static_cast<std::size_t>(p.m * p.n));
  cpu::reference_f64(p, h.x.data(), h.w.data(), ref.data());
  return ref;
}

// Element-wise bound of the kernel issue: |y - fp64| <= 2 |naive - fp64| + one output ulp, plus four FP32
// ulps of sum_k |x w| for outputs that cancel to near zero: another summation order, and the tensor cores'
// FP32 accumulation (it aligns and truncates within each MMA), round differently there. Seen on the H200:
// 1000x7168 M=63 split 64 ways, y = 2.079e-4 against 2.124e-4 (1.3 FP32 ulps of sum |x w| ~ 1800).
inline ::testing::AssertionResult within_naive_bound(const Problem& p, const HostOperands& h,
                                                     const std::vector<uint16_t>& y, const std::vector<double>& ref,
                                                     const std::vector<uint16_t>& naive, const std::string& what) {
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double abs_sum = 0;
      for (int64_t k = 0; k < p.k; ++k)
        abs_sum += std::fabs(static_cast<double>(half_to_float(p.dtype, h.x[i * p.x_stride() + k])) *
                             half_to_float(p.dtype, h.w[j * p.w_stride() + k]));
      const double r = ref[i * p.n + j];
      const double got = half_to_float(p.dtype, y[i * p.y_stride() + j]);
      const double nv = half_to_float(p.dtype, naive[i * p.y_stride() + j]);
      const double tol = 2 * std::fabs(nv - r) + ulp(p.dtype, r) + std::ldexp(abs_sum, -22);
      if (!(std::fabs(got - r) <= tol))
        return ::testing::AssertionFailure() << what << " " << p.str() << ": y[" << i << "][" << j << "] = " << got
                                             << ", fp64 " << r << ", naive " << nv << ", bound " << tol
                                             << "; repro: skinnygemm check --backend cuda --shapes " << p.n << "x"
                                             << p.k << " --m " << p.m << " --config " << what;
    }
  return ::testing::AssertionSuccess();
}

}  // namespace skinnygemm::test
