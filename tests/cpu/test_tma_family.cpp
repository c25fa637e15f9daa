// The TMA family on the host: its config names, the shape checks of supports(), its structural first-cut
// config, the stream-K split arithmetic the kernel relies on, and the forced name "tma".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/tma/tma_family.h"
#include "kernels/tma/tma_shape.h"
#include "skinnygemm/error.h"
#include "skinnygemm/select.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

DeviceInfo h200() {
  DeviceInfo d;
  d.is_cpu = false;
  d.name = "NVIDIA H200";
  d.sms = 132;
  d.cc_major = 9;
  d.smem_per_block_optin = 227 * 1024;
  return d;
}

TEST(TmaFamily, NamesParseToTheirFieldsAndRoundTrip) {
  const Config s = Config::parse("tma_m16_r64_b2_s4_c2_u8");
  EXPECT_EQ(s.family, Family::Tma);
  EXPECT_EQ(s.tile_m, 16);
  EXPECT_EQ(s.rows, 64);
  EXPECT_EQ(s.boxes, 2);
  EXPECT_EQ(s.stages, 4);
  EXPECT_EQ(s.ctas_per_sm, 2);
  EXPECT_EQ(s.min_units, 8);
  EXPECT_EQ(s.cluster, 0);
  const Config x = Config::parse("tma_m8_r128_b1_s6_x4");
  EXPECT_EQ(x.cluster, 4);
  EXPECT_EQ(x.name(), "tma_m8_r128_b1_s6_x4");
  EXPECT_NE(s, x);
  EXPECT_EQ(Config::parse("cublaslt_torch").algo, kCublasltTorch);
  EXPECT_EQ(Config::parse("cublaslt_torch").name(), "cublaslt_torch");
}

