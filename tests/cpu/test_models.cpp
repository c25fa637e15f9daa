// models/kimi_k3.json against the per-rank projection table it was written from, and the --shapes / --m parsers.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "lab/models.h"
#include "skinnygemm/error.h"

namespace sg = skinnygemm;
namespace models = skinnygemm::models;

namespace {

std::map<std::string, models::Projection> by_name(int tp) {
  std::map<std::string, models::Projection> out;
  for (const auto& p : models::model_projections("kimi_k3", tp, true)) out[p.name] = p;
  return out;
}

// Runs f and returns the Error's message ("" if nothing was thrown).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const sg::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Models, KimiK3HasEveryTp) {
  const auto info = models::model_info("kimi_k3");
  EXPECT_EQ(info.tps, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_FALSE(info.source.empty());
  for (int tp : info.tps) EXPECT_EQ(models::model_projections("kimi_k3", tp, false).size(), 18u) << "tp " << tp;
}

TEST(Models, KimiK3ShapesMatchTheReference) {
  auto tp8 = by_name(8);
  EXPECT_EQ(tp8.at("mla.qkv_a_g").shape(), "3648x7168");
  EXPECT_EQ(tp8.at("kda.in_proj_qkvgfab").shape(), "6288x7168");
  EXPECT_EQ(tp8.at("kda.qkvg_fab").shape(), "6288x7168");
  EXPECT_EQ(tp8.at("kda.fab").shape(), "144x7168");
  EXPECT_EQ(tp8.at("kda.f_b_proj").shape(), "1536x128");
  EXPECT_EQ(tp8.at("shared.down").shape(), "7168x768");
  EXPECT_EQ(tp8.at("moe.router_latent_down").shape(), "4480x7168");
  EXPECT_EQ(tp8.at("moe.router_latent_down_shared").shape(), "6016x7168");
  EXPECT_EQ(tp8.at("lm_head").shape(), "20480x7168");
  EXPECT_EQ(tp8.at("mtp.eh_proj").shape(), "7168x14336");
  auto tp4 = by_name(4);
  EXPECT_EQ(tp4.at("kda.in_proj_qkvgfab").shape(), "12448x7168");
  EXPECT_EQ(tp4.at("mla.qkv_a_g").shape(), "5184x7168");
  auto tp1 = by_name(1);
  EXPECT_EQ(tp1.at("mla.q_b_proj").shape(), "18432x1536");
  EXPECT_EQ(tp1.at("kda.in_proj_qkvgfab").shape(), "49376x7168");
  EXPECT_EQ(tp1.at("dense.down").shape(), "7168x33792");
  EXPECT_EQ(by_name(2).at("mla.o_proj").shape(), "7168x6144");
}

TEST(Models, FusionsCarryTheirParts) {
  auto tp8 = by_name(8);
  const auto& f = tp8.at("mla.qkv_a_g");
  EXPECT_EQ(f.fused_parts, (std::vector<std::string>{"mla.fused_qkv_a", "mla.g_proj"}));
  EXPECT_EQ(f.segments, (std::vector<int64_t>{2112, 1536}));
  EXPECT_EQ(f.count, 24);
  EXPECT_EQ(f.parallel, "mixed");
  EXPECT_FALSE(f.in_step);
  EXPECT_EQ(tp8.at("kda.qkvg_fab").segments, (std::vector<int64_t>{6144, 144}));
  EXPECT_EQ(tp8.at("kda.qkvg").part_of, "kda.qkvg_fab");
  EXPECT_EQ(tp8.at("moe.router_latent_down_shared").fused_parts.size(), 3u);
  for (const auto& p : models::model_projections("kimi_k3", 8, false)) EXPECT_FALSE(p.fused()) << p.name;
}

TEST(Models, StepTotalsMatchTheReference) {
  // Section 2: 24x4 + 69x3 + 92x5 + 3 = 766 dense GEMM launches per step at TP8, about 23.9 GB of weights.
  int launches = 0;
  double bytes = 0;
  for (const auto& p : models::model_projections("kimi_k3", 8, true)) {
    if (!p.in_step) continue;
    launches += p.count;
    bytes += 2.0 * static_cast<double>(p.n * p.k) * p.count;
  }
  EXPECT_EQ(launches, 766);
  EXPECT_NEAR(bytes / 1e9, 23.9, 0.1);
}

TEST(Models, UnknownModelAndTpListTheChoices) {
  const std::string model = error_of([] { models::model_projections("no_such_model", 8, false); });
  EXPECT_NE(model.find("no_such_model"), std::string::npos) << model;
  EXPECT_NE(model.find("kimi_k3"), std::string::npos) << model;
  const std::string tp = error_of([] { models::model_projections("kimi_k3", 16, false); });
  EXPECT_NE(tp.find("tp 16"), std::string::npos) << tp;
  EXPECT_NE(tp.find("1, 2, 4, 8"), std::string::npos) << tp;
}

TEST(ShapeSpec, ModelSpecsDeduplicateByShape) {
  const auto all = models::parse_shapes("model:kimi_k3:tp8");
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const auto& p : all) EXPECT_TRUE(seen.insert({p.n, p.k}).second) << p.name;
  EXPECT_EQ(all.front().name, "mla.fused_qkv_a");
  // 1536x7168 is mla.g_proj first (shared.gate_up later has the same shape); in_proj precedes its fusion.
  for (const auto& p : all) {
    if (p.n == 1536 && p.k == 7168) {
      EXPECT_EQ(p.name, "mla.g_proj");
    }
    if (p.n == 6288) {
      EXPECT_EQ(p.name, "kda.in_proj_qkvgfab");
    }
  }
  const auto fusions = models::parse_shapes("model:kimi_k3:tp8:fusions");
  ASSERT_FALSE(fusions.empty());
  for (const auto& p : fusions) EXPECT_TRUE(p.fused()) << p.name;
  EXPECT_EQ(fusions.front().shape(), "3648x7168");
}

