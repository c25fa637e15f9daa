// The CPU backend against the FP64 reference, and the float <-> bf16/fp16 conversions it is built on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_util.h"
#include "runtime/backends.h"
#include "runtime/half.h"
#include "skinnygemm/error.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;
using test::kPoison;

// ---- conversions -----------------------------------------------------------------------------------------

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);  // the tie rounds to even, which is infinity
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);         // tie to even (zero)
  EXPECT_EQ(float_to_fp16(std::ldexp(1.5f, -25)), 0x0001);         // above the tie
  EXPECT_EQ(float_to_fp16(std::ldexp(3.0f, -25)), 0x0002);         // tie between 1 and 2: even is 2
  EXPECT_EQ(float_to_fp16(std::ldexp(1023.5f, -24)), 0x0400);      // rounds up into the first normal
  EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(fp16_to_float(0x7c00), INFINITY);
  EXPECT_EQ(fp16_to_float(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(NAN))));
  EXPECT_EQ(float_to_bf16(3.4e38f), 0x7f80);  // rounds past the largest bf16 to infinity
}

// Every 16-bit pattern widens and narrows back to itself (NaNs stay NaN).
TEST(Half, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const float fb = bf16_to_float(b), fh = fp16_to_float(b);
    if (std::isnan(fb)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(fb)))) << std::hex << h;
    } else {
      ASSERT_EQ(float_to_bf16(fb), b) << std::hex << h;
    }
    if (std::isnan(fh)) {
      EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(fh)))) << std::hex << h;
    } else {
      ASSERT_EQ(float_to_fp16(fh), b) << std::hex << h;
    }
  }
}

// Narrowing picks the nearest of the two neighbouring 16-bit values (ties to the even one), checked in
// double over a spread of float bit patterns that covers every exponent.
TEST(Half, NarrowingRoundsToNearestEven) {
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4099) {
    float f;
    const auto u32 = static_cast<uint32_t>(u);
    std::memcpy(&f, &u32, sizeof f);
    if (std::isnan(f)) continue;
    for (DType dt : {DType::BF16, DType::FP16}) {
      const uint16_t got = float_to_half(dt, f);
      const double g = half_to_float(dt, got);
      if (std::isinf(g)) {  // only when f is beyond the largest finite value plus half an ulp
        const double limit = dt == DType::BF16 ? std::ldexp(2.0 - 1.0 / 256, 127) : 65520.0;  // largest + ulp/2
        ASSERT_GE(std::fabs(static_cast<double>(f)), limit) << f;
        continue;
      }
      const double err = std::fabs(g - f);
      // The neighbours of the result are no closer (and not an equally close even one).
      for (int d : {-1, 1}) {
        const double other = half_to_float(dt, static_cast<uint16_t>(got + d));
        if (std::isnan(other) || ((got & 0x7fff) == 0 && d == -1)) continue;
        const double oerr = std::fabs(other - f);
        ASSERT_TRUE(err < oerr || (err == oerr && (got & 1) == 0))
            << dtype_name(dt) << " f=" << f << " (0x" << std::hex << bits(f) << ") -> 0x" << got;
      }
    }
  }
}

// ---- the backend -----------------------------------------------------------------------------------------

struct Operands {
  Problem p;
  std::vector<uint16_t> x, w, y;
};

// Operands for one case; with `strided`, every row has padding that holds NaN (x, w) or poison (y), so a
// kernel that reads or writes past a row fails.
Operands make(DType dtype, int64_t m, int64_t n, int64_t k, bool strided, bool small_ints, uint32_t seed) {
  Operands o;
  o.p.m = m;
  o.p.n = n;
  o.p.k = k;
  o.p.dtype = dtype;
  if (strided) {
    o.p.ldx = k + 3;
    o.p.ldw = k + 5;
    o.p.ldy = n + 7;
  }
  std::mt19937 rng(seed);
  const auto fill = [&](int64_t rows, int64_t cols, int64_t stride) {
    std::vector<uint16_t> v = small_ints ? test::small_int_values(dtype, rows * stride, rng)
                                         : test::random_values(dtype, rows * stride, rng);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = cols; c < stride; ++c) v[r * stride + c] = kPoison;
    return v;
  };
  o.x = fill(m, k, o.p.x_stride());
  o.w = fill(n, k, o.p.w_stride());
  o.y.assign(static_cast<std::size_t>(m * o.p.y_stride()), kPoison);
  return o;
}

Config cpu_config(int rows) { return Config::parse("cpu_r" + std::to_string(rows)); }

const int64_t kMs[] = {1, 2, 3, 7, 8, 9, 16, 17, 64, 100};
const int64_t kNs[] = {1, 13, 100, 129};
const int64_t kKs[] = {8, 72, 200, 1000};

class CpuBackend : public ::testing::TestWithParam<std::tuple<DType, int>> {};

