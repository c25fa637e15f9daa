// Plan once, run many: a plan runs what gemm() runs, checks its operands, and gemm()'s plan cache hands out the
// same choice per key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "common/test_util.h"
#include "skinnygemm/plan.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

Options cpu_options() {
  Options o;
  o.backend = Backend::Cpu;
  return o;
}

TEST(Plan, RunsWhatGemmRunsBitwise) {
  const Problem p{3, 40, 64, DType::BF16};
  std::vector<uint16_t> x(3 * 64), w(40 * 64), y_plan(3 * 40, 0), y_gemm(3 * 40, 0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(0x3f00 + i % 97);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint16_t>(0xbe00 + i % 89);
  const Plan plan(p, cpu_options());
  plan.run(x.data(), w.data(), y_plan.data());
  const Choice c = gemm(p, x.data(), w.data(), y_gemm.data(), cpu_options());
  EXPECT_EQ(y_plan, y_gemm);
  EXPECT_EQ(plan.choice().config, c.config);
  EXPECT_EQ(plan.backend(), Backend::Cpu);
  EXPECT_EQ(plan.alignment(), 16);
}

TEST(Plan, ForcedConfigIsParsedOnceAndChecked) {
  const Problem p{1, 16, 32, DType::BF16};
  Options o = cpu_options();
  o.config = "cpu_r8";
  const Plan plan(p, o);
  EXPECT_EQ(plan.choice().config.name(), "cpu_r8");
  EXPECT_EQ(plan.choice().source, Source::Forced);
  o.config = "bulk_m8_w1x8_u4_sk2";
  EXPECT_THROW(Plan(p, o), Error);
}

TEST(Plan, RejectsOperandsLessAlignedThanItWasMadeFor) {
  const Problem p{1, 16, 32, DType::BF16};
  std::vector<uint16_t> x(40), w(16 * 32), y(16);
  const Plan plan(p, cpu_options(), 16);
  try {
    plan.run(x.data() + 1, w.data(), y.data());  // 2-byte aligned x
    FAIL() << "a misaligned x ran";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("2-byte aligned"));
  }
  const Plan relaxed(p, cpu_options(), 2);
  relaxed.run(x.data() + 1, w.data(), y.data());
}

TEST(Plan, GemmCacheKeepsTheChoiceAcrossCallsAndForcedConfigs) {
  const Problem p{2, 24, 32, DType::FP16};
  std::vector<uint16_t> x(2 * 32, 0x3c00), w(24 * 32, 0x3c00), y(2 * 24, 0);
  Options o = cpu_options();
  const Choice first = gemm(p, x.data(), w.data(), y.data(), o);
  const Choice again = gemm(p, x.data(), w.data(), y.data(), o);
  EXPECT_EQ(first.config, again.config);
  EXPECT_EQ(first.reason.str(), again.reason.str());
  o.config = "cpu_r1";  // same problem, another key: the forced config
  EXPECT_EQ(gemm(p, x.data(), w.data(), y.data(), o).config.name(), "cpu_r1");
  o.config.clear();
  EXPECT_EQ(gemm(p, x.data(), w.data(), y.data(), o).config, first.config);
  clear_selection_cache();  // retires the cached plans; the next call makes a new one
  EXPECT_EQ(gemm(p, x.data(), w.data(), y.data(), o).config, first.config);
}

TEST(Plan, EmptyAndZeroKProblemsNeedNoSelection) {
  std::vector<uint16_t> y(8, 0xFFFF);
  const Plan empty(Problem{0, 8, 16, DType::BF16}, cpu_options());
  empty.run(nullptr, nullptr, y.data());
  EXPECT_THAT(empty.choice().reason.str(), HasSubstr("empty problem"));
  const Plan zeros(Problem{1, 8, 0, DType::BF16}, cpu_options());
  zeros.run(nullptr, nullptr, y.data());
  for (uint16_t v : y) EXPECT_EQ(v, 0);
  // A forced name that is no config is an Error there too; a real one is accepted (nothing runs).
  Options forced = cpu_options();
  forced.config = "nonsense_config";
  for (const Problem& p : {Problem{0, 8, 16, DType::BF16}, Problem{1, 8, 0, DType::BF16}}) {
    try {
      const Plan plan(p, forced);
      ADD_FAILURE() << "the forced name nonsense_config was accepted for " << p.str();
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("nonsense_config"));
    }
  }
  EXPECT_THROW(gemm(Problem{0, 8, 16, DType::BF16}, nullptr, nullptr, y.data(), forced), Error);
  forced.config = "cpu_r1";
  EXPECT_NO_THROW(Plan(Problem{1, 8, 0, DType::BF16}, forced));
  EXPECT_NO_THROW(gemm(Problem{0, 8, 16, DType::BF16}, nullptr, nullptr, y.data(), forced));
}

}  // namespace
}  // namespace skinnygemm
