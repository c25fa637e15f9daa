// The TMA family on the host: its config names, the shape checks of supports(), its structural first-cut
// config, the stream-K split arithmetic the kernel relies on, and the forced name "tma".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/tma/tma_family.h"
#include "lab/device_presets.h"
#include "kernels/tma/tma_shape.h"
#include "skinnygemm/error.h"
#include "skinnygemm/select.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

DeviceInfo h200() { return tune::device_preset("h200"); }

// What Config::parse says of a name ("no error" where it parses).
std::string message(const std::string& name) {
  try {
    Config::parse(name);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::string("no error");
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
  const Config whole = Config::parse("tma_m16_r16_b2_s12_x1");  // one CTA per 16-row tile, whole K
  EXPECT_EQ(whole.rows, 16);
  EXPECT_EQ(whole.stages, 12);
  EXPECT_EQ(whole.cluster, 1);
  EXPECT_EQ(whole.name(), "tma_m16_r16_b2_s12_x1");
  EXPECT_EQ(Config::parse("cublaslt_torch").algo, kCublasltTorch);
  EXPECT_EQ(Config::parse("cublaslt_torch").name(), "cublaslt_torch");
}

TEST(TmaFamily, MalformedNamesNameThePart) {
  EXPECT_THAT(message("tma_m12_r64_b2_s4_c2_u2"), HasSubstr("token tile m12 is not built"));
  EXPECT_THAT(message("tma_m8_r48_b2_s4_c2_u2"), HasSubstr("rows per tile r48"));
  EXPECT_THAT(message("tma_m8_r16_b2_s9_x1"), HasSubstr("ring stages s9"));
  EXPECT_THAT(message("tma_m8_r64_b2_s4_x3"), HasSubstr("cluster x3"));
  EXPECT_THAT(message("tma_m8_r64_b2"), HasSubstr("expected tma_m<tile>"));
}

// The row stream (session 39, row_stream.cuh): 8-, 16- and 32-row tiles of 16 KB stages, token tiles 8 and 16, K a multiple
// of 64; one CTA per row tile; named, not listed.
TEST(TmaFamily, RowStreamNamesAndShapes) {
  const Config r = Config::parse("tma_m8_r16_b8_s4_rs");
  EXPECT_TRUE(r.row_stream);
  EXPECT_EQ(r.rows, 16);
  EXPECT_EQ(r.boxes, 8);
  EXPECT_EQ(r.stages, 4);
  EXPECT_EQ(r.cluster, 1);
  EXPECT_EQ(r.name(), "tma_m8_r16_b8_s4_rs");
  EXPECT_NE(r, Config::parse("tma_m8_r16_b8_s4_x1"));  // the x1 grid of the main kernel
  EXPECT_EQ(Config::parse("tma_m16_r8_b16_s3_rs").name(), "tma_m16_r8_b16_s3_rs");
  EXPECT_EQ(Config::parse("tma_m8_r32_b4_s6_rs").boxes, 4);
  EXPECT_THAT(message("tma_m8_r16_b2_s4_rs"), HasSubstr("16 rows take b8, got b2"));
  EXPECT_THAT(message("tma_m32_r16_b8_s4_rs"), HasSubstr("token tiles 8 and 16, got m32"));
  EXPECT_THAT(message("tma_m8_r64_b2_s4_rs"), HasSubstr("rows per tile r64"));
  for (const Config& c : listed_configs(Family::Tma)) EXPECT_FALSE(c.row_stream) << c.name();

  const DeviceInfo dev = h200();
  std::string why;
  EXPECT_TRUE(tma::fits(r, Problem{8, 2112, 7168, DType::BF16}, dev, &why)) << why;
  EXPECT_EQ(tma::launch_grid(r, Problem{8, 2112, 7168, DType::BF16}, dev.sms).ctas, 132);  // 2112 / 16
  EXPECT_EQ(tma::launch_grid(Config::parse("tma_m8_r8_b16_s3_rs"), Problem{1, 2100, 7168, DType::BF16}, dev.sms).ctas,
            263);  // the last tile's rows past N read as zeros
  // No workspace, so no bound of 2^20 row tiles (a review found the launcher checking one before its row-stream branch).
  EXPECT_TRUE(tma::fits(Config::parse("tma_m8_r8_b16_s3_rs"), Problem{1, 8388616, 64, DType::BF16}, dev, &why)) << why;
  EXPECT_FALSE(tma::fits(r, Problem{9, 2112, 7168, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("M=9 exceeds the token tile 8"));
  EXPECT_FALSE(tma::fits(r, Problem{1, 2112, 7176, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("K=7176 must be a positive multiple of 64 for the row stream"));
  // Shared memory: 2 KB, then per slot 16 KB of weights and the token tile's x rows (8 boxes x 16 rows x 128 bytes),
  // then three warps' sums (2 MMA tiles x 4 x 32 floats each).
  EXPECT_EQ(tma::row_stream_smem_bytes(16, 16, 4), 2048 + 4 * (16384 + 16384) + 3 * 2 * 4 * 32 * 4);
  EXPECT_EQ(tma::row_stream_smem_bytes(32, 8, 3), 2048 + 3 * (16384 + 4096) + 3 * 4 * 4 * 32 * 4);
  EXPECT_FALSE(tma::fits(Config::parse("tma_m16_r8_b16_s8_rs"), Problem{16, 2112, 7168, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("more shared memory than the device allows"));
}

TEST(TmaFamily, ListedRingsFitTwoCtasPerSm) {
  const std::vector<Config> configs = listed_configs(Family::Tma);
  EXPECT_GT(configs.size(), 100u);
  for (const Config& c : configs) {
    const int smem = tma::smem_bytes(c.rows, c.tile_m, c.stages, c.boxes, c.cluster, c.lead >= 0);
    EXPECT_LE(smem, (c.lead >= 0 || c.cluster == 0 ? 113 : 110) * 1024) << c.name();
    EXPECT_GE(smem, 40 * 1024) << c.name();
  }
}

TEST(TmaFamily, SmallRowTilesSplitKOverWarpsAndOneCtaPerTileCoversN) {
  // 16-row tiles: one row warp, four K warps, whose sums need 3 x 16 x tile_m floats beside the ring.
  EXPECT_EQ(tma::row_warps(16), 1);
  EXPECT_EQ(tma::row_warps(32), 2);
  EXPECT_EQ(tma::row_warps(64), 4);
  EXPECT_EQ(tma::row_warps(128), 4);
  EXPECT_EQ(tma::smem_bytes(16, 8, 16, 2) - tma::smem_bytes(16, 8, 16, 2, 2) + 16 * 8 * 4, 0);  // x2 adds the receive buffer
  EXPECT_EQ(tma::smem_bytes(16, 8, 1, 1), 1024 + tma::kBarrierBytes + 24 * 128 + 3 * 16 * 8 * 4);
  EXPECT_EQ(tma::smem_bytes(64, 8, 1, 1), 1024 + tma::kBarrierBytes + 72 * 128);
  // x1: 2112 rows of 16 = 132 CTAs (one per SM of an H200), each over all 112 stages of K = 7168.
  const tma::Grid g = tma::cluster_grid_for(2112, 7168, 16, 1, 1);
  EXPECT_EQ(g.tiles, 132);
  EXPECT_EQ(g.ctas, 132);
  EXPECT_EQ(g.units, 132LL * 112);
  // Every listed small-row config is a one-CTA-per-tile, 2-4-CTA cluster or lead-split config (no stream-K).
  int small = 0;
  for (const Config& c : listed_configs(Family::Tma))
    if (c.rows < 64) {
      ++small;
      EXPECT_TRUE((c.cluster >= 1 && c.cluster <= 4) || c.lead >= 0) << c.name();
    }
  EXPECT_GT(small, 20);
}

TEST(TmaFamily, LeadSplitGivesPartZeroTheLeadAndCoversEveryStage) {
  const Config c = Config::parse("tma_m8_r64_b2_s4_c2_d3");
  EXPECT_EQ(c.ctas_per_sm, 2);
  EXPECT_EQ(c.lead, 3);
  EXPECT_EQ(c.min_units, 0);
  EXPECT_EQ(c.name(), "tma_m8_r64_b2_s4_c2_d3");
  EXPECT_NE(c, Config::parse("tma_m8_r64_b2_s4_c2_d6"));
  EXPECT_NE(Config::parse("tma_m8_r64_b2_s4_c2_u1"), Config::parse("tma_m8_r64_b2_s3_c2_u1"));  // stages compared
  // 2112 x 7168, 64-row tiles, two boxes: 33 tiles x 8 parts = 264 CTAs; part 0 has (56 + 7 x 3) / 8 = 9 stages,
  // the seven others share 47 (6 or 7 each).
  tma::Grid g = tma::lead_split_grid_for(2112, 7168, 64, 2, 2, 3, 132);
  EXPECT_EQ(g.tiles, 33);
  EXPECT_EQ(g.parts, 8);
  EXPECT_EQ(g.ctas, 264);
  EXPECT_EQ(g.lead_stages, 9);
  // The kernel's ranges (tma_gemm.cuh lead_split_stage): contiguous, cover every stage, none empty, and part 0
  // at least `lead` longer than any other, for shapes from one stage to many parts.
  struct Shape { long long n, k; int rows, boxes, lead; };
  for (Shape s : {Shape{2112, 7168, 64, 2, 3}, Shape{1536, 7168, 64, 1, 6}, Shape{144, 7168, 64, 2, 2},
                  Shape{7168, 14336, 128, 1, 4}, Shape{100, 200, 32, 1, 6}, Shape{20480, 7168, 64, 2, 1},
                  Shape{64, 64, 64, 1, 3}}) {
    g = tma::lead_split_grid_for(s.n, s.k, s.rows, s.boxes, 2, s.lead, 132);
    ASSERT_GE(g.parts, 1);
    ASSERT_LE(g.ctas, std::max(264, g.tiles)) << s.n << "x" << s.k;
    if (g.parts > 1) {  // the launcher's workspace holds the largest token tile's partials
      EXPECT_LE(static_cast<std::size_t>(g.ctas) * s.rows * 64, tma::lead_partial_floats(132)) << s.n << "x" << s.k;
    }
    auto first = [&](int j) { return j == 0 ? 0 : g.lead_stages + (j - 1) * (g.k_stages - g.lead_stages) / (g.parts - 1); };
    if (g.parts == 1) {
      EXPECT_EQ(g.lead_stages, g.k_stages);
      continue;
    }
    EXPECT_EQ(first(g.parts), g.k_stages);
    for (int j = 0; j < g.parts; ++j) {
      ASSERT_GT(first(j + 1), first(j)) << s.n << "x" << s.k << " part " << j << " is empty";
      if (j > 0 && g.k_stages >= g.parts * (s.lead + 2)) {
        EXPECT_GE(g.lead_stages - (first(j + 1) - first(j)), s.lead - 1) << s.n << "x" << s.k << " part " << j;
      }
    }
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
  // 4- and 8-box stages: built for the 16- and 32-row tiles at token tiles 8 and 16 (lab candidates), not listed.
  EXPECT_TRUE(tma::fits(Config::parse("tma_m16_r16_b8_s3_x1"), Problem{16, 2112, 7168, DType::BF16}, dev, &why)) << why;
  EXPECT_FALSE(tma::fits(Config::parse("tma_m32_r16_b8_s3_x1"), Problem{1, 2112, 7168, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("token tiles 8 and 16 only"));
  EXPECT_FALSE(tma::fits(Config::parse("tma_m8_r64_b4_s3_x1"), Problem{1, 2112, 7168, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("16- and 32-row tiles"));
  // 16-box stages (session 38): the 16-row tile only; its 4-stage ring at the 16-token tile (256 KB) does not fit.
  EXPECT_TRUE(tma::fits(Config::parse("tma_m8_r16_b16_s4_x1"), Problem{8, 2112, 7168, DType::BF16}, dev, &why)) << why;
  EXPECT_FALSE(tma::fits(Config::parse("tma_m8_r32_b16_s3_x1"), Problem{1, 2112, 7168, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("built for 16-row tiles at token tiles 8 and 16 only"));
  EXPECT_FALSE(tma::fits(Config::parse("tma_m16_r16_b16_s4_x1"), Problem{16, 2112, 7168, DType::BF16}, dev, &why));
  EXPECT_THAT(why, HasSubstr("more shared memory than the device allows"));
  for (const Config& c : listed_configs(Family::Tma)) EXPECT_LE(c.boxes, 2) << c.name();
  // The launcher's workspace (session 32): 49155 rows in 32-row tiles are 1537 lead-split CTAs of one part each, whole
  // tiles with no partials, so they launch (the launcher threw before, while supports() said yes); every listed config
  // on that shape fits, and a grid of polled shares beyond the workspace would not.
  for (const Config& c : listed_configs(Family::Tma)) {
    const Problem p{std::min<int64_t>(c.tile_m, 24), 49155, 4096, DType::BF16};
    EXPECT_TRUE(tma::fits(c, p, dev, &why)) << c.name() << ": " << why;
  }
  tma::Grid shares;  // stream-K's polled shares: one rows x tile_m slot per CTA
  shares.ctas = 2 * dev.sms, shares.parts = 0;
  EXPECT_TRUE(tma::partials_fit(shares, 128, 64, 0, false, dev.sms));
  shares.ctas = 2 * dev.sms + 1;
  EXPECT_FALSE(tma::partials_fit(shares, 128, 64, 0, false, dev.sms));
  shares.parts = 1;  // a lead split of one part per tile: whole tiles, no slot
  EXPECT_TRUE(tma::partials_fit(shares, 128, 64, 0, true, dev.sms));
  shares.parts = 2;
  EXPECT_FALSE(tma::partials_fit(shares, 128, 64, 0, true, dev.sms));
}

TEST(TmaFamily, FirstCutIsClusterSplitForNarrowShapesLeadSplitWhereOnlyTwoFitStreamKForWide) {
  const DeviceInfo dev = h200();
  // No lead split where a cluster of 4 or 8 fits: 1536 rows = 24 tiles of 64, 8-CTA clusters fill 192 of the 264 slots of two CTAs per SM.
  EXPECT_EQ(tma::first_cut_config(Problem{1, 1536, 7168, DType::BF16}, dev.sms).name(), "tma_m8_r64_b2_s4_x8");
  // 3648 rows = 57 tiles: 8 x 57 > 264, 4 x 57 = 228 fits.
  EXPECT_EQ(tma::first_cut_config(Problem{16, 3648, 7168, DType::BF16}, dev.sms).name(), "tma_m16_r64_b2_s4_x4");
  // 2112 rows = 33 tiles: 8 x 33 = 264 CTAs fill every slot of two per SM, so the ring shrinks to 3 stages.
  EXPECT_EQ(tma::first_cut_config(Problem{1, 2112, 7168, DType::BF16}, dev.sms).name(), "tma_m8_r64_b2_s3_x8");
  // With a lead: 2112, 1536 and 3648 rows = 66, 48, 114 tiles of 32: 4, 5 and 2 parts at two CTAs per SM.
  EXPECT_EQ(tma::first_cut_config(Problem{1, 2112, 7168, DType::BF16}, dev.sms, 9).name(), "tma_m8_r32_b2_s7_c2_d9");
  EXPECT_EQ(tma::first_cut_config(Problem{8, 1536, 7168, DType::BF16}, dev.sms, 3).name(), "tma_m8_r32_b2_s7_c2_d3");
  EXPECT_EQ(tma::first_cut_config(Problem{16, 3648, 7168, DType::BF16}, dev.sms, 0).name(), "tma_m16_r32_b2_s7_c2_d0");
  // 144 rows (5 tiles, 16 parts): no lead split even when asked; 64-row tiles split by a cluster of 8 (3 x 8 CTAs).
  EXPECT_EQ(tma::first_cut_config(Problem{1, 144, 7168, DType::BF16}, dev.sms, 9).name(), "tma_m8_r64_b2_s4_x8");
  // 6288 rows (99 tiles of 64): only a cluster of two fits (198 CTAs), so at M <= 16 the 64-row lead split with a
  // lead of 6 runs instead (judged in the step), on a 5-stage ring (its parts have 25 and 31 stages: session 17); at
  // M = 32 the cluster of two.
  EXPECT_EQ(tma::first_cut_config(Problem{4, 6288, 7168, DType::BF16}, dev.sms).name(), "tma_m8_r64_b2_s5_c2_d6");
  EXPECT_EQ(tma::first_cut_config(Problem{16, 7168, 1536, DType::BF16}, dev.sms).name(), "tma_m16_r64_b2_s5_c2_d6");
  EXPECT_EQ(tma::first_cut_config(Problem{32, 6288, 7168, DType::BF16}, dev.sms).name(), "tma_m32_r64_b2_s4_x2");
  // 7168 x 14336 (205 MB): stream-K; M > 16: the cluster split or stream-K as before.
  EXPECT_EQ(tma::first_cut_config(Problem{2, 7168, 14336, DType::BF16}, dev.sms).name(), "tma_m8_r64_b2_s4_c2_u1");
  EXPECT_EQ(tma::first_cut_config(Problem{64, 7168, 14336, DType::BF16}, dev.sms).name(), "tma_m64_r64_b2_s3_c2_u1");
  EXPECT_EQ(tma::first_cut_config(Problem{64, 1536, 7168, DType::BF16}, dev.sms).name(), "tma_m64_r64_b1_s4_x8");
  // 32 tokens in clusters of eight on nearly every two-per-SM slot (2112 x 7168: 264 CTAs): four one-box stages, so
  // that three CTAs fit an SM (session 23); fewer CTAs (1536 x 7168: 192) and clusters of four keep two boxes.
  EXPECT_EQ(tma::first_cut_config(Problem{32, 2112, 7168, DType::BF16}, dev.sms).name(), "tma_m32_r64_b1_s4_x8");
  EXPECT_EQ(tma::first_cut_config(Problem{32, 1536, 7168, DType::BF16}, dev.sms).name(), "tma_m32_r64_b2_s4_x8");
  EXPECT_EQ(tma::first_cut_config(Problem{32, 3648, 7168, DType::BF16}, dev.sms).name(), "tma_m32_r64_b2_s4_x4");
  // K = 128: one stage, no cluster can split it.
  EXPECT_EQ(tma::first_cut_config(Problem{4, 1536, 128, DType::BF16}, dev.sms).cluster, 0);
  const std::vector<Config> listed = listed_configs(Family::Tma);
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 7168}, {144, 7168}, {2112, 7168}, {6288, 7168}, {20480, 7168}, {7168, 768}, {7168, 1536}})
    for (int64_t m : {1, 5, 8, 9, 16, 17, 32, 33, 64}) {
      const Problem p{m, n, k, DType::BF16};
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

// An empty problem asked about through the public API: supports() of every listed config and the family's forced first
// cut answer without dividing by the grid's zero row tiles (session 43: both died of SIGFPE in lead_split_grid_for).
TEST(TmaFamily, EmptyProblemsAreAnsweredWithoutCrashing) {
  for (const Problem& p : {Problem{1, 0, 7168, DType::BF16}, Problem{16, 0, 64, DType::BF16}}) {
    for (const Config& c : listed_configs(Family::Tma)) supports(c, p, h200(), 16);
    const Config cut = forced_config("tma", p, h200());
    EXPECT_EQ(cut.family, Family::Tma) << cut.name();
    EXPECT_EQ(tma::lead_split_grid_for(p.n, p.k, 32, 2, 2, 6, 132).parts, 1);
  }
}

}  // namespace
}  // namespace skinnygemm