TEST_P(CpuBackend, RandomInputsWithinBoundOfFp64Reference) {
  const auto [dtype, rows] = GetParam();
  const Config config = cpu_config(rows);
  for (int64_t m : kMs)
    for (int64_t n : kNs)
      for (int64_t k : kKs)
        for (bool strided : {false, true}) {
          const uint32_t seed = static_cast<uint32_t>(m * 1000003 + n * 1009 + k * 7 + strided);
          Operands o = make(dtype, m, n, k, strided, /*small_ints=*/false, seed);
          std::vector<double> ref(static_cast<std::size_t>(m * n));
          cpu::reference_f64(o.p, o.x.data(), o.w.data(), ref.data());
          std::vector<uint16_t> naive(o.y.size(), kPoison);
          cpu::reference_naive(o.p, o.x.data(), o.w.data(), naive.data());
          cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), config);
          ASSERT_TRUE(test::matches_reference(o.p, o.x.data(), o.w.data(), o.y.data(), ref.data(), naive.data()))
              << config.name();
          ASSERT_TRUE(test::padding_untouched(o.p, o.y.data())) << config.name();
        }
}

TEST_P(CpuBackend, SmallIntegersBitwiseEqualToNaiveReference) {
  const auto [dtype, rows] = GetParam();
  const Config config = cpu_config(rows);
  for (int64_t m : kMs)
    for (int64_t n : kNs)
      for (int64_t k : kKs) {
        const bool strided = (m + n + k) % 2 == 1;
        Operands o = make(dtype, m, n, k, strided, /*small_ints=*/true, static_cast<uint32_t>(m * 31 + n * 17 + k));
        std::vector<uint16_t> naive(o.y.size(), kPoison);
        cpu::reference_naive(o.p, o.x.data(), o.w.data(), naive.data());
        cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), config);
        ASSERT_TRUE(test::bitwise_equal(o.p, o.y.data(), naive.data())) << config.name();
        ASSERT_TRUE(test::padding_untouched(o.p, o.y.data())) << config.name();
      }
}

TEST_P(CpuBackend, KZeroWritesZeros) {
  const auto [dtype, rows] = GetParam();
  for (bool strided : {false, true}) {
    Operands o = make(dtype, 5, 37, 0, strided, false, 1);
    cpu::gemm(o.p, nullptr, nullptr, o.y.data(), cpu_config(rows));  // x and w must not be read
    for (int64_t i = 0; i < o.p.m; ++i)
      for (int64_t j = 0; j < o.p.n; ++j) ASSERT_EQ(o.y[i * o.p.y_stride() + j], 0) << i << "," << j;
    EXPECT_TRUE(test::padding_untouched(o.p, o.y.data()));
  }
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, CpuBackend,
                         ::testing::Combine(::testing::Values(DType::BF16, DType::FP16),
                                            ::testing::ValuesIn(kCpuRows)),
                         [](const auto& info) {
                           return std::string(dtype_name(std::get<0>(info.param))) + "_r" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Large enough to run on several threads where the machine has them. Repeated runs give the same bits,
// and so do all cpu_r* configs: the summation order depends only on k (see cpu_gemm.cpp).
TEST(CpuBackendDeterminism, SameBitsAcrossRunsAndConfigs) {
  for (DType dtype : {DType::BF16, DType::FP16}) {
    Operands o = make(dtype, 6, 301, 1531, true, false, 7);
    cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), cpu_config(1));
    const std::vector<uint16_t> first = o.y;
    for (int rep = 0; rep < 3; ++rep)
      for (int rows : kCpuRows) {
        std::fill(o.y.begin(), o.y.end(), kPoison);
        cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), cpu_config(rows));
        ASSERT_TRUE(test::bitwise_equal(o.p, o.y.data(), first.data())) << "cpu_r" << rows << " run " << rep;
      }
  }
}

// Sets an environment variable for the scope of a test and restores the old value (or its absence).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// The vector width changes how the 16 lanes are held, not the operations on them: every path this CPU
// has gives the bits of the 16-byte base path that runs everywhere.
TEST(CpuBackendDeterminism, SameBitsOnEveryInstructionSetPath) {
  for (DType dtype : {DType::BF16, DType::FP16}) {
    Operands o = make(dtype, 11, 203, 1100, true, false, 11);
    std::vector<uint16_t> base;
    {
      ScopedEnv env("SKINNYGEMM_CPU_ISA", "base");
      cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), cpu_config(4));
      base = o.y;
    }
    int compared = 0;
    for (const char* isa : {"avx2", "avx512"}) {
      ScopedEnv env("SKINNYGEMM_CPU_ISA", isa);
      for (int rows : kCpuRows) {
        std::fill(o.y.begin(), o.y.end(), kPoison);
        try {
          cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), cpu_config(rows));
        } catch (const Error& e) {  // this CPU lacks the path: the one acceptable error
          EXPECT_THAT(e.what(), HasSubstr("does not support")) << isa;
          break;
        }
        ASSERT_TRUE(test::bitwise_equal(o.p, o.y.data(), base.data())) << isa << " cpu_r" << rows;
        ++compared;
      }
    }
    std::printf("%s: %d wider-path runs matched the base path bit for bit\n", dtype_name(dtype), compared);
  }
  ScopedEnv env("SKINNYGEMM_CPU_ISA", "sse9");
  Operands o = make(DType::BF16, 1, 8, 8, false, false, 1);
  try {
    cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), cpu_config(1));
    FAIL() << "SKINNYGEMM_CPU_ISA=sse9 accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'sse9'"));
  }
}