TEST(ShapeSpec, ExplicitLists) {
  const auto shapes = models::parse_shapes("1536x7168,144x7168");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].n, 1536);
  EXPECT_EQ(shapes[0].k, 7168);
  EXPECT_TRUE(shapes[0].name.empty());
  EXPECT_EQ(shapes[1].shape(), "144x7168");
  // Items mix freely; a repeated N x K keeps its first occurrence.
  const auto mixed = models::parse_shapes("144x7168,model:kimi_k3:tp8:fusions,144x7168,3648x7168");
  ASSERT_EQ(mixed.size(), 5u);
  EXPECT_TRUE(mixed[0].name.empty());
  EXPECT_EQ(mixed[1].name, "mla.qkv_a_g");
}

TEST(ShapeSpec, RejectsBadSpecsNamingThem) {
  for (const std::string bad : {"", "1536", "1536x", "x7168", "0x7168", "1536x7168,", "-4x8", "15a6x7168",
                                "model:kimi_k3", "model:kimi_k3:8", "model::tp8", "model:kimi_k3:tp8:all"}) {
    const std::string msg = error_of([&] { models::parse_shapes(bad); });
    EXPECT_FALSE(msg.empty()) << "accepted '" << bad << "'";
    if (!bad.empty()) {
      EXPECT_NE(msg.find(bad), std::string::npos) << msg;
    }
  }
  EXPECT_NE(error_of([] { models::parse_shapes("model:kimi_k3:tp3"); }).find("available tp"), std::string::npos);
}

TEST(MRange, AcceptsRangesStepsListsAndSingles) {
  EXPECT_EQ(models::parse_m_range("1:4"), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(models::parse_m_range("1:64").size(), 64u);
  EXPECT_EQ(models::parse_m_range("1:9:4"), (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(models::parse_m_range("1,2,4,8"), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(models::parse_m_range("3"), (std::vector<int64_t>{3}));
}

TEST(MRange, RejectsBadSpecsNamingThem) {
  for (const std::string bad : {"", "0", "4:1", "1:", ":4", "1:4:0", "1:2:3:4", "1,,2", "a", "1.5", "-1"}) {
    const std::string msg = error_of([&] { models::parse_m_range(bad); });
    EXPECT_FALSE(msg.empty()) << "accepted '" << bad << "'";
    if (!bad.empty()) {
      EXPECT_NE(msg.find("'" + bad + "'"), std::string::npos) << msg;
    }
  }
}
