// PairPlan on the CPU backend: both projections run (in turn) with the bits of two gemm() calls, the reason says why
// not one launch, and the checks that keep the two independent refuse overlapping outputs and mixed dtypes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "skinnygemm/pair.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

Options cpu_options() {
  Options o;
  o.backend = Backend::Cpu;
  return o;
}

std::vector<uint16_t> bf16_values(std::size_t n, uint16_t base, int period) {
  std::vector<uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint16_t>(base + i % static_cast<std::size_t>(period));
  return v;
}

TEST(PairPlan, RunsBothProblemsWithTheBitsOfTwoCalls) {
  const Problem pa{3, 40, 64, DType::BF16}, pb{3, 24, 32, DType::BF16};
  const std::vector<uint16_t> xa = bf16_values(3 * 64, 0x3f00, 97), wa = bf16_values(40 * 64, 0xbe00, 89);
  const std::vector<uint16_t> xb = bf16_values(3 * 32, 0x3e80, 31), wb = bf16_values(24 * 32, 0x3d00, 53);
  std::vector<uint16_t> ya(3 * 40, 0), yb(3 * 24, 0), ra(3 * 40, 0), rb(3 * 24, 0);
  const PairPlan pair(pa, pb, cpu_options());
  pair.run(xa.data(), wa.data(), ya.data(), xb.data(), wb.data(), yb.data());
  gemm(pa, xa.data(), wa.data(), ra.data(), cpu_options());
  gemm(pb, xb.data(), wb.data(), rb.data(), cpu_options());
  EXPECT_EQ(ya, ra);
  EXPECT_EQ(yb, rb);
  EXPECT_FALSE(pair.one_launch());
  EXPECT_THAT(pair.reason(), HasSubstr("cpu backend"));
  EXPECT_EQ(pair.a().problem(), pa);
  EXPECT_EQ(pair.b().problem(), pb);
}

TEST(PairPlan, RefusesOutputsThatTouchTheOtherProblem) {
  const Problem pa{2, 16, 32, DType::BF16}, pb{2, 16, 32, DType::BF16};
  std::vector<uint16_t> xa(2 * 32), wa(16 * 32), xb(2 * 32), wb(16 * 32), ya(2 * 16), yb(2 * 16);
  const PairPlan pair(pa, pb, cpu_options());
  try {
    pair.run(xa.data(), wa.data(), ya.data(), xb.data(), wb.data(), ya.data());
    FAIL() << "overlapping outputs ran";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("outputs overlap"));
  }
  std::vector<uint16_t> shared(2 * 32);
  try {  // a writes what b reads: the two are not independent
    pair.run(xa.data(), wa.data(), shared.data(), shared.data(), wb.data(), yb.data());
    FAIL() << "a pair whose b reads a's output ran";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("output a overlaps an operand of problem b"));
  }
  try {
    pair.run(shared.data(), wa.data(), ya.data(), xb.data(), wb.data(), shared.data());
    FAIL() << "a pair whose a reads b's output ran";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("output b overlaps an operand of problem a"));
  }
}

TEST(PairPlan, NamesTheProblemThatCannotBePlanned) {
  const Problem good{1, 16, 32, DType::BF16}, fp16{1, 16, 32, DType::FP16};
  try {
    PairPlan(good, fp16, cpu_options());
    FAIL() << "a pair of two dtypes was planned";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("one dtype"));
  }
  const Problem bad{1, -4, 32, DType::BF16};
  try {
    PairPlan(good, bad, cpu_options());
    FAIL() << "a negative N was planned";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("pair problem b"));
  }
}

}  // namespace
}  // namespace skinnygemm
