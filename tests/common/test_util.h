// Shared test helpers: random and small-integer operands, poisoned outputs, and the comparison of a
// result against the FP64 reference with a tolerance measured from the naive FP32 reference.
// Header-only and host-only so that the GPU tests can use it on host copies of their buffers.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <ostream>
#include <random>
#include <sstream>
#include <vector>

#include "runtime/half.h"
#include "skinnygemm/error.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {
// So that gtest prints "bf16" for a DType parameter instead of its bytes (found by ADL).
inline void PrintTo(DType dtype, std::ostream* os) { *os << dtype_name(dtype); }
}  // namespace skinnygemm

namespace skinnygemm::test {

// Runs f, which must throw Error with every fragment in its message.
template <typename F>
void expect_error(F&& f, std::initializer_list<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "no Error thrown (expected one mentioning '" << *fragments.begin() << "')";
  } catch (const Error& e) {
    for (const std::string& s : fragments) EXPECT_THAT(e.what(), ::testing::HasSubstr(s));
  }
}

// An empty folder of its own for the running test: <tmp>/skinnygemm_<prefix>_<pid>_<test name>.
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("skinnygemm_" + prefix + "_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs a shell command, stdout and stderr together; *status gets its exit status (-1 if it did not exit).
inline std::string run_command(const std::string& command, int* status) {
  std::string out;
  *status = -1;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, got);
  const int raw = pclose(pipe);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

#ifdef SKINNYGEMM_CLI_PATH
// Runs the built CLI (the test targets define SKINNYGEMM_CLI_PATH) with args, as run_command does.
inline std::string run_cli(const std::string& args, int* status) {
  return run_command(std::string("'") + SKINNYGEMM_CLI_PATH + "' " + args, status);
}
#endif

// All ones: a NaN in both bf16 and fp16, so an output a kernel forgot to write cannot pass a comparison.
constexpr uint16_t kPoison = 0xffff;

// Elements a row-major matrix with the given stride needs (rows x cols, last row unpadded).
inline std::size_t matrix_elems(int64_t rows, int64_t cols, int64_t stride) {
  return rows == 0 ? 0 : static_cast<std::size_t>((rows - 1) * stride + cols);
}

// Uniform values in [-1, 1], rounded to dtype.
inline std::vector<uint16_t> random_values(DType dtype, std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> v(count);
  for (auto& e : v) e = float_to_half(dtype, dist(rng));
  return v;
}

// Integers in [-range, range]: every product and partial sum is exact in FP32 (for K * range^2 < 2^24),
// so any summation order gives the same FP32 sum and results must match bit for bit.
inline std::vector<uint16_t> small_int_values(DType dtype, std::size_t count, std::mt19937& rng, int range = 3) {
  std::uniform_int_distribution<int> dist(-range, range);
  std::vector<uint16_t> v(count);
  for (auto& e : v) e = float_to_half(dtype, static_cast<float>(dist(rng)));
  return v;
}

// The spacing of dtype values at magnitude |v| (the subnormal spacing near zero).
inline double ulp(DType dtype, double v) {
  const int mantissa_bits = dtype == DType::BF16 ? 7 : 10;
  const int min_exp = dtype == DType::BF16 ? -126 : -14;
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| = f * 2^e, f in [0.5, 1); e = 0 for v = 0
  const int exp = v == 0 ? min_exp : std::max(e - 1, min_exp);
  return std::ldexp(1.0, exp - mantissa_bits);
}

// Checks y (m x n, stride ldy of p) against the FP64 reference ref (m x n packed). Each element may be off
// by 2x the naive FP32 reference's own error, plus one ulp of the output, plus the worst-case FP32
// accumulation error K * 2^-24 * sum|x*w| (a different summation order may round differently). On failure
// the message names the problem, the element and every term of the bound.
inline ::testing::AssertionResult matches_reference(const Problem& p, const uint16_t* x, const uint16_t* w,
                                                    const uint16_t* y, const double* ref, const uint16_t* naive) {
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double abs_sum = 0;
      for (int64_t k = 0; k < p.k; ++k)
        abs_sum += std::fabs(static_cast<double>(half_to_float(p.dtype, x[i * p.x_stride() + k])) *
                             half_to_float(p.dtype, w[j * p.w_stride() + k]));
      const double r = ref[i * p.n + j];
      const double got = half_to_float(p.dtype, y[i * p.y_stride() + j]);
      const double nv = half_to_float(p.dtype, naive[i * p.y_stride() + j]);
      const double naive_err = std::fabs(nv - r);
      const double acc_err = static_cast<double>(p.k) * std::ldexp(1.0, -24) * abs_sum;
      const double tol = 2 * naive_err + ulp(p.dtype, r) + acc_err;
      const double err = std::fabs(got - r);
      if (!(err <= tol)) {  // also catches NaN (a poisoned output that was never written)
        return ::testing::AssertionFailure()
               << p.str() << ": y[" << i << "][" << j << "] = " << got << " (bits 0x" << std::hex
               << y[i * p.y_stride() + j] << std::dec << "), fp64 reference " << r << ", error " << err
               << " > bound " << tol << " (2 x naive error " << naive_err << " + ulp " << ulp(p.dtype, r)
               << " + fp32 accumulation " << acc_err << ")";
      }
    }
  return ::testing::AssertionSuccess();
}

// Bitwise equality of two outputs over the m x n elements (strides of p).
inline ::testing::AssertionResult bitwise_equal(const Problem& p, const uint16_t* a, const uint16_t* b) {
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j)
      if (a[i * p.y_stride() + j] != b[i * p.y_stride() + j])
        return ::testing::AssertionFailure() << p.str() << ": y[" << i << "][" << j << "] bits 0x" << std::hex
                                             << a[i * p.y_stride() + j] << " != 0x" << b[i * p.y_stride() + j];
  return ::testing::AssertionSuccess();
}

// The padding between output rows (columns n..ldy-1) must still hold the poison: nothing wrote past a row.
inline ::testing::AssertionResult padding_untouched(const Problem& p, const uint16_t* y) {
  for (int64_t i = 0; i + 1 < p.m; ++i)
    for (int64_t j = p.n; j < p.y_stride(); ++j)
      if (y[i * p.y_stride() + j] != kPoison)
        return ::testing::AssertionFailure() << p.str() << ": row padding y[" << i << "][" << j
                                             << "] was written (0x" << std::hex << y[i * p.y_stride() + j] << ")";
  return ::testing::AssertionSuccess();
}

}  // namespace skinnygemm::test
