// The register-ring cost model against what the H200 measured (tables/nvidia-h200.json and
// docs/benchmarks/h200/sweeps/reg-late-trigger-0984101.json, ba7d7db / 0984101): on shapes whose every config was
// timed, the model's fastest config must be the measured fastest, and the kernel must beat cuBLASLt's prediction
// where it beat cuBLASLt by 2x. The model runs here without a GPU; selection adds only supports() on top.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "common/test_util.h"
#include "core/cost_model.h"
#include "skinnygemm/config.h"
#include "skinnygemm/problem.h"
#include "skinnygemm/select.h"

namespace skinnygemm {
namespace {

// The fastest reg config by the model among those selection's heuristic considers (smallest tile, fitted layouts).
std::string model_pick(const Problem& p) {
  const DeviceInfo dev = test::h200_device_info();
  double best = std::numeric_limits<double>::infinity();
  std::string pick;
  Config best_config;
  for (const Config& c : listed_configs(Family::Reg)) {
    if (!heuristic_scores(c, p) || decompose(c, p).k_chunks < static_cast<int64_t>(c.warps_k) * c.split_k) continue;
    const double us = predicted_us(c, p, dev);
    if (pick.empty() || better_pick(us, c, best, best_config)) best = us, pick = c.name(), best_config = c;
  }
  return pick;
}

TEST(RegCostModel, PicksTheMeasuredFastestConfigOnSweptShapes) {
  // Measured best of every reg config (sweep at 0984101, M = 1): 8.40, 15.41, 7.76 and 2.97 us.
  EXPECT_EQ(model_pick(Problem{1, 1536, 7168, DType::BF16}), "reg_m8_w1x8_u4_sk2");
  EXPECT_EQ(model_pick(Problem{1, 3648, 7168, DType::BF16}), "reg_m8_w1x8_u4_sk1");
  EXPECT_EQ(model_pick(Problem{1, 7168, 1536, DType::BF16}), "reg_m8_w1x8_u2_sk1");
  EXPECT_EQ(model_pick(Problem{1, 144, 7168, DType::BF16}), "reg_m8_w1x8_u4_sk8");
  EXPECT_EQ(model_pick(Problem{16, 144, 7168, DType::BF16}), "reg_m16_w1x8_u4_sk8");  // 3.89 us
}

TEST(RegCostModel, KernelBeatsCublasltWhereItMeasuredTwiceAsFast) {
  const DeviceInfo dev = test::h200_device_info();
  // 144x7168 M = 1: reg 2.99 us, cuBLASLt 6.33 us; 1000x2048 M = 1: reg 3.54 us, cuBLASLt 12.28 us.
  for (const Problem& p : {Problem{1, 144, 7168, DType::BF16}, Problem{1, 1000, 2048, DType::BF16}}) {
    const double kernel = predicted_us(Config::parse(model_pick(p)), p, dev);
    const double lt = predicted_us(Config::parse("cublaslt"), p, dev);
    EXPECT_LT(kernel, lt) << p.str();
  }
}

}  // namespace
}  // namespace skinnygemm
