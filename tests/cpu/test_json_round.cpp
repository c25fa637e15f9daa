// json_round, the one rounding of result-file floats: short decimals in the JSON, small values kept.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "lab/json_round.h"

namespace skinnygemm {
namespace {

TEST(JsonRound, PrintsTheShortDecimal) {
  // round(v / 0.001) * 0.001 printed 2.3560000000000003; the helper's value prints as written.
  EXPECT_EQ(nlohmann::json(json_round(2.35612345)).dump(), "2.356");
  EXPECT_EQ(nlohmann::json(json_round(18.4249)).dump(), "18.42");
  EXPECT_EQ(nlohmann::json(json_round(0.0016335680391878638)).dump(), "0.001634");
  EXPECT_EQ(nlohmann::json(json_round(1.71729e-05)).dump(), "1.717e-05");  // a CPU row's TB/s stays non-zero
  EXPECT_EQ(nlohmann::json(json_round(265.728, 6)).dump(), "265.728");
}

TEST(JsonRound, ZeroNanAndInfinityPassThrough) {
  EXPECT_EQ(json_round(0.0), 0.0);
  EXPECT_TRUE(std::isnan(json_round(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(json_round(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
  EXPECT_EQ(json_round(-1.23456), -1.235);
}

}  // namespace
}  // namespace skinnygemm