TEST(TmaFamily, MalformedNamesNameThePart) {
  auto message = [](const std::string& name) {
    try {
      Config::parse(name);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message("tma_m12_r64_b2_s4_c2_u2"), HasSubstr("token tile m12 is not built"));
  EXPECT_THAT(message("tma_m8_r32_b2_s4_c2_u2"), HasSubstr("rows per tile r32"));
  EXPECT_THAT(message("tma_m8_r64_b2_s4_x3"), HasSubstr("cluster x3"));
  EXPECT_THAT(message("tma_m8_r64_b2"), HasSubstr("expected tma_m<tile>"));
}

TEST(TmaFamily, ListedRingsFitTwoCtasPerSm) {
  const std::vector<Config> configs = listed_configs(Family::Tma);
  EXPECT_GT(configs.size(), 100u);
  for (const Config& c : configs) {
    const int smem = tma::smem_bytes(c.rows, c.tile_m, c.stages, c.boxes, c.cluster);
    EXPECT_LE(smem, 110 * 1024) << c.name();
    EXPECT_GE(smem, 40 * 1024) << c.name();
  }
}

TEST(TmaFamily, SupportsChecksTheShape) {
  const DeviceInfo dev = h200();
  std::string why;
  // Selection calls supports() for configs the CPU build cannot launch: on a CPU build config_is_built says no.
  EXPECT_TRUE(tma::fits(Config::parse("tma_m8_r64_b2_s4_c2_u2"), Problem{8, 100, 8200, DType::BF16}, dev, &why)) << why;
  EXPECT_FALSE(tma::fits(Config::parse("tma_m8_r64_b2_s4_c2_u2"), Problem{9, 100, 8200, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("M=9 exceeds the token tile 8"));
  EXPECT_FALSE(tma::fits(Config::parse("tma_m8_r64_b2_s4_c2_u2"), Problem{1, 100, 1020, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("K=1020 must be a positive multiple of 8"));
  EXPECT_FALSE(tma::fits(Config::parse("tma_m8_r64_b2_s4_x8"), Problem{1, 100, 512, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("fewer stages of 128 than the 8 CTAs"));
}

TEST(TmaFamily, FirstCutIsClusterSplitForNarrowShapesAndStreamKForWide) {
  const DeviceInfo dev = h200();
  // 1536 rows = 24 tiles of 64: 8-CTA clusters fill 192 of the 264 slots of two CTAs per SM.
  EXPECT_EQ(tma::first_cut_config(Problem{1, 1536, 7168, DType::BF16}, dev.sms).name(), "tma_m8_r64_b2_s4_x8");
  // 3648 rows = 57 tiles: 8 x 57 > 264, 4 x 57 = 228 fits.
  EXPECT_EQ(tma::first_cut_config(Problem{16, 3648, 7168, DType::BF16}, dev.sms).name(), "tma_m16_r64_b2_s4_x4");
  // 7168 x 14336 (205 MB): stream-K; so is every M > 16.
  EXPECT_EQ(tma::first_cut_config(Problem{2, 7168, 14336, DType::BF16}, dev.sms).name(), "tma_m8_r64_b2_s4_c2_u1");
  EXPECT_EQ(tma::first_cut_config(Problem{64, 7168, 14336, DType::BF16}, dev.sms).name(), "tma_m64_r64_b2_s3_c2_u1");
  EXPECT_EQ(tma::first_cut_config(Problem{64, 1536, 7168, DType::BF16}, dev.sms).name(), "tma_m64_r64_b1_s4_x8");
  // 2112 rows = 33 tiles: 8 x 33 = 264 CTAs fill every slot of two per SM, so the ring shrinks to 3 stages.
  EXPECT_EQ(tma::first_cut_config(Problem{1, 2112, 7168, DType::BF16}, dev.sms).name(), "tma_m8_r64_b2_s3_x8");
  // K = 128: one stage, no cluster can split it.
  EXPECT_EQ(tma::first_cut_config(Problem{4, 1536, 128, DType::BF16}, dev.sms).cluster, 0);
  const std::vector<Config> listed = listed_configs(Family::Tma);
  for (int64_t n : {1, 144, 2112, 20480})
    for (int64_t m : {1, 5, 8, 9, 16, 17, 32, 33, 64}) {
      const Problem p{m, n, 7168, DType::BF16};
      const Config c = tma::first_cut_config(p, dev.sms);
      std::string why;
      EXPECT_TRUE(tma::fits(c, p, dev, &why)) << m << ": " << why;
      EXPECT_NE(std::find(listed.begin(), listed.end(), c), listed.end()) << c.name() << " is not a listed config";
      EXPECT_EQ(forced_config("tma", p, dev), c);
    }
  EXPECT_EQ(forced_config("cublaslt", Problem{1, 8, 8, DType::BF16}, dev).family, Family::Cublaslt);
}

TEST(TmaFamily, StreamKRangesCoverEveryUnitOnce) {
  // The kernel's split (tma_gemm.cuh first_unit / owner_cta, here in host arithmetic): contiguous, in order,
  // every unit owned by exactly the CTA whose range holds it, for grids that do and do not divide the units.
  for (long long units : {1LL, 7LL, 336LL, 6384LL})
    for (int ctas : {1, 5, 132, 264}) {
      const tma::Grid g = tma::grid_for(units, 64, 1, 1, ctas, 1, 1);  // n = units rows of one stage each
      ASSERT_EQ(g.units, units);
      const int c = g.ctas;
      ASSERT_LE(c, units);
      long long next = 0;
      for (int i = 0; i < c; ++i) {
        const long long b = i * units / c, e = (i + 1) * units / c;
        ASSERT_EQ(b, next);
        ASSERT_GT(e, b) << units << " units, " << c << " CTAs: CTA " << i << " has none";
        for (long long u = b; u < e; ++u) ASSERT_EQ(((u + 1) * c - 1) / units, i);
        next = e;
      }
      ASSERT_EQ(next, units);
    }
}

}  // namespace
}  // namespace skinnygemm