TEST(CpuBackendEdges, EmptyProblemsTouchNothing) {
  std::vector<uint16_t> y(8, kPoison);
  Problem p;
  p.m = 0;
  p.n = 4;
  p.k = 16;
  cpu::gemm(p, nullptr, nullptr, y.data(), cpu_config(4));
  p.m = 2;
  p.n = 0;
  cpu::gemm(p, nullptr, nullptr, y.data(), cpu_config(4));
  for (uint16_t v : y) EXPECT_EQ(v, kPoison);
}

// A representable problem whose scratch exceeds the host's memory fails up front with the bytes needed and
// available, through the public API (the pointers are never read: the check comes first).
TEST(CpuBackendEdges, ScratchBeyondHostMemoryIsNamed) {
  Problem p;
  p.m = int64_t{1} << 40;  // x as float: 2^40 x 7168 x 4 bytes, about 31.5 PB
  p.n = 8;
  p.k = 7168;
  const auto at = [](uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); };
  Options o;
  o.backend = Backend::Cpu;
  o.config = "cpu_r4";
  test::expect_error([&] { gemm(p, at(uint64_t{1} << 56), at(uint64_t{1} << 60), at(uint64_t{1} << 62), o); },
                     {"CPU backend's scratch", "m=1099511627776", "bytes) of host memory but", "are available"});
}

// What gemm reports for a problem with nothing to do must be a config Config::parse accepts (it was cpu_r0).
TEST(CpuBackendEdges, DegenerateProblemsReportAParsableConfig) {
  std::vector<uint16_t> y(8, kPoison);
  Options o;
  o.backend = Backend::Cpu;
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{0, 4, 16}, {2, 0, 16}, {2, 4, 0}}) {
    Problem p;
    p.m = m;
    p.n = n;
    p.k = k;
    const Choice c = gemm(p, nullptr, nullptr, y.data(), o);
    EXPECT_NO_THROW(Config::parse(c.config.name())) << c.config.name() << " for " << p.str();
    EXPECT_EQ(c.config.name(), "cpu_r4") << p.str();
  }
}

TEST(CpuBackendEdges, RejectsOtherFamiliesAndBadProblems) {
  Operands o = make(DType::BF16, 2, 16, 32, false, false, 3);
  try {
    cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), Config::parse("bulk_m16_w1x8_u2_sk2"));
    FAIL() << "expected an Error for a bulk config";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bulk_m16_w1x8_u2_sk2"));
    EXPECT_THAT(e.what(), HasSubstr("family bulk"));
  }
  Config bad = cpu_config(4);
  bad.rows = 3;
  try {
    cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), bad);
    FAIL() << "expected an Error for rows=3";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("rows=3"));
  }
  o.p.dtype = DType::FP32;
  try {
    cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), cpu_config(4));
    FAIL() << "expected an Error for fp32";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("fp32"));
  }
}

// Infinities and NaNs propagate like IEEE arithmetic (they are not lost in the padding or the reduction).
TEST(CpuBackendEdges, NonFiniteInputsPropagate) {
  for (DType dtype : {DType::BF16, DType::FP16}) {
    Operands o = make(dtype, 2, 3, 40, false, true, 5);
    o.x[0 * 40 + 17] = float_to_half(dtype, INFINITY);  // row 0 of y: +-inf or NaN wherever w[., 17] != 0
    o.w[1 * 40 + 39] = float_to_half(dtype, NAN);       // column 1 of y: NaN
    cpu::gemm(o.p, o.x.data(), o.w.data(), o.y.data(), cpu_config(2));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        const float got = half_to_float(dtype, o.y[i * 3 + j]);
        const float wk = half_to_float(dtype, o.w[j * 40 + 17]);
        if (j == 1 || (i == 0 && wk == 0)) {
          EXPECT_TRUE(std::isnan(got)) << i << "," << j;
        } else if (i == 0) {
          EXPECT_TRUE(std::isinf(got) && (got > 0) == (wk > 0)) << i << "," << j << " got " << got;
        } else {
          EXPECT_TRUE(std::isfinite(got)) << i << "," << j;
        }
      }
  }
}

}  // namespace
}  // namespace skinnygemm
