// Issue 18: the GPU heuristic's structural pick of the TMA family (tma::structural_pick, select.cpp's
// structural_choice), on fixed device facts and without a GPU: what it picks, where it leaves the point to the scored
// heuristic, and that the pick follows the facts it is given (not a table, not a measurement).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/family.h"
#include "kernels/tma/tma_family.h"
#include "kernels/tma/tma_shape.h"
#include "lab/device_presets.h"
#include "runtime/cost_model.h"
#include "skinnygemm/select.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

// The heuristic as a build holding every instance picks (select.cpp's, supports() replaced by the shape arithmetic).
Choice pick_on(const DeviceInfo& dev, int64_t m, int64_t n, int64_t k) {
  const Problem p{m, n, k, DType::BF16};
  Choice c;
  if (!heuristic_choice_among(p, dev, [&](const Config& x) { return fits_shape(x, p, dev); }, &c))
    c.config = Config::parse("cublaslt");
  return c;
}

struct PickPoint {
  int64_t m, n, k;
  const char* pick;
};

// Each point is the structural pick on dev: that config, from the heuristic, named in the reason, the same twice.
void expect_structural_picks(const DeviceInfo& dev, const std::vector<PickPoint>& points) {
  std::vector<std::string> listed;  // what the tuner lists (and the build holds): a pick must be one of them
  for (const Config& c : listed_configs(Family::Tma)) listed.push_back(c.name());
  for (const PickPoint& pt : points) {
    EXPECT_NE(std::find(listed.begin(), listed.end(), pt.pick), listed.end()) << pt.pick << " is not a listed config";
    const Choice c = pick_on(dev, pt.m, pt.n, pt.k);
    EXPECT_EQ(c.config.name(), pt.pick) << pt.n << "x" << pt.k << " m=" << pt.m << ": " << c.reason.str();
    EXPECT_EQ(c.source, Source::Heuristic);
    EXPECT_THAT(c.reason.str(), HasSubstr("tma structural pick " + std::string(pt.pick)));
    EXPECT_EQ(c.config.name(), pick_on(dev, pt.m, pt.n, pt.k).config.name()) << "stable across calls";
  }
}

struct Shape3 {
  int64_t m, n, k;
};

// A rule of session 33 names itself in the pick's reason (note) where it fires; at its counter-examples the reason
// holds not even the note's distinctive part (marker, a substring of note).
void expect_rule_note(const DeviceInfo& dev, const std::string& note, const std::string& marker,
                      const std::vector<Shape3>& fired, const std::vector<Shape3>& not_fired) {
  for (const Shape3& s : fired)
    EXPECT_THAT(pick_on(dev, s.m, s.n, s.k).reason.str(), HasSubstr(note)) << s.n << "x" << s.k << " m=" << s.m;
  for (const Shape3& s : not_fired)
    EXPECT_THAT(pick_on(dev, s.m, s.n, s.k).reason.str(), ::testing::Not(HasSubstr(marker)))
        << s.n << "x" << s.k << " m=" << s.m;
}

// Each point is left to the scored heuristic on dev: the structural pick declines it.
void expect_left_to_the_scored_heuristic(const DeviceInfo& dev, const std::vector<Shape3>& points) {
  Config pick;
  std::string why;
  for (const Shape3& s : points)
    EXPECT_FALSE(tma::structural_pick(Problem{s.m, s.n, s.k, DType::BF16}, dev, &pick, &why))
        << s.n << "x" << s.k << " m=" << s.m << ": " << pick.name();
}

TEST(StructuralPick, H200PicksAreTheFirstCutsGrids) {
  const DeviceInfo h200 = tune::device_preset("h200");
  // One of each rule of tma_family.h's first cut: the 8-CTA cluster (14 and 33 row tiles), the lead split where only
  // a cluster of two fits (a one-part tile at 7168 x 768), stream-K at 128 MiB and more, the 16-token tile.
  expect_structural_picks(h200, {
      {1, 896, 7168, "tma_m8_r64_b2_s4_x8"},      {8, 2112, 7168, "tma_m8_r64_b2_s3_x8"},
      {16, 2112, 7168, "tma_m16_r64_b2_s3_x8"},   {4, 7168, 1536, "tma_m8_r64_b2_s5_c2_d6"},
      {1, 7168, 768, "tma_m8_r64_b2_s4_c2_d6"},   {12, 6288, 7168, "tma_m16_r64_b2_s5_c2_d6"},
      {1, 20480, 7168, "tma_m8_r64_b2_s4_c2_u1"}, {5, 7168, 14336, "tma_m8_r64_b2_s4_c2_u1"},
      {2, 1536, 128, "tma_m8_r64_b2_s4_c2_u1"},
      // K of one stage at the 16-token tile with a CTA per 64-row tile: the lead split's grid (one part per tile, the
      // staged epilogue; session 19's trial FB); more tiles than slots (20480 x 128) stays stream-K.
      {16, 1536, 128, "tma_m16_r64_b2_s4_c2_d6"}, {9, 896, 128, "tma_m16_r64_b2_s4_c2_d6"},
      {16, 20480, 128, "tma_m16_r64_b2_s4_c2_u1"},
      // The rules held-out set six corrected (docs/tuning.md, session 9): a cluster CTA keeps 1.75 stages or more (12
      // stages: 4 CTAs, not 8); a cluster below one CTA per SM with > 192 KiB each was stream-K (at M <= 32 a cluster
      // of 8 again since session 33); where no cluster fits, one CTA per row tile (64 rows where that fills 9/10 of the
      // slots, 32 where K is short).
      {1, 1536, 1536, "tma_m8_r64_b2_s4_x4"},     {4, 1000, 16384, "tma_m8_r64_b2_s4_x8"},
      {1, 16032, 4096, "tma_m8_r64_b2_s4_c2_d6"}, {8, 9728, 896, "tma_m8_r32_b2_s4_c2_d6"},
      {16, 5128, 1024, "tma_m16_r32_b2_s6_c2_d6"}, {1, 9216, 7168, "tma_m8_r64_b2_s4_c2_u1"},
      // Set seven's (session 12): a cluster of four on 64-row tiles just over one CTA per SM with 5+ stages each is
      // the 64-row lead split at M <= 2 and, with 7+ stages, clusters of four on 32-row tiles above; outside the
      // band (3 stages; 224 CTAs) and at 5 stages above M = 2 as before, there on the 3-stage ring since session 49
      // (188 CTAs of 5 stages; set six's best at M = 5 and 8 on the H200).
      {1, 2560, 10240, "tma_m8_r64_b2_s4_c2_d6"}, {2, 2304, 3584, "tma_m8_r64_b2_s4_c2_d6"},
      {3, 2560, 10240, "tma_m8_r32_b2_s4_x4"},    {16, 2304, 4096, "tma_m16_r32_b2_s4_x4"},
      {1, 3000, 2560, "tma_m8_r64_b2_s4_c2_d6"},  {16, 3000, 2560, "tma_m16_r64_b2_s3_x4"},
      {8, 3584, 7168, "tma_m8_r64_b2_s4_x4"},
      // Session 16 (set nine): 144 cluster CTAs of 3 stages each, some SMs with two, so a 3-stage ring.
      {1, 2304, 1536, "tma_m8_r64_b2_s3_x4"},
  });
  // The reason names the grid: 33 row tiles of 64 rows, clusters of 8, 264 CTAs on 2 x 132 slots.
  EXPECT_THAT(pick_on(h200, 1, 2112, 7168).reason.str(),
              HasSubstr("33 row tiles of 64 x 8 cluster CTAs = 264 CTAs on 264 two-per-SM slots"));
  EXPECT_THAT(pick_on(h200, 1, 7168, 1536).reason.str(), HasSubstr("112 row tiles of 64 x 2 lead-split parts"));
}

TEST(StructuralPick, LeavesM17AndUpOddKAndOtherGpusToTheScoredHeuristic) {
  const DeviceInfo h200 = tune::device_preset("h200");
  for (int64_t m : {17, 24, 32, 48, 64}) {
    const Choice c = pick_on(h200, m, 2112, 7168);
    EXPECT_NE(c.config.family, Family::Tma) << "m=" << m << ": " << c.config.name();
    EXPECT_THAT(c.reason.str(), ::testing::Not(HasSubstr("structural")));
  }
  Config pick;
  std::string why;
  EXPECT_FALSE(tma::structural_pick(Problem{17, 2112, 7168, DType::BF16}, h200, &pick, &why));
  // ... and no structural pick above 64 tokens, misaligned rows or not (no token tile holds them).
  EXPECT_FALSE(tma::structural_pick(Problem{65, 19401, 8192, DType::BF16}, h200, &pick, &why));
  // Narrow rows: 3 row tiles x a cluster of 8 is 24 CTAs on 132 SMs (2 MiB of weights): the stage ring decides.
  EXPECT_FALSE(tma::structural_pick(Problem{1, 144, 7168, DType::BF16}, h200, &pick, &why));
  EXPECT_EQ(pick_on(h200, 1, 144, 7168).config.family, Family::Bulk) << pick_on(h200, 1, 144, 7168).config.name();
  // ... but under 1 MiB the family's lower fixed cost wins: 1536 x 128 is 24 CTAs (stream-K at M <= 8, one-part lead
  // split at 9-16).
  EXPECT_TRUE(tma::structural_pick(Problem{1, 1536, 128, DType::BF16}, h200, &pick, &why));
  // K % 8 != 0: the copy engine cannot take the rows, so the pick does not fit and the scored heuristic decides (at M
  // >= 9 too, where rule B of session 34 would take K % 64 != 0 to cuBLASLt: not its case).
  EXPECT_NE(pick_on(h200, 1, 2112, 7170).config.family, Family::Tma);
  EXPECT_THAT(pick_on(h200, 12, 2112, 7170).reason.str(), ::testing::Not(HasSubstr("not a multiple of 64")));
  EXPECT_THAT(pick_on(h200, 2, 40000, 1100).reason.str(), ::testing::Not(HasSubstr("structural")));
  DeviceInfo ada = h200;
  ada.cc_major = 8, ada.cc_minor = 9;  // the family is built for sm_90a only
  EXPECT_FALSE(tma::structural_pick(Problem{1, 2112, 7168, DType::BF16}, ada, &pick, &why));
  EXPECT_FALSE(tma::structural_pick(Problem{1, 2112, 7168, DType::BF16}, cpu_device_info(), &pick, &why));
  // Empty problems have no grid (the first cut would divide by zero row tiles): no pick, and select() does not crash.
  EXPECT_FALSE(tma::structural_pick(Problem{1, 0, 128, DType::BF16}, h200, &pick, &why));
  EXPECT_FALSE(tma::structural_pick(Problem{0, 2112, 7168, DType::BF16}, h200, &pick, &why));
  Choice empty;  // and the GPU heuristic leaves it to the fallback (its scored models divide by N)
  EXPECT_FALSE(heuristic_choice_among(Problem{1, 0, 128, DType::BF16}, h200, [](const Config&) { return true; }, &empty));
}

// Session 32 (held-out sets sixteen and seventeen, call 3): where y's rows are not 16-byte aligned, cuBLASLt ran
// 1.8-4.9x slower than the family's first cut at M = 17-64 on all 15 odd-N shapes, so the first cut is the pick there
// up to 64 tokens, with the 32- and 64-token tiles; 16-byte aligned rows (N % 8 == 0, or a padded row stride) keep the
// scored heuristic.
TEST(StructuralPick, MisalignedOutputRowsKeepTheFamilyUpTo64Tokens) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {17, 19401, 8192, "tma_m32_r64_b2_s4_c2_u1"}, {32, 14851, 8192, "tma_m32_r64_b2_s4_c2_u1"},
      {48, 51865, 4096, "tma_m64_r64_b2_s3_c2_u1"}, {64, 25013, 10240, "tma_m64_r64_b2_s3_c2_u1"},
      {24, 1337, 16384, "tma_m32_r64_b2_s4_x8"},    {64, 1009, 12288, "tma_m64_r64_b1_s4_x8"},
      {24, 5003, 1024, "tma_m32_r64_b2_s4_x2"},     {48, 6013, 1280, "tma_m64_r64_b1_s4_x2"},
      // N even but not a multiple of 8: rows of 4 or 8 bytes past 16, misaligned all the same.
      {32, 19402, 8192, "tma_m32_r64_b2_s4_c2_u1"}, {32, 19404, 8192, "tma_m32_r64_b2_s4_c2_u1"},
  });
  EXPECT_THAT(pick_on(h200, 24, 19401, 8192).reason.str(),
              HasSubstr("y's rows of 38802 bytes are not 16-byte aligned"));
  Config pick;
  std::string why;
  // 16-byte aligned rows: N % 8 == 0, or an odd N written into rows padded to a multiple of 8 elements.
  EXPECT_FALSE(tma::structural_pick(Problem{24, 19400, 8192, DType::BF16}, h200, &pick, &why));
  Problem padded{24, 19401, 8192, DType::BF16};
  padded.ldy = 19408;
  EXPECT_FALSE(tma::structural_pick(padded, h200, &pick, &why));
  Problem fp16{24, 19401, 8192, DType::FP16};
  EXPECT_TRUE(tma::structural_pick(fp16, h200, &pick, &why));
  EXPECT_EQ(pick.tile_m, 32);
  // At M <= 16 nothing changes (the reason carries no alignment clause).
  EXPECT_THAT(pick_on(h200, 16, 19401, 8192).reason.str(), ::testing::Not(HasSubstr("16-byte aligned")));
}

// Under 1 MiB a narrow grid stays with the family only while each CTA's share of K fits its ring (tma_family.cpp):
// one 64-row tile split by a cluster of 8 leaves each CTA K / 8 stages, a chain of refills past the 4-stage ring at
// 1 x 8192 (8 stages per CTA; measured 4.3-4.7 us at every M, cuBLASLt 2.6-3.0 at M = 1-5 and 12) and 24 x 16384
// (16; 6.7-7.1 us, the best measured 4.6-6.2), and the scored families decide, as on one-tile shapes they were
// measured (16 x 6144: the stage ring, 2.22-2.38 us at M <= 4). Within the ring the cluster stays (32 x 2880: 3
// stages per CTA, 2.68-3.28 us, the best measured at every M; 1536 x 128: one stage).
TEST(StructuralPick, NarrowGridsUnderOneMiBStayOnlyWhereEachCtasShareOfKFitsItsRing) {
  const DeviceInfo h200 = tune::device_preset("h200");
  Config pick;
  std::string why;
  struct Point {
    int64_t n, k;
  };
  for (const Point& pt : {Point{1, 8192}, Point{24, 16384}, Point{16, 6144}, Point{48, 8192}})
    for (int64_t m : {1, 2, 4, 5, 8, 12, 16}) {
      const Problem p{m, pt.n, pt.k, DType::BF16};
      ASSERT_LT(p.weight_bytes(), int64_t{1} << 20);
      // The first cut on its own is the cluster of 8 on the one row tile: the rule, not the cut, leaves the point.
      const Config cut = tma::first_cut_config(p, h200.sms);
      EXPECT_EQ(cut.cluster, 8) << pt.n << "x" << pt.k << " m=" << m << ": " << cut.name();
      EXPECT_FALSE(tma::structural_pick(p, h200, &pick, &why)) << pt.n << "x" << pt.k << " m=" << m << ": " << why;
      const Choice c = pick_on(h200, m, pt.n, pt.k);
      EXPECT_NE(c.config.family, Family::Tma) << pt.n << "x" << pt.k << " m=" << m << ": " << c.config.name();
      EXPECT_THAT(c.reason.str(), ::testing::Not(HasSubstr("structural")));
    }
  // The scored families' picks there at M <= 4 (the stage ring), as measured on 16 x 6144 and 48 x 8192.
  EXPECT_EQ(pick_on(h200, 4, 16, 6144).config.family, Family::Bulk) << pick_on(h200, 4, 16, 6144).config.name();
  EXPECT_EQ(pick_on(h200, 1, 1, 8192).config.family, Family::Bulk) << pick_on(h200, 1, 1, 8192).config.name();
  // Within the ring: 23 stages over 8 CTAs (3 each) at 32 x 2880, 16 over 8 at 64 x 2048, one stage at 1536 x 128.
  for (int64_t m : {1, 8, 16}) {
    for (const Point& pt : {Point{32, 2880}, Point{64, 2048}}) {
      EXPECT_TRUE(tma::structural_pick(Problem{m, pt.n, pt.k, DType::BF16}, h200, &pick, &why))
          << pt.n << "x" << pt.k << " m=" << m;
      EXPECT_EQ(pick.cluster, 8) << pick.name();
      EXPECT_THAT(why, HasSubstr("1 row tiles of 64 x 8 cluster CTAs = 8 CTAs"));
    }
    EXPECT_TRUE(tma::structural_pick(Problem{m, 1536, 128, DType::BF16}, h200, &pick, &why)) << "m=" << m;
  }
}

// Session 42, rule R (held-out set twenty-four on the H200): above 16 tokens, where only y rows that are not 16-byte
// aligned reach the structural pick, a narrow grid of two or more row tiles of at most 256 KiB per CTA keeps the first
// cut's cluster of eight (150 x 3504 and 255 x 15992: 0.60-0.81x the scored pick's time at M = 24-64). Up to 16 tokens
// (but rule Z's 9-16, session 49), on one row tile at any M, and past 256 KiB per CTA, the exclusion above still leaves
// the point to the scored families (aligned rows reach it above 16 tokens only through rules U and X).
TEST(StructuralPick, NarrowMisalignedGridsAboveSixteenTokensKeepTheClusterOfEight) {
  const DeviceInfo h200 = tune::device_preset("h200");
  Config pick;
  std::string why;
  for (int64_t n : {150, 255})
    for (int64_t k : {3504, 15992}) {
      expect_structural_picks(h200, {{24, n, k, "tma_m32_r64_b2_s4_x8"}, {32, n, k, "tma_m32_r64_b2_s4_x8"},
                                     {48, n, k, "tma_m64_r64_b1_s4_x8"}, {64, n, k, "tma_m64_r64_b1_s4_x8"}});
      for (int64_t m : {1, 8, 16}) {
        if (m == 16 && k == 3504) continue;  // rule Z (session 49): 3-4 tiles of 4 stages per CTA at 9-16 tokens
        EXPECT_FALSE(tma::structural_pick(Problem{m, n, k, DType::BF16}, h200, &pick, &why))
            << n << "x" << k << " m=" << m << ": " << why;
      }
    }
  expect_structural_picks(h200, {{16, 150, 3504, "tma_m16_r64_b2_s4_x8"}, {16, 255, 3504, "tma_m16_r64_b2_s4_x8"}});
  for (int64_t m : {24, 64}) {
    EXPECT_FALSE(tma::structural_pick(Problem{m, 60, 16384, DType::BF16}, h200, &pick, &why))
        << "m=" << m << ": " << why;
    // More than 256 KiB of weights per CTA (100 x 65536: 16 CTAs of 800 KiB), beyond what was measured.
    EXPECT_FALSE(tma::structural_pick(Problem{m, 100, 65536, DType::BF16}, h200, &pick, &why))
        << "m=" << m << ": " << why;
  }
}

// Session 42, rule S: rule K's one-box 64-row tiles also at 2 to 2.7 tiles per SM where K <= 2560 is a multiple of 64
// (18432 x 1152: 0.86-0.89x the 32-row lead split, set twenty-four; 21888 x 2048 and 22781 x 2560 0.94-0.98x); at K =
// 3072 the 32-row lead split stays (16941 and 18432 x 3072: the one-box tile 1.06-1.12x), and so does a K that is not a
// multiple of 64. Session 45: from K = 1088 (19208 x 1088: 0.82-0.85x at M = 2-16, set twenty-five, blind on the H200);
// session 46 from K = 1024 (21011 x 1024: 0.93-0.95x at M = 1-16, set twenty-six, blind on the H100); session 48 from
// K = 768 (18627 x 768: 0.91-0.95x at M = 1-16, set thirty, blind on the H100).
TEST(StructuralPick, WideTilesForTwoToNearlyThreePerSmWithShortKTakeOneBoxStages) {
  const DeviceInfo h200 = tune::device_preset("h200");
  const std::string rule_s = "(sessions 42, 45-51)";  // the rule's note
  for (int64_t m : {1, 5, 8}) {
    expect_structural_picks(h200, {{m, 18432, 1152, "tma_m8_r64_b1_s7_c2_d6"},
                                   {m, 21888, 2048, "tma_m8_r64_b1_s7_c2_d6"},
                                   {m, 22781, 2560, "tma_m8_r64_b1_s7_c2_d6"},
                                   {m, 19208, 1088, "tma_m8_r64_b1_s7_c2_d6"},  // session 45 (set twenty-five)
                                   {m, 21011, 1024, "tma_m8_r64_b1_s7_c2_d6"},  // session 46 (set twenty-six)
                                   {m, 18432, 960, "tma_m8_r64_b1_s7_c2_d6"},   // session 47 (sets 27-29)
                                   {m, 18432, 832, "tma_m8_r64_b1_s7_c2_d6"},
                                   {m, 18627, 768, "tma_m8_r64_b1_s7_c2_d6"},   // session 48 (set thirty)
                                   {m, 19197, 640, "tma_m8_r64_b1_s7_c2_d6"},   // session 49 (set thirty-three)
                                   {m, 18432, 3072, "tma_m8_r32_b2_s4_c2_d6"}});
    EXPECT_THAT(pick_on(h200, m, 18432, 1152).reason.str(), HasSubstr(rule_s));
    EXPECT_THAT(pick_on(h200, m, 18432, 3072).reason.str(), ::testing::Not(HasSubstr(rule_s)));
  }
  expect_structural_picks(h200, {{16, 18432, 1152, "tma_m16_r64_b1_s6_c2_d6"},
                                 {16, 19208, 1088, "tma_m16_r64_b1_s6_c2_d6"}});
  // The edges: 356 tiles of 64 (22784 rows, 2.697 per SM) in, 357 out (rule K's since session 46); K = 576 in
  // (session 51), 512 out (not measured); K not a multiple of 64 (1160) out; fewer 64-row tiles than slots (14336 x
  // 1792: 224) keep the two-box tiles of session 16.
  EXPECT_THAT(pick_on(h200, 8, 22784, 1152).reason.str(), HasSubstr(rule_s));
  EXPECT_THAT(pick_on(h200, 8, 18432, 576).reason.str(), HasSubstr(rule_s));
  for (const Shape3& out : std::vector<Shape3>{{8, 22785, 1152}, {8, 18432, 512}, {1, 18432, 1160}, {8, 14336, 1792}})
    EXPECT_THAT(pick_on(h200, out.m, out.n, out.k).reason.str(), ::testing::Not(HasSubstr(rule_s)))
        << out.n << "x" << out.k;
}

// Session 16's three rules from held-out set nine's first run (581d850; docs/tuning.md "Session 16"), each with the
// neighbour it must leave alone. Where a pick changed, the old one lost by 22-42% there:
//  - short K and no cluster: 64-row tiles where they fill three quarters of the two-per-SM slots and no more (14336 x
//    1792: 224 tiles, 13.3 us against 18.2 in 32-row tiles), 32-row ones below (9728 x 896: 152 tiles) and above
//    (20000 x 1536: 313 tiles, where 64 rows of two boxes lost 24-27% against 32 rows' 10-13% in set ten;
//    one-box 64-row tiles took it in session 42, rule S);
//  - the band's 32-row clusters: of two where four would put more than 2.75 CTAs on an SM (3072 x 12288: 384 CTAs;
//    20.8 us in twos against 28.0 in fours at M = 3-8), of four below that (2816 x 4096: 352, the best measured);
//  - a cluster's ring: 3 stages where some SMs hold two CTAs of at most 4 stages each (1280 x 2048: 160 CTAs of 2
//    stages, 2.95 us against 3.61 with 4 at M = 1), 4 with fewer CTAs than SMs (128 x 2048: 16 CTAs);
//  - and from set ten: clusters that fill the slots with CTAs of at most 2 stages halve (4000 x 1000: fours to twos
//    with a 4-stage ring, 3.45 us against 4.56 at M = 1); a cluster with > 192 KiB per CTA goes to stream-K only
//    where that gives each row tile at most 32 CTAs (1000 x 16384: 16 tiles; since session 33 at the 64-token tile
//    only: the test below); one tile (60 x 16384, 128 CTAs'
//    partials into one reducer: up to 3.5x the best measured) keeps its cluster, a narrow grid, so the scored
//    families take it.
TEST(StructuralPick, SetNineAndTenRulesAndTheNeighboursTheyLeave) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 14336, 1792, "tma_m8_r64_b2_s4_c2_d6"}, {16, 14336, 1792, "tma_m16_r64_b2_s4_c2_d6"},
      {1, 9728, 896, "tma_m8_r32_b2_s4_c2_d6"},
      {1, 20000, 1536, "tma_m8_r64_b1_s7_c2_d6"},  // rule S since session 42
      {4, 3072, 12288, "tma_m8_r32_b2_s4_x2"},
      {16, 3072, 12288, "tma_m16_r32_b2_s4_x2"},  {4, 2560, 10240, "tma_m8_r32_b2_s4_x4"},
      {4, 2816, 4096, "tma_m8_r32_b2_s4_x4"},
      {1, 1280, 2048, "tma_m8_r64_b2_s3_x8"},     {16, 1280, 2048, "tma_m16_r64_b2_s3_x8"},
      {1, 128, 2048, "tma_m8_r64_b2_s4_x8"},     {4, 1000, 16384, "tma_m8_r64_b2_s4_x8"},
      // The boundaries: 33 stages over a cluster of 8 (more than 4 each) keep 4; 180 CTAs of a 32-row cluster of
      // four (2.73 per SM) stay in fours, 184 (2.79) go to twos.
      {1, 1280, 4160, "tma_m8_r64_b2_s4_x8"},     {4, 2880, 12288, "tma_m8_r32_b2_s4_x4"},
      {4, 2944, 12288, "tma_m8_r32_b2_s4_x2"},
      // Set ten: 252 CTAs of a cluster of four with 2 stages each fill the slots; clusters of two with all 4 stages
      // in the ring instead (4000 x 1000). 64 CTAs of 2 stages (1000 x 1024) and 264 of 7 (2112 x 7168) stay.
      {1, 4000, 1000, "tma_m8_r64_b2_s4_x2"},     {16, 4000, 1000, "tma_m16_r64_b2_s4_x2"},
      {1, 1000, 1024, "tma_m8_r64_b2_s4_x4"},     {1, 2112, 7168, "tma_m8_r64_b2_s3_x8"},
  });
  Config pick;
  std::string why;
  for (int64_t m : {1, 5, 16}) {
    EXPECT_EQ(tma::first_cut_config(Problem{m, 60, 16384, DType::BF16}, h200.sms).cluster, 8) << "m=" << m;
    EXPECT_FALSE(tma::structural_pick(Problem{m, 60, 16384, DType::BF16}, h200, &pick, &why))
        << "m=" << m << ": " << why;
    EXPECT_NE(pick_on(h200, m, 60, 16384).config.family, Family::Tma) << "m=" << m;
  }
}

// Session 17's three rules from held-out set eleven's first run (e2c09d8, blind; docs/tuning.md "Session 17"), each
// with the neighbour it must leave alone:
//  - K = 2048 is short K (no cluster fits): 13000 x 2048 (204 tiles of 64, three quarters of the slots) one CTA per
//    64-row tile (13.9-14.4 us against stream-K's 16.0-16.9), 11111 x 2048 (174) in 32-row tiles (12.1 against 14.1);
//  - clusters of at most 2 stages per CTA halve past 1.25 CTAs per SM: 3072 x 1024 (192 CTAs in fours) to twos, 1536 x
//    2048 (192 in eights) to fours; 1280 x 2048 (160 in eights: 2.94 us against 3.24 in fours) keeps its eights;
//  - 128 MiB or more with row tiles for 0.9-1.0 of the slots: one CTA per 64-row tile (16384 x 4096, 16384 x 6144);
//    more tiles than slots keep stream-K (17408 x 5120: 45.3 us against 52.7), lm_head 20480 x 7168 among them.
TEST(StructuralPick, SetElevenRulesAndTheNeighboursTheyLeave) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 13000, 2048, "tma_m8_r64_b2_s4_c2_d6"}, {16, 13000, 2048, "tma_m16_r64_b2_s4_c2_d6"},
      {1, 11111, 2048, "tma_m8_r32_b2_s4_c2_d6"},
      {1, 3072, 1024, "tma_m8_r64_b2_s4_x2"},     {4, 3072, 1024, "tma_m8_r64_b2_s4_x2"},
      {1, 1536, 2048, "tma_m8_r64_b2_s4_x4"},     {1, 1280, 2048, "tma_m8_r64_b2_s3_x8"},
      {1, 16384, 4096, "tma_m8_r64_b2_s4_c2_d6"}, {16, 16384, 6144, "tma_m16_r64_b2_s4_c2_d6"},
      {1, 17408, 5120, "tma_m8_r64_b2_s4_c2_u1"}, {1, 20480, 7168, "tma_m8_r64_b2_s4_c2_u1"},
      // From set twelve (c942f9d): with no cluster, K up to 3072 as K up to 2048: 32-row tiles (11520 x 3072, 9728 x
      // 2560), 64-row where they fill 3/4 of the slots and no more (12800 x 2560); K = 3200 kept stream-K until rule E
      // (session 35) gave its 360 tiles of 32 one CTA each.
      {1, 11520, 3072, "tma_m8_r32_b2_s4_c2_d6"}, {16, 9728, 2560, "tma_m16_r32_b2_s4_c2_d6"},
      {1, 12800, 2560, "tma_m8_r64_b2_s4_c2_d6"}, {1, 11520, 3200, "tma_m8_r32_b2_s4_c2_d6"},
  });
}

// Session 17's step trial (c942f9d, docs/kernels.md "Session 17"): the 64-row lead split whose parts have 8 or more
// stages each runs a 5-stage ring (6288 x 7168, 4480 x 7168 and 7168 x 3584 took 52-116 us off the fused step at M =
// 1 / 8 / 16); one-part tiles (7168 x 768, whose 5-stage ring lost in the step in session 12) and the 32-row lead split
// keep theirs. Since session 46 halves on at most slots - SMs / 4 CTAs take 5 stages too: o_proj 7168 x 1536 (parts of
// 9 and 3 stages; the fused step's search had stored 5 stages there at M = 1, 2 and 16), not 8192 x 1376 (256 CTAs).
TEST(StructuralPick, TheLeadSplitOfLongPartsRunsAFiveStageRing) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 6288, 7168, "tma_m8_r64_b2_s5_c2_d6"},  {16, 6288, 7168, "tma_m16_r64_b2_s5_c2_d6"},
      {8, 4480, 7168, "tma_m8_r64_b2_s5_c2_d6"},  {1, 7168, 3584, "tma_m8_r64_b2_s5_c2_d6"},
      {1, 6400, 4096, "tma_m8_r64_b2_s5_c2_d6"},  {1, 7168, 1536, "tma_m8_r64_b2_s5_c2_d6"},
      {1, 7168, 768, "tma_m8_r64_b2_s4_c2_d6"},   {1, 13000, 2048, "tma_m8_r64_b2_s4_c2_d6"},
      {8, 7001, 1528, "tma_m8_r64_b2_s5_c2_d6"},  {8, 8192, 1376, "tma_m8_r64_b2_s4_c2_d6"},
      // The line: 115 tiles of 64 (7360 rows, 230 CTAs) take 5 stages, 116 (7424, 232 CTAs) do not.
      {1, 7360, 1536, "tma_m8_r64_b2_s5_c2_d6"},  {1, 7424, 1536, "tma_m8_r64_b2_s4_c2_d6"},
      {1, 5128, 1024, "tma_m8_r32_b2_s6_c2_d6"},
  });
}

// Session 33, rule 1 (held-out set eighteen, heuristic-eighteenth-eeae1f9.json, the rule's own data): on 16 row
// tiles of 64 with K = 16384 (128 cluster CTAs of 16 stages, > 192 KiB each, fewer than the SMs) the cluster of 8 is
// the pick up to 32 tokens, where it beat the stream-K of before at every measured point (1002 x 16384: 11.96-12.34 us
// against 12.48-14.47 at M = 1-16, 13.56 / 13.94 against 18.70 / 19.36 at M = 24 / 32). The counter-examples: the
// 64-token tile keeps stream-K (its cluster not measured), and K = 12288 (192 KiB per CTA, outside the band) was a
// cluster of 8 before and is one still (1009 x 12288).
TEST(StructuralPick, NarrowLongKClustersOfEightUpTo32Tokens) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {3, 1002, 16384, "tma_m8_r64_b2_s4_x8"},   {8, 1002, 16384, "tma_m8_r64_b2_s4_x8"},
      {16, 1002, 16384, "tma_m16_r64_b2_s4_x8"}, {24, 1002, 16384, "tma_m32_r64_b2_s4_x8"},
      {32, 1002, 16384, "tma_m32_r64_b2_s4_x8"}, {5, 1000, 16384, "tma_m8_r64_b2_s4_x8"},
      // Counter-examples.
      {48, 1002, 16384, "tma_m64_r64_b2_s3_c1_u1"}, {64, 1002, 16384, "tma_m64_r64_b2_s3_c1_u1"},
      {4, 1009, 12288, "tma_m8_r64_b2_s4_x8"},
  });
  expect_rule_note(h200, "a cluster of 8 per tile, not stream-K", "not stream-K", {{16, 1002, 16384}},
                   {{48, 1002, 16384}, {4, 1009, 12288}});
}

// Session 34, rule A (held-out sets eighteen to twenty, each shape blind when measured): in rule 1's band, at M <= 2,
// stream-K at one CTA per SM instead of the cluster of 8 (1002 x 16384: 10.74 / 11.18 us at M = 1 / 2 against 11.96 /
// 12.15; 1024 x 16384 0.89 / 0.93x; 1000 x 15000 0.91 / 0.93x). The line: M = 3 keeps the cluster (the two split at
// M = 3-4, the cluster won from M = 5); outside the band the cluster stays at M = 1 (1009 x 12288: 192 KiB per CTA;
// 1500 x 16376: 24 row tiles, 192 CTAs, more than the SMs), and since session 35 below 15 row tiles (513 x 16384, 9
// tiles; 589 x 16120, 10 tiles, ran the cluster 13-22% faster) and at 8 (512 x 16384: stream-K would give each row tile
// more than 32 CTAs). The 64-token tile takes one CTA per SM too since session 35 (rule I).
TEST(StructuralPick, NarrowLongKStreamKAtOneCtaPerSmAtOneOrTwoTokens) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 1002, 16384, "tma_m8_r64_b2_s4_c1_u1"},  {2, 1002, 16384, "tma_m8_r64_b2_s4_c1_u1"},
      {1, 1024, 16384, "tma_m8_r64_b2_s4_c1_u1"},  {2, 1000, 15000, "tma_m8_r64_b2_s4_c1_u1"},
      {1, 513, 16384, "tma_m8_r64_b2_s4_x8"},
      // Counter-examples.
      {3, 1002, 16384, "tma_m8_r64_b2_s4_x8"},     {1, 1009, 12288, "tma_m8_r64_b2_s4_x8"},
      {1, 1500, 16376, "tma_m8_r64_b2_s4_x8"},     {1, 512, 16384, "tma_m8_r64_b2_s4_x8"},
      {64, 1002, 16384, "tma_m64_r64_b2_s3_c1_u1"},
  });
  expect_rule_note(h200, "stream-K at one CTA per SM, not a cluster of 8, at M <= 2", "one CTA per SM",
                   {{1, 1002, 16384}, {2, 1000, 15000}}, {{3, 1002, 16384}, {1, 1009, 12288}, {1, 1500, 16376}});
  // The reason names the grid: stream-K over 132 CTAs.
  EXPECT_THAT(pick_on(h200, 1, 1002, 16384).reason.str(), HasSubstr("16 row tiles of 64, stream-K over 132 CTAs"));
}

// Session 33, rule 2 (the rule's own data, all reports): clusters of four that fill the two-per-SM slots (over 231
// CTAs) with 10 or more stages per CTA are clusters of two on a 4-stage ring up to 32 tokens (4002 x 8192: 19.13-19.92
// us -> 17.73-18.73 at M <= 16, 26.79 / 27.79 -> 20.20 / 20.79 at M = 24 / 32; 4096 x 12288 0.88x; 3840 x 5120, 10
// stages, 0.97x). The counter-examples: 8 stages per CTA keep the fours' 3-stage ring (4000 x 4096: twos 1.05x the
// time), as do clusters of eight (2048 x 16384: fours 1.19x), the few-stage rings (2560 x 1024) and the 64-token tile.
// Since session 35 (rule F) the twos at M = 5-16 are on 32-row tiles with an 8-stage ring (4002 x 8192 and the others
// here; test NewRulesOfSessionThirtyFive), and since session 42 (rule T) those 32-row tiles are the lead split of lead
// 9 on the same ring instead of clusters of two.
TEST(StructuralPick, FilledClustersOfFourWithLongKHalve) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {5, 4002, 8192, "tma_m8_r32_b2_s8_c2_d9"},    {16, 4002, 8192, "tma_m16_r32_b2_s8_c2_d9"},
      {24, 4002, 8192, "tma_m32_r64_b2_s4_x2"},  {8, 4096, 12288, "tma_m8_r32_b2_s8_c2_d9"},
      {8, 3840, 5120, "tma_m8_r32_b2_s8_c2_d9"},
      // Counter-examples.
      {1, 4000, 4096, "tma_m8_r64_b2_s3_x4"},    {16, 3840, 2560, "tma_m16_r64_b2_s3_x4"},
      {1, 2048, 16384, "tma_m8_r64_b2_s3_x8"},   {4, 2560, 1024, "tma_m8_r64_b2_s3_x4"},
      {48, 4002, 8192, "tma_m64_r64_b1_s3_x4"},
  });
  expect_rule_note(h200, "clusters of two on a 4-stage ring", "clusters of two on", {{24, 4002, 8192}},
                   {{1, 4000, 4096}, {1, 4002, 8192}});
}

// Session 34, rule C (held-out sets nineteen and twenty, blind, and set fourteen outside the band): in rule 2's band,
// at M <= 4, the 64-row lead split on a 4-stage ring instead of clusters of two (4002 x 5120: 10.86-11.50 us against
// 12.52-12.68 at M = 1-4; 4096 x 10240 20.15-20.81 against 21.81-21.99); from M = 5 it was even and at 12-16 behind, so
// M = 5 keeps the twos (32-row ones since session 35). Outside the band (8 stages per CTA of four: 4000 x 4096;
// clusters of eight) nothing changes.
TEST(StructuralPick, FilledClustersOfFourWithLongKTakeTheLeadSplitUpToFourTokens) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 4002, 5120, "tma_m8_r64_b2_s4_c2_d6"},  {4, 4002, 5120, "tma_m8_r64_b2_s4_c2_d6"},
      {1, 4096, 10240, "tma_m8_r64_b2_s4_c2_d6"}, {3, 4002, 8192, "tma_m8_r64_b2_s4_c2_d6"},
      // Counter-examples.
      {5, 4002, 5120, "tma_m8_r32_b2_s8_c2_d9"},     {5, 4096, 10240, "tma_m8_r32_b2_s8_c2_d9"},
      {1, 4000, 4096, "tma_m8_r64_b2_s3_x4"},     {1, 2048, 16384, "tma_m8_r64_b2_s3_x8"},
  });
  expect_rule_note(h200, "the 64-row lead split at M <= 4, not clusters of two", "lead split at M <= 4",
                   {{1, 4002, 5120}, {4, 4096, 10240}}, {{5, 4002, 5120}, {1, 4000, 4096}});
  // Four parts per row tile: about as many CTAs as the clusters of four.
  EXPECT_THAT(pick_on(h200, 1, 4002, 5120).reason.str(),
              HasSubstr("63 row tiles of 64 x 4 lead-split parts = 252 CTAs"));
}

// Session 33, rule 4 (the rule's own data, all reports): where no cluster fits and K is at most 3072, 64-row tiles that
// give 1.5x the two-per-SM slots or more (396+ on H200, under 128 MiB) are one CTA per 64-row tile, not per 32-row tile
// (32768 x 1024: 18.87-20.35 us -> 16.71-17.71 at M = 1-16; 51866 x 1280 0.89-0.94x; 25600 x 2048, 400 tiles,
// 0.93-0.96x). The counter-examples keep their 32-row tiles: 9001 x 1024 (141); 21888 x 2048 (342 tiles of 64; the
// two-box 64-row split 1.04-1.06x) takes rule S's one-box 64-row tiles since session 42; from 128 MiB on stream-K as
// before (65536 x 1024). 24576 x 1536 (384) is rule K's since session 37 (one-box 64-row tiles,
// WideTilesForNearlyThreePerSmTakeOneBoxStagesAllResident).
TEST(StructuralPick, ManyWideShortKTilesTakeSixtyFourRows) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {3, 40000, 1536, "tma_m8_r64_b2_s4_c2_d6"},  {16, 40000, 1536, "tma_m16_r64_b2_s4_c2_d6"},
      {4, 51866, 1280, "tma_m8_r64_b2_s4_c2_d6"},  {8, 25600, 2048, "tma_m8_r64_b2_s4_c2_d6"},
      {12, 50257, 1024, "tma_m16_r64_b2_s4_c2_d6"},
      // Counter-examples.
      {3, 24576, 1536, "tma_m8_r64_b1_s7_c2_d6"},  {16, 21888, 2048, "tma_m16_r64_b1_s6_c2_d6"},  // rule S, session 42
      {8, 9001, 1024, "tma_m8_r32_b2_s4_c2_d6"},   {1, 65536, 1024, "tma_m8_r64_b2_s4_c2_u1"},
      // The line: 395 row tiles of 64 (25280 rows) keep 32-row tiles, 396 (25281 rows, the last tile one row) take 64
      // (at K = 512: from K = 576 rule K's one-box tiles take both since session 51).
      {1, 25280, 512, "tma_m8_r32_b2_s4_c2_d6"},   {3, 25281, 512, "tma_m8_r64_b2_s4_c2_d6"},
      {3, 25280, 1024, "tma_m8_r64_b1_s7_c2_d6"},
  });
  expect_rule_note(h200, "one CTA per 64-row tile, not 32-row", "not 32-row", {{3, 40000, 1536}},
                   {{1, 24576, 1536}});
}

// Session 48 (docs/tuning.md "Session 48"): in rule 4's band (and rule H's at 32 tokens), 128-row tiles of one box per
// stage where those fill their waves of two per SM to 85% or more with K <= 2048 under 128 MiB (58101 x 512: 0.78-0.90x
// the 64-row tile at M <= 16 on the H200; 33337 x 1024 0.94-0.97x; 32768 x 1024 0.94-0.96x), and otherwise one box per
// stage on a 5-stage ring where K <= 768 (50257 / 51865 x 768 and 49152 x 576: summed 0.93x the two-box tile on the
// H200, 0.96x on the H100).
TEST(StructuralPick, WideTilesInFullWavesOrShortKTakeOneBoxStages) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {3, 58101, 512, "tma_m8_r128_b1_s4_c2_d6"},   {16, 33337, 1024, "tma_m16_r128_b1_s4_c2_d6"},
      {1, 32768, 1024, "tma_m8_r128_b1_s4_c2_d6"},  {12, 65534, 1024, "tma_m16_r128_b1_s4_c2_d6"},
      {8, 32064, 2048, "tma_m8_r128_b1_s4_c2_d6"},  {24, 33337, 1000, "tma_m32_r128_b1_s4_c2_d6"},
      {3, 50257, 768, "tma_m8_r64_b1_s5_c2_d6"},    {16, 49152, 576, "tma_m16_r64_b1_s5_c2_d6"},
      {32, 51865, 768, "tma_m32_r64_b1_s5_c2_d6"},
      // The lines: 128-row tiles at 0.74 of two waves (50257 x 1024: 393 tiles of 128) or K over 2048 (30000 x 2112),
      // 128 MiB or more (131071 x 1024 at 32 tokens, rule H's band: 1024 tiles, four full waves) keep their picks; K over
      // 768 (832), under 512 (51865 x 384) or not a multiple of 64 (760), or 128 MiB or more, keeps two boxes per stage. 224 tiles of 128 (28672 rows, 0.848 of one wave) are under the
      // line, 225 (28801 rows) over it.
      {3, 50257, 1024, "tma_m8_r64_b2_s4_c2_d6"},   {3, 30000, 2112, "tma_m8_r64_b2_s4_c2_d6"},
      {24, 131071, 1024, "tma_m32_r64_b2_s4_c2_d6"}, {3, 50257, 832, "tma_m8_r64_b2_s4_c2_d6"},
      {3, 51865, 384, "tma_m8_r64_b2_s4_c2_d6"},    {24, 140001, 512, "tma_m32_r64_b2_s4_c2_d6"},  // K < 512; 128 MiB
      {3, 26003, 768, "tma_m8_r64_b2_s4_c2_d6"},    {3, 42177, 768, "tma_m8_r64_b1_s5_c2_d6"},     // 407 / 660 tiles
      {3, 42176, 768, "tma_m8_r64_b2_s4_c2_d6"},    // 659 tiles: under 5 per SM
      {3, 50257, 760, "tma_m8_r64_b2_s4_c2_d6"},    {3, 28672, 1024, "tma_m8_r64_b2_s4_c2_d6"},
      {1, 28801, 1024, "tma_m8_r128_b1_s4_c2_d6"},
  });
  expect_rule_note(h200, "one CTA per 128-row tile of one box per stage", "128-row tile", {{3, 58101, 512}},
                   {{1, 50257, 1024}});
  expect_rule_note(h200, "on a 5-stage ring, where those tiles give 1.5x the slots or more with K 512-768", "5-stage ring",
                   {{3, 50257, 768}}, {{3, 50257, 832}});
  // ... and at M <= 2 stream-K unless the 128-row tiles fill their waves with K over 768 (40000 x 1096 at M = 1: 24.57
  // us against 26.92 for one CTA per 64-row tile on the H200, heuristic-twentieth-e5e10d2.json; 58101 x 512, full
  // waves but K = 512: the 128-row tiles 1.07-1.11x stream-K on both GPUs).
  expect_structural_picks(h200, {{1, 50257, 768, "tma_m8_r64_b2_s4_c2_u1"}, {2, 40000, 1536, "tma_m8_r64_b2_s4_c2_u1"},
                                 {2, 58101, 512, "tma_m8_r64_b2_s4_c2_u1"}, {3, 50257, 1024, "tma_m8_r64_b2_s4_c2_d6"},
                                 {1, 33337, 1024, "tma_m8_r128_b1_s4_c2_d6"}, {2, 32768, 832, "tma_m8_r128_b1_s4_c2_d6"},
                                 {2, 32768, 768, "tma_m8_r64_b2_s4_c2_u1"}});
  expect_rule_note(h200, "stream-K at M <= 2 where the 64-row tiles give 1.5x the slots or more", "stream-K at M <= 2",
                   {{1, 50257, 768}}, {{3, 50257, 768}, {1, 33337, 1024}});
}

// Session 48: where the 64-row lead split is one part per tile (K of at most 6 stages of 128) and 32-row tiles number
// at most the SMs, 32-row tiles on an 8-stage ring (4096 x 768 / 688 at M = 1-16: 0.72-0.79x on the H100, sets thirty
// and twenty-nine). 4224 rows (132 tiles of 32) in, 4225 out; 7168 x 768 (224 tiles of 32) keeps the 64-row split.
TEST(StructuralPick, OnePartSixtyFourRowTilesOnHalfTheSmsTakeThirtyTwoRows) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 4096, 768, "tma_m8_r32_b2_s8_c2_d6"},   {16, 4096, 768, "tma_m16_r32_b2_s8_c2_d6"},
      {4, 4224, 640, "tma_m8_r32_b2_s8_c2_d6"},   {4, 4225, 640, "tma_m8_r64_b2_s4_c2_d6"},
      {8, 7168, 768, "tma_m8_r64_b2_s4_c2_d6"},   {4, 4096, 400, "tma_m8_r64_b2_s4_c2_d6"},  // K under 512 (set 32)
      {4, 4096, 512, "tma_m8_r32_b2_s8_c2_d6"},   {4, 4096, 448, "tma_m8_r64_b2_s4_c2_d6"},  // the K = 512 edge
  });
  expect_rule_note(h200, "where 64-row tiles would leave half the SMs idle", "half the SMs idle", {{1, 4096, 768}},
                   {{1, 7168, 768}});
}

// Session 34, rule D (set thirteen's 4096 x 1376, then set twenty's two shapes blind): clusters of four that fill the
// two-per-SM slots (over 231 CTAs) with at most 2.75 stages per CTA (11 stages per tile) halve to twos on a 4-stage
// ring at M <= 16, as those of at most 2 stages did since session 16 (3840 x 1280: 4.21-4.70 us against 4.54-5.07 at
// M = 1-12; 4096 x 1408 0.91-0.95x; 4096 x 1376 0.89-0.97x). The lines: 12 stages per tile (4096 x 1472) and more
// (4096 x 1600: twos 1.01-1.05x; 3840 x 1920: 1.10-1.17x) keep the fours, as do 228 CTAs (3648 x 1408) where 232
// (3712 x 1408) halve, and 224 (3584 x 1792).
TEST(StructuralPick, FilledClustersOfFourWithFewStagesHalveOnAFourStageRing) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 3840, 1280, "tma_m8_r64_b2_s4_x2"},    {12, 3840, 1280, "tma_m16_r64_b2_s4_x2"},
      {4, 4096, 1408, "tma_m8_r64_b2_s4_x2"},    {16, 4096, 1376, "tma_m16_r64_b2_s4_x2"},
      {1, 3712, 1408, "tma_m8_r64_b2_s4_x2"},
      // Counter-examples.
      {1, 4096, 1472, "tma_m8_r64_b2_s3_x4"},    {1, 4096, 1600, "tma_m8_r64_b2_s3_x4"},
      {16, 3840, 1920, "tma_m16_r64_b2_s3_x4"},  {1, 3648, 1408, "tma_m8_r64_b2_s3_x4"},
      {1, 3584, 1792, "tma_m8_r64_b2_s3_x4"},
  });
  expect_rule_note(h200, "clusters of two on a 4-stage ring, not of four on 3, where fours fill the slots with at most",
                   "at most 2.75", {{1, 3840, 1280}, {8, 4096, 1408}},
                   {{1, 4096, 1472}, {1, 3648, 1408}, {1, 4000, 1000}});
  // The clusters of session 16's halving (at most 2 stages per CTA) carry no note, as before.
  EXPECT_EQ(pick_on(h200, 1, 4000, 1000).config.name(), "tma_m8_r64_b2_s4_x2");
}

// Session 37, rule J (sets thirteen, fourteen and eighteen): clusters of eight with at most 3 stages per CTA on more
// than 1.25 CTAs per SM (over 165 on H200) halve to fours on a 4-stage ring at M <= 16 (1920 x 2560: 3.86-4.34 us
// against 4.75-5.25; 1514 x 3072 0.91-0.99x, 2048 x 3072 0.93-0.95x). The lines: 160 CTAs (1280 x 3072, fours 7-30%
// slower) and 144 (1152 x 3072) keep the eights, as do 25 stages per tile (2048 x 3200), 4 stages per CTA (2048 x 4096,
// fours 1.03-1.09x) and the 32-token tile (on rows that are not 16-byte aligned, where the first cut is the pick above
// M = 16). Session 41, rule N (set twenty-three): the line moves to 1.4 CTAs per SM (over 184 on H200): 1350 x 3000
// (176 CTAs) ran the eights 1.22-1.29x faster than the fours at M = 1-16 (3.61-4.12 us against 4.45-5.25). 184 CTAs
// (1472 x 3072) keep the eights, 192 (1473 x 3072) halve; at most 2 stages per CTA (1344 x 2048, 168 CTAs) still halve
// at 1.25.
TEST(StructuralPick, FewStageClustersOfEightOnMostSmsHalveOnAFourStageRing) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 1920, 2560, "tma_m8_r64_b2_s4_x4"},    {16, 2048, 3072, "tma_m16_r64_b2_s4_x4"},
      {5, 1514, 3072, "tma_m8_r64_b2_s4_x4"},    {1, 1473, 3072, "tma_m8_r64_b2_s4_x4"},
      {1, 1344, 2048, "tma_m8_r64_b2_s4_x4"},
      // Counter-examples.
      {1, 1280, 3072, "tma_m8_r64_b2_s3_x8"},    {16, 1152, 3072, "tma_m16_r64_b2_s3_x8"},
      {1, 2048, 4096, "tma_m8_r64_b2_s3_x8"},    {8, 2112, 7168, "tma_m8_r64_b2_s3_x8"},
      {1, 2048, 3200, "tma_m8_r64_b2_s3_x8"},    {1, 1344, 3072, "tma_m8_r64_b2_s3_x8"},
      {1, 1350, 3000, "tma_m8_r64_b2_s3_x8"},    {16, 1350, 3000, "tma_m16_r64_b2_s3_x8"},
      {1, 1472, 3072, "tma_m8_r64_b2_s3_x8"},
  });
  expect_rule_note(h200, "clusters of four on a 4-stage ring, not of eight on 3, where eights of at most 3 stages",
                   "not of eight on 3", {{1, 1920, 2560}, {12, 2048, 3072}, {16, 2047, 3072}},
                   {{1, 1280, 3072}, {1, 2048, 4096}, {24, 2047, 3072}, {1, 1350, 3000}});
  EXPECT_EQ(pick_on(h200, 24, 2047, 3072).config.family, Family::Tma) << "the first cut must be the pick here";
  // At most 2 stages per CTA: session 16's halving, without a note.
  EXPECT_THAT(pick_on(h200, 1, 2048, 2048).reason.str(), ::testing::Not(HasSubstr("not of eight on 3")));
}

// Session 37, rule K (sets fifteen to twenty-one): 64-row tiles numbering 2.7-3 per SM (357-396 on H200) with K of
// 1536-10240, a multiple of 64, take one CTA per tile of one box per stage on a 4-stage ring at M <= 16, the whole grid
// resident at three per SM (24000 x 3072: 35.40-36.12 us against stream-K's 37.76-38.89; 24576 x 1536 18.59-19.48
// against 32-row tiles' 19.69-21.19). The lines: 357 tiles (22848 rows) take it and 356 (22784) do not, 396 (25344
// rows) take it and 397 do not (25600 x 5120, 400 tiles, lost 15-22% with it); K of 12288 or 4000 keeps the others,
// and the 64-token tile is not its (the 32-token tile is since session 41, rule Q). Session 46: K from 1024 (22789 x
// 1408 and 22787 x 1216 at 357 tiles: 0.81-0.96x on both GPUs), so 1024 and 1472 take it too. Session 47: from K = 960
// (24001 x 960, 376 tiles: 0.92-0.95x at M = 1-16 on the H100, set twenty-seven), then 832 (24331 x 896, set
// twenty-nine: 0.92-0.97x). Session 48: 768 (24707 / 25136 x 768, set thirty: 0.90-0.97x), then 704 (24571 x 704, set
// thirty-two: 0.87-0.90x), session 49: 640 (19197 x 640, set thirty-three: 0.90-0.93x), session 51: 576 (20999 x
// 576, set thirty-four: 0.85-0.90x).
TEST(StructuralPick, WideTilesForNearlyThreePerSmTakeOneBoxStagesAllResident) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 24576, 4096, "tma_m8_r64_b1_s7_c2_d6"},   {16, 25256, 5120, "tma_m16_r64_b1_s6_c2_d6"},
      {8, 24576, 1536, "tma_m8_r64_b1_s7_c2_d6"},   {1, 25344, 4096, "tma_m8_r64_b1_s7_c2_d6"},
      {1, 23680, 8192, "tma_m8_r64_b1_s7_c2_d6"},
      {1, 22848, 4096, "tma_m8_r64_b1_s7_c2_d6"},   {1, 24576, 10240, "tma_m8_r64_b1_s7_c2_d6"},
      {1, 24576, 1024, "tma_m8_r64_b1_s7_c2_d6"},   {8, 22789, 1408, "tma_m8_r64_b1_s7_c2_d6"},
      {16, 22787, 1216, "tma_m16_r64_b1_s6_c2_d6"},
      // Counter-examples.
      {1, 25408, 4096, "tma_m8_r64_b2_s4_c2_u1"},   {16, 22528, 8192, "tma_m16_r64_b2_s4_c2_u1"},
      {1, 22784, 4096, "tma_m8_r64_b2_s4_c2_u1"},   {1, 24576, 512, "tma_m8_r32_b2_s4_c2_d6"},
      {1, 24576, 576, "tma_m8_r64_b1_s7_c2_d6"},    {1, 24576, 640, "tma_m8_r64_b1_s7_c2_d6"},
      {1, 24576, 12288, "tma_m8_r64_b2_s4_c2_u1"},
      {1, 24576, 4000, "tma_m8_r64_b2_s4_c2_u1"},
  });
  expect_rule_note(h200, "one CTA per 64-row tile of one box per stage, all resident at three per SM", "all resident",
                   {{1, 24000, 3072}, {12, 25008, 3072}, {16, 24577, 4096}, {24, 24577, 4096}},
                   {{1, 25600, 5120}, {1, 22528, 8192}, {48, 24577, 4096}});
  EXPECT_EQ(pick_on(h200, 24, 24577, 4096).config.family, Family::Tma) << "the first cut must be the pick here";
}

// Session 41, rule Q (sets twenty-two and twenty-three): rule K at the 32-token tile too, on y rows that are not
// 16-byte aligned (22790 x 2560 at M = 24 / 32: 29.69 / 30.18 us against stream-K's 33.06 / 33.63; 25247 x 2048
// 0.84-0.86x). The line: K % 64 != 0 (24003 x 4040) keeps stream-K. (356 tiles, 22781 x 2560, and the 64-token tile
// kept it too until session 46's rules W and V: below.)
TEST(StructuralPick, WideTilesForNearlyThreePerSmTakeOneBoxStagesAtThirtyTwoTokens) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {24, 22790, 2560, "tma_m32_r64_b1_s5_c2_d6"},  {32, 22790, 2560, "tma_m32_r64_b1_s5_c2_d6"},
      {32, 25247, 2048, "tma_m32_r64_b1_s5_c2_d6"},
      // Counter-example.
      {24, 24003, 4040, "tma_m32_r64_b2_s4_c2_u1"},
  });
}

// Session 34, rule B (held-out sets ten, twelve, nineteen and twenty): K not a multiple of 64 on 16-byte aligned y
// rows, where the first cut splits K without a cluster, is cuBLASLt's default at M >= 9 and, where more 64-row tiles
// than SMs leave no cluster, from M = 2 (12000 x 2056: first cut 16.54-23.55 us at M = 2-16, cuBLASLt 15.51-15.85;
// 40000 x 1096 28.17-30.86 against 25.39-28.61; 5120 x 1712 at M = 12 / 16 8.38 / 8.30 against 7.27). The lines: M = 1
// keeps the first cut (12000 x 2056: 13.94 against 15.71), the lead split with parts keeps it to M = 8 (5128 x 3000:
// 4-19% ahead of cuBLASLt there), 132 row tiles of 64 (8448 x 2056) are not past the SMs and 133 (8456 x 2056) are;
// clusters (2048 x 2736, 1000 x 15000), K % 64 == 0 (12000 x 2048) and misaligned y rows (12345 x 2056, where cuBLASLt
// ran 2-3x slower) keep the family, as does rule A's stream-K at M = 2 (1000 x 15000).
TEST(StructuralPick, KNotAMultipleOf64WithoutAClusterTakesCublasLt) {
  const DeviceInfo h200 = tune::device_preset("h200");
  const std::vector<Shape3> lt_points = {{2, 12000, 2056}, {16, 12000, 2056}, {2, 40000, 1096}, {12, 40000, 1096},
                                         {2, 70000, 2000}, {9, 5120, 1712},   {16, 5128, 3000}, {9, 8448, 2056},
                                         {2, 8456, 2056}};
  for (const Shape3& s : lt_points) {
    const Choice c = pick_on(h200, s.m, s.n, s.k);
    EXPECT_EQ(c.config.name(), "cublaslt_unsplit") << s.n << "x" << s.k << " m=" << s.m << ": " << c.reason.str();
    EXPECT_EQ(c.source, Source::Heuristic);
    EXPECT_THAT(c.reason.str(), HasSubstr("is not a multiple of 64"));
    // The first cut is still the family's (a forced "tma" runs it): the rule is the pick's, not the cut's.
    EXPECT_EQ(tma::first_cut_config(Problem{s.m, s.n, s.k, DType::BF16}, h200.sms).family, Family::Tma);
  }
  EXPECT_THAT(pick_on(h200, 2, 12000, 2056).reason.str(),
              HasSubstr("not the tma first cut tma_m8_r64_b2_s4_c2_u1 (188 row tiles of 64, stream-K)"));
  expect_structural_picks(h200, {
      {1, 12000, 2056, "tma_m8_r32_b2_s4_c2_d6"},  {1, 40000, 1096, "tma_m8_r64_b2_s4_c2_u1"},  // stream-K: session 48
      {8, 5120, 1712, "tma_m8_r64_b2_s4_c2_d6"},   {8, 5128, 3000, "tma_m8_r64_b2_s5_c2_d6"},
      {8, 8448, 2056, "tma_m8_r64_b2_s5_c2_d6"},   {16, 2048, 2736, "tma_m16_r64_b2_s4_x4"},
      {16, 1000, 15000, "tma_m16_r64_b2_s4_x8"},   {2, 1000, 15000, "tma_m8_r64_b2_s4_c1_u1"},
      {16, 12000, 2048, "tma_m16_r32_b2_s4_c2_d6"}, {4, 12345, 2056, "tma_m8_r64_b2_s4_c2_u1"},
      {16, 12345, 2056, "tma_m16_r64_b2_s4_c2_u1"},
  });
  // K <= 1024 was never measured under the rule (its shapes have K >= 1096): small and short-K shapes keep the family.
  for (const Shape3& s : std::vector<Shape3>{{12, 1536, 40}, {2, 12000, 1000}, {16, 7000, 1000}, {9, 40000, 1016}})
    EXPECT_THAT(pick_on(h200, s.m, s.n, s.k).reason.str(), ::testing::Not(HasSubstr("is not a multiple of 64")))
        << s.n << "x" << s.k << " m=" << s.m;
  // The scored heuristic alone and heuristic_kernel never return the rule's cuBLASLt: the first skips the structural
  // rules, the second wants a kernel.
  const Problem q{12, 12000, 2056, DType::BF16};
  Choice scored, kernel;
  ASSERT_TRUE(scored_heuristic_choice_among(q, h200, [&](const Config& x) { return fits_shape(x, q, h200); }, &scored));
  EXPECT_THAT(scored.reason.str(), ::testing::Not(HasSubstr("is not a multiple of 64"))) << scored.config.name();
  if (heuristic_kernel(q, h200, 16, &kernel)) {  // a build with kernel instances
    EXPECT_TRUE(family(kernel.config.family).kernel) << kernel.config.name();
  }
}

// Session 41, rule O (sets twelve and twenty-three): K over 1024 and not a multiple of 64 at M >= 2 takes stream-K, not
// one CTA per 32-row tile, both under rule E (11003 x 3080, 344 tiles of 32: stream-K 0.79-0.84x at M = 2-16) and with
// medium K (12345 x 2056: 0.87-0.96x at M = 2 and 4-16). The lines: M = 1 keeps the 32-row tiles (12345 x 2056:
// stream-K 1.09x), as do K a multiple of 64 (11001 x 4096 under rule E, 12000 x 2048) and K <= 1024 (12345 x 1000,
// unmeasured). On y rows that are 16-byte aligned rule B's cuBLASLt still takes M >= 2 (11520 x 4104).
TEST(StructuralPick, KNotAMultipleOf64AtTwoTokensOrMoreLeavesThirtyTwoRowTilesForStreamK) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {2, 11003, 3080, "tma_m8_r64_b2_s4_c2_u1"},   {16, 11003, 3080, "tma_m16_r64_b2_s4_c2_u1"},
      {3, 12345, 2056, "tma_m8_r64_b2_s4_c2_u1"},   {4, 11001, 4104, "tma_m8_r64_b2_s4_c2_u1"},
      // Counter-examples.
      {1, 11003, 3080, "tma_m8_r32_b2_s4_c2_d6"},   {1, 12345, 2056, "tma_m8_r32_b2_s4_c2_d6"},
      {4, 11001, 4096, "tma_m8_r32_b2_s4_c2_d6"},   {1, 12345, 1000, "tma_m8_r32_b2_s4_c2_d6"},
      // K <= 1024 not a multiple of 64 at M >= 2: the 64-row lead split on a 5-stage ring (session 49: 7168 x 304 and
      // 10240 x 1016 0.69-0.99x the 32-row tiles on the H100, set thirty-three); aligned K keeps the 32-row tiles.
      {4, 12345, 1000, "tma_m8_r64_b2_s5_c2_d6"},   {16, 7168, 304, "tma_m16_r64_b2_s5_c2_d6"},
      {2, 12345, 1000, "tma_m8_r64_b2_s5_c2_d6"},   // the M >= 2 line (M = 1 above keeps the 32-row tiles)
      {4, 12345, 1024, "tma_m8_r32_b2_s4_c2_d6"},
  });
  EXPECT_EQ(pick_on(h200, 4, 11520, 4104).config.name(), "cublaslt_unsplit");
}

// Session 41, rule P (sets nineteen to twenty-three): clusters of two at token tiles 32 and 64 keep the 4-stage ring on
// more CTAs than slots - SMs / 4 (7551 x 4104, 236 CTAs, at M = 48 / 64: 30.49 / 34.63 us against 41.19 / 47.52 with
// 3 stages). The lines: rules G and M take one CTA per tile first (7543 x 3968), clusters of four (4002 x 5120) and
// eight (1850 x 1280) keep 3 stages at 64 tokens, and at M <= 16 the twos are the lead split's.
TEST(StructuralPick, ClustersOfTwoAtThirtyTwoToSixtyFourTokensKeepTheFourStageRing) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {48, 7551, 4104, "tma_m64_r64_b1_s4_x2"},   {64, 7551, 4104, "tma_m64_r64_b1_s4_x2"},
      {24, 7551, 4104, "tma_m32_r64_b2_s4_x2"},   {48, 7521, 4608, "tma_m64_r64_b1_s4_x2"},
      // Counter-examples.
      {48, 7543, 3968, "tma_m64_r64_b2_s3_x1"},   {48, 4002, 5120, "tma_m64_r64_b1_s3_x4"},
      {48, 1850, 1280, "tma_m64_r64_b1_s3_x8"},   {8, 7551, 4104, "tma_m8_r64_b2_s5_c2_d6"},
  });
}

// Session 38, rule L (held-out sets eight to twenty-two): the 64-row lead split in three parts per tile with K <= 3456,
// a multiple of 64, at the 16-token tile is cuBLASLt's default (4320 x 3200 at M = 12 / 16: 10.52 / 10.72 us against
// 9.54 / 9.44; 5120 x 1728 8.37 against 7.16-7.22). The lines: M = 8 keeps the split (the 8-token tile), two parts
// per tile keep it (5760 x 2880: 90 tiles, 1.07x cuBLASLt's time in the split's favour), K over 3456 keeps it (5504 x
// 4096, 4544 x 4544: 1.03-1.10x for the split), K under 1536 (never seen) keeps it, K % 64 != 0 is rule B's (its
// reason), misaligned y rows keep it.
TEST(StructuralPick, ThreePartLeadSplitsOfShortKAtSixteenTokensTakeCublasLt) {
  const DeviceInfo h200 = tune::device_preset("h200");
  for (const Shape3& s : std::vector<Shape3>{{12, 4320, 3200}, {16, 4320, 3200}, {9, 5120, 1728}, {16, 5120, 3456},
                                             {13, 4864, 2560}, {16, 5504, 2048}, {16, 4608, 3072}}) {
    const Choice c = pick_on(h200, s.m, s.n, s.k);
    EXPECT_EQ(c.config.name(), "cublaslt_unsplit") << s.n << "x" << s.k << " m=" << s.m << ": " << c.reason.str();
    EXPECT_EQ(c.source, Source::Heuristic);
    EXPECT_THAT(c.reason.str(), HasSubstr("x 3 lead-split parts with K = " + std::to_string(s.k) + " <= 3456"));
    EXPECT_EQ(tma::first_cut_config(Problem{s.m, s.n, s.k, DType::BF16}, h200.sms).lead, 6);
  }
  expect_structural_picks(h200, {
      {8, 4320, 3200, "tma_m8_r64_b2_s5_c2_d6"},    {8, 5120, 1728, "tma_m8_r64_b2_s4_c2_d6"},
      {16, 5760, 2880, "tma_m16_r64_b2_s5_c2_d6"},  {16, 6144, 2048, "tma_m16_r64_b2_s5_c2_d6"},
      {16, 5504, 4096, "tma_m16_r64_b2_s5_c2_d6"},  {16, 4544, 4544, "tma_m16_r64_b2_s5_c2_d6"},
      // The band's K edges with three parts per tile: 3520 past 3456, 1472 short of the shortest K seen (1536).
      {16, 5120, 3520, "tma_m16_r64_b2_s5_c2_d6"},  {16, 5120, 1472, "tma_m16_r64_b2_s4_c2_d6"},
  });
  EXPECT_EQ(pick_on(h200, 16, 5120, 1536).config.name(), "cublaslt_unsplit");
  EXPECT_THAT(pick_on(h200, 16, 5120, 1712).reason.str(), HasSubstr("is not a multiple of 64"));
  // 4321 rows: y's rows of 8642 bytes are not 16-byte aligned, where cuBLASLt runs several times slower.
  EXPECT_THAT(pick_on(h200, 16, 4321, 3200).config.name(), HasSubstr("tma_m16_r64_b2_s5_c2_d6"));
}

// Session 39, rule M (held-out set twenty-two, y's rows misaligned, where the first cut is the pick up to M = 64):
// clusters of two or four that fill the two-per-SM slots (over 231 CTAs on H200) with K <= 4096 take one CTA per tile
// at 32-64 tokens (3900 x 1344 at M = 24 / 64: 6.57 / 8.83 us against 8.08 / 10.68 in fours; 7543 x 3968 at M = 64:
// 21.13 against 29.14 in twos). The lines: fewer CTAs (6300 x 4096: 198 in twos; 3586 x 1344: 228 in fours), K over
// 4096 (4002 x 5120 at M = 48, 7543 x 4160), clusters of eight (1850 x 1280) and M <= 16 keep the cluster. Session 48:
// fours of more than 4 stages of 128 per CTA on at most 248 CTAs keep the cluster (3711 x 4088, 232 CTAs of 8: x1
// 1.40-1.43x the fours at M = 24-32 on the H100, set thirty); past 248 x1 stays (4003 x 4096, 252 CTAs).
TEST(StructuralPick, FilledClustersOfTwoOrFourWithKUpTo4096AtThirtyTwoToSixtyFourTokensTakeOneCtaPerTile) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {24, 3900, 1344, "tma_m32_r64_b2_s4_x1"},   {32, 3900, 1344, "tma_m32_r64_b2_s4_x1"},
      {48, 3900, 1344, "tma_m64_r64_b2_s3_x1"},   {64, 3900, 1344, "tma_m64_r64_b2_s3_x1"},
      {24, 7543, 3968, "tma_m32_r64_b2_s4_x1"},   {64, 7543, 3968, "tma_m64_r64_b2_s3_x1"},
      {48, 7543, 4096, "tma_m64_r64_b2_s3_x1"},   {24, 3650, 1344, "tma_m32_r64_b2_s4_x1"},
      // The lines: 228 CTAs, 198 CTAs, K over 4096, clusters of eight, the 16-token tile.
      {24, 3586, 1344, "tma_m32_r64_b2_s4_x4"},   {24, 6300, 4096, "tma_m32_r64_b2_s4_x2"},
      {48, 4002, 5120, "tma_m64_r64_b1_s3_x4"},   {24, 7543, 4160, "tma_m32_r64_b2_s4_x2"},  // ring: rule P
      {48, 7543, 4160, "tma_m64_r64_b1_s4_x2"},   {24, 1850, 1280, "tma_m32_r64_b1_s4_x8"},
      {16, 3900, 1344, "tma_m16_r64_b2_s4_x2"},
      {24, 3711, 4088, "tma_m32_r64_b2_s3_x4"},   {48, 3711, 4088, "tma_m64_r64_b1_s3_x4"},  // session 48
      {24, 4003, 4096, "tma_m32_r64_b2_s4_x1"},   {24, 3711, 2048, "tma_m32_r64_b2_s4_x1"},  // 252 CTAs; 4 stages
  });
  expect_rule_note(h200, "not clusters of two or four that fill the slots, with K <= 4096", "(session 39)",
                   {{24, 3900, 1344}, {64, 7543, 3968}}, {{48, 4002, 5120}, {24, 6300, 4096}, {16, 3900, 1344}});
  // Aligned y rows above 16 tokens stay the scored heuristic's (the first cut of 3840 x 1280 changes, not the pick).
  EXPECT_THAT(pick_on(h200, 24, 3840, 1280).reason.str(), ::testing::Not(HasSubstr("tma structural pick")));
}

// Session 35, rules E-I and two ring sizes, fitted offline to the recorded held-out sets (docs/tuning.md "Session 35";
// each names its data in first_cut.cpp). Each fires on the shapes it was fitted on and leaves its counter-examples.
TEST(StructuralPick, NewRulesOfSessionThirtyFive) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      // E: no cluster fits, K > 3072, 32-row tiles for 2.6-3 CTAs per SM (344-396 on H200): one CTA per 32-row tile.
      {3, 12288, 5120, "tma_m8_r32_b2_s4_c2_d6"},  {16, 11568, 4096, "tma_m16_r32_b2_s4_c2_d6"},
      {1, 12288, 12288, "tma_m8_r32_b2_s4_c2_d6"}, {8, 12672, 5120, "tma_m8_r32_b2_s4_c2_d6"},
      // ... not past 3 per SM (12800: 400 tiles of 32), below 2.6 (10752 x 5376: 336), nor at K <= 3072.
      {8, 12800, 4096, "tma_m8_r64_b2_s4_c2_u1"},  {8, 10752, 5376, "tma_m8_r64_b2_s4_c2_u1"},
      // F: rule 2's band at M = 5-16, 32-row tiles with an 8-stage ring (clusters of two until session 42, the lead
      // split of lead 9 since: rule T); M <= 4 keeps rule C's lead split, the 32-token tile the 64-row twos.
      {5, 4096, 5504, "tma_m8_r32_b2_s8_c2_d9"},      {16, 3968, 14848, "tma_m16_r32_b2_s8_c2_d9"},
      {4, 4096, 5504, "tma_m8_r64_b2_s4_c2_d6"},   {24, 4002, 5120, "tma_m32_r64_b2_s4_x2"},
      // A 3-stage ring at the 8-token tile for clusters of CTAs between 7/8 of the SMs and the SMs with <= 4 stages
      // each (128 CTAs: 2048 x 1408 in fours, 1024 x 3072 in eights); M = 12-16 and 96 CTAs (768 x 4096) keep 4.
      {1, 2048, 1408, "tma_m8_r64_b2_s3_x4"},      {8, 1024, 3072, "tma_m8_r64_b2_s3_x8"},
      {12, 2048, 1408, "tma_m16_r64_b2_s4_x4"},    {1, 768, 4096, "tma_m8_r64_b2_s4_x8"},
      // Session 48: eights at the 16-token tile take 3 as well (1024 x 2304 and 1024 x 2816, 128 CTAs of 2.25 / 2.75
      // stages: 0.80-0.83x on the H100), not with more than 4 stages per CTA (1024 x 5120) nor fours (2048 x 1408 above).
      {16, 1024, 2304, "tma_m16_r64_b2_s3_x8"},    {12, 1024, 4096, "tma_m16_r64_b2_s3_x8"},
      {16, 1024, 5120, "tma_m16_r64_b2_s4_x8"},    {16, 896, 2304, "tma_m16_r64_b2_s4_x8"},   // 112 CTAs: under 7/8
      // The lead split's 5-stage ring where halves leave the others 4+ stages, thirds 6+ (6656 x 1664 / 2240, 5128 x
      // 3000); thirds of 4 keep 4 (5120 x 2176).
      {1, 6656, 1664, "tma_m8_r64_b2_s5_c2_d6"},   {8, 5128, 3000, "tma_m8_r64_b2_s5_c2_d6"},
      {1, 5120, 2176, "tma_m8_r64_b2_s4_c2_d6"},
  });
  // G, H and I on misaligned y rows (the first cut is the pick up to M = 64 there).
  expect_structural_picks(h200, {
      // G: 64-row tiles for 9/10 of the SMs at 32-64 tokens, one CTA per tile instead of clusters of two.
      {24, 8004, 5120, "tma_m32_r64_b2_s4_x1"},    {64, 8004, 4096, "tma_m64_r64_b2_s3_x1"},
      {48, 6300, 4096, "tma_m64_r64_b1_s4_x2"},
      // H: the 32-token tile on 64-row tiles for 1.5x the slots or more: one CTA per tile, not stream-K.
      {24, 49155, 1024, "tma_m32_r64_b2_s4_c2_d6"}, {32, 32002, 4096, "tma_m32_r64_b2_s4_c2_d6"},
      {32, 19998, 8192, "tma_m32_r64_b2_s4_c2_u1"}, {48, 51865, 1024, "tma_m64_r64_b2_s3_c2_u1"},
      // I: rule 1's band at the 64-token tile, stream-K at one CTA per SM.
      {48, 589, 16120, "tma_m64_r64_b2_s3_c1_u1"},
      // Rule A needs 15 row tiles or more since: 589 x 16120 (10) keeps the cluster at M <= 2.
      {1, 589, 16120, "tma_m8_r64_b2_s4_x8"},
  });
  // The boundaries: the 3-stage ring from 117 CTAs (29 tiles of 64 in fours: 116; 30: 120), rule A from 15 row tiles.
  expect_structural_picks(h200, {
      {1, 1856, 1280, "tma_m8_r64_b2_s4_x4"},      {1, 1920, 1280, "tma_m8_r64_b2_s3_x4"},
      {12, 1920, 1280, "tma_m16_r64_b2_s4_x4"},
      {1, 896, 16384, "tma_m8_r64_b2_s4_x8"},      {1, 960, 16384, "tma_m8_r64_b2_s4_c1_u1"},
  });
  // Each rule's note where it fires, none where it does not; K <= 3072 (11520 x 3072) gets the same one-CTA-per-tile
  // grid from the older short-K rule, not from rule E.
  expect_rule_note(h200, "one CTA per 32-row tile, not stream-K", "one CTA per 32-row tile",
                   {{3, 12288, 5120}}, {{8, 12800, 4096}, {8, 10752, 5376}, {8, 11520, 3072}});
  expect_rule_note(h200, "the lead split of 32-row tiles with an 8-stage ring", "8-stage ring",
                   {{5, 4096, 5504}, {16, 3968, 14848}}, {{4, 4096, 5504}, {24, 4002, 5120}});
  expect_rule_note(h200, "one CTA per 64-row tile, not clusters of two", "not clusters of two",
                   {{24, 8004, 5120}, {64, 8004, 4096}}, {{48, 6300, 4096}});
  expect_rule_note(h200, "one CTA per 64-row tile, not stream-K, at the 32-token tile", "at the 32-token tile",
                   {{24, 49155, 1024}}, {{32, 19998, 8192}, {48, 49155, 1024}});
  expect_rule_note(h200, "stream-K at one CTA per SM at the 64-token tile", "at the 64-token tile",
                   {{48, 589, 16120}, {64, 1002, 16384}}, {{32, 1002, 16384}});
}

// Session 46 (docs/tuning.md "Session 46"): rule U, a cluster of eight (two boxes per stage) on half the SMs or more at
// 17-32 tokens on aligned y rows is the pick (1024 x 2560 at M = 24 / 32: 4.50 / 4.77 us against 6.20 / 6.23); rule V,
// one CTA per 64-row tile at 64 tokens for 1-6 tiles per SM with K <= 5376 (10007 x 1016: 0.72-0.79x stream-K); rule
// W, rule S's one-box tiles at 32 tokens (22779 x 1408: 0.80x stream-K). And the lines each keeps.
TEST(StructuralPick, SessionFortySixRulesAboveSixteenTokens) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      // U (aligned rows: N % 8 == 0).
      {24, 1024, 2560, "tma_m32_r64_b2_s4_x8"},     {32, 1728, 5120, "tma_m32_r64_b2_s4_x8"},
      {17, 1024, 12288, "tma_m32_r64_b2_s4_x8"},
      // V and W (misaligned rows).
      {48, 10007, 1016, "tma_m64_r64_b2_s3_x1"},    {64, 16388, 5376, "tma_m64_r64_b2_s3_x1"},
      {24, 22781, 2560, "tma_m32_r64_b1_s5_c2_d6"}, {32, 21011, 1024, "tma_m32_r64_b1_s5_c2_d6"},
      // V's lines: K % 64 != 0 past 1536 (rule O's), K over 5376 (5440 beside 5376), past 6 tiles per SM (811 of 64).
      {48, 11003, 3080, "tma_m64_r64_b2_s3_c2_u1"}, {64, 19998, 8192, "tma_m64_r64_b2_s3_c2_u1"},
      {64, 51865, 1024, "tma_m64_r64_b2_s3_c2_u1"}, {64, 16388, 5440, "tma_m64_r64_b2_s3_c2_u1"},
      // W's lines: K under 576 (512; session 51) or over 2560 (2624), and 264 tiles of 64 (16895 rows: the slots)
      // against 265.
      {24, 21011, 512, "tma_m32_r64_b2_s4_c2_u1"},  {24, 16897, 2624, "tma_m32_r64_b2_s4_c2_u1"},
      {24, 21011, 576, "tma_m32_r64_b1_s5_c2_d6"},  // session 51
      {24, 21011, 640, "tma_m32_r64_b1_s5_c2_d6"},  // session 49
      {24, 21011, 704, "tma_m32_r64_b1_s5_c2_d6"},
      {32, 18627, 768, "tma_m32_r64_b1_s5_c2_d6"},
      {24, 16895, 1024, "tma_m32_r64_b2_s4_c2_d6"}, {24, 16897, 1024, "tma_m32_r64_b1_s5_c2_d6"},  // 264: session 48's
      {24, 21011, 960, "tma_m32_r64_b1_s5_c2_d6"},  {24, 21011, 832, "tma_m32_r64_b1_s5_c2_d6"},  // session 47
  });
  // U's lines: clusters on fewer CTAs than half the SMs with more than 8 stages each (392 x 13000: 56 CTAs of 13; 448
  // x 12280 / 8320: 56 of 12 / 9), eights of one box per stage on nearly every slot (2048 x 1408), clusters of four
  // (3200 x 4096), the 64-token tile: the scored heuristic decides. Session 47: either line is enough, so 512 x 3072
  // (64 CTAs of 3 stages) and 448 x 8192 (56 of 8) take the eights below the CTA line, and 1280 x 12352 (160 CTAs of 13)
  // over it.
  expect_structural_picks(h200, {{24, 576, 3072, "tma_m32_r64_b2_s4_x8"},
                                 {24, 512, 3072, "tma_m32_r64_b2_s4_x8"},
                                 {32, 448, 8192, "tma_m32_r64_b2_s4_x8"},
                                 {24, 1280, 12352, "tma_m32_r64_b2_s4_x8"},
                                 {24, 576, 12288, "tma_m32_r64_b2_s4_x8"},   // the CTA line: 72 CTAs of 12 stages
                                 {32, 192, 4096, "tma_m32_r64_b2_s4_x8"}});  // 3 row tiles, the narrowest measured
  // Session 48: 9 stages per CTA (448 x 8320: 56 CTAs) and 2 row tiles (128 x 2048) as well (H100, set thirty-one).
  expect_structural_picks(h200, {{24, 448, 8320, "tma_m32_r64_b2_s4_x8"},
                                 {24, 128, 2048, "tma_m32_r64_b2_s4_x8"},
                                 {32, 128, 5112, "tma_m32_r64_b2_s4_x8"}});
  // ... and under it: 512 x 12288 (64 CTAs of 12 stages), 448 x 10240 (56 of 10), one row tile outside session 51's
  // lines (below).
  expect_left_to_the_scored_heuristic(h200, {{24, 392, 13000}, {32, 448, 12280}, {24, 448, 10240}, {24, 512, 12288},
                                             {32, 2048, 1408}, {24, 3200, 4096}, {64, 1024, 2560}});
  // Session 51: one row tile of 32 rows or more (more than 32 from 33 tokens) with 8-18 boxes of 64 per CTA keeps the
  // eights at 17-64 tokens (64 x 4096, 60 x 5000, 63 x 9088: 0.67-0.97x the scored pick on the H100 and H200).
  expect_structural_picks(h200, {{24, 64, 4096, "tma_m32_r64_b2_s4_x8"},
                                 {32, 60, 5000, "tma_m32_r64_b2_s4_x8"},
                                 {48, 64, 4096, "tma_m64_r64_b1_s4_x8"},
                                 {64, 63, 9088, "tma_m64_r64_b1_s4_x8"},
                                 {32, 32, 6144, "tma_m32_r64_b2_s4_x8"},     // 32 rows at 32 tokens
                                 {24, 64, 9216, "tma_m32_r64_b2_s4_x8"},     // 18 boxes per CTA
                                 {64, 64, 9216, "tma_m64_r64_b1_s4_x8"}});
  EXPECT_THAT(pick_on(h200, 24, 64, 4096).reason.str(), HasSubstr("a cluster of eight on one row tile at 17-64 tokens"));
  expect_left_to_the_scored_heuristic(h200, {{24, 31, 6144},    // under 32 rows
                                             {48, 32, 6144},    // 32 rows from 33 tokens
                                             {24, 64, 9344},    // 20 boxes per CTA
                                             {64, 64, 9280},    // 19
                                             {24, 64, 2048},    // 4
                                             {24, 16, 2048}, {24, 48, 16384}});
  EXPECT_THAT(pick_on(h200, 24, 1024, 2560).reason.str(), HasSubstr("a cluster of eight per tile on half the SMs"));
  EXPECT_THAT(pick_on(h200, 24, 512, 3072).reason.str(), HasSubstr("or of at most 9 stages per CTA"));
  expect_rule_note(h200, "one CTA per 64-row tile, not stream-K, where the tiles give 1-6 per SM", "1-6 per SM",
                   {{48, 10007, 1016}}, {{48, 11003, 3080}, {64, 51865, 1024}});
  expect_rule_note(h200, "give 2-2.7 per SM with K 576-2560 at 32 tokens", "at 32 tokens", {{24, 22781, 2560}},
                   {{24, 21011, 512}, {16, 21011, 1024}});
}

// Session 47 (docs/tuning.md "Session 47"): at 64 tokens, 64-row tiles that outnumber the two-per-SM slots with K <=
// 2560, a multiple of 64, take one box per stage on a 4-stage ring where they fill waves of three CTAs per SM (396 on
// the H200): one such wave, or the last one nine tenths full (H100, sets twenty-seven and twenty-eight: 0.69-0.95x the
// two-box tile from 265 to 792 tiles; 1.09-1.10x on 398 and 521 tiles). Misaligned rows, where the first cut is the
// pick above 16 tokens.
TEST(StructuralPick, SixtyFourTokenOneBoxTilesInFullWavesOfThree) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {48, 16897, 832, "tma_m64_r64_b1_s4_x1"},  {64, 25343, 2560, "tma_m64_r64_b1_s4_x1"},   // 265, 396 tiles
      {64, 50257, 768, "tma_m64_r64_b1_s4_x1"},  {64, 48833, 1024, "tma_m64_r64_b1_s4_x1"},   // 786, 764: >= 9/10
      {64, 50687, 1024, "tma_m64_r64_b1_s4_x1"},  {64, 50257, 1152, "tma_m64_r64_b1_s4_x1"},  // 792: two full waves
      // The lines: the slots (264 tiles: 16895 rows), a second wave of two (398: 25413 rows) or 356 of 396 (752 tiles,
      // 48065 rows), K over 2560 (2624): V's tile; K % 64 != 0 (1016): rule Y's 128-row tile (session 49).
      {48, 16895, 832, "tma_m64_r64_b2_s3_x1"},  {64, 25413, 2560, "tma_m64_r64_b2_s3_x1"},
      {64, 48065, 1024, "tma_m64_r64_b2_s3_x1"}, {48, 25343, 2624, "tma_m64_r64_b2_s3_x1"},
      {48, 25343, 1016, "tma_m64_r128_b1_s3_x1"},
      // Past one wave only to K = 1536 (measured at 768-1536 there): 50257 x 1600 / 2560 keep V's tile.
      {64, 50257, 1536, "tma_m64_r64_b1_s4_x1"}, {64, 50257, 1600, "tma_m64_r64_b2_s3_x1"},
      {64, 50257, 2560, "tma_m64_r64_b2_s3_x1"},
  });
  expect_rule_note(h200, "one box per stage on a 4-stage ring at 64 tokens", "fill waves of three per SM",
                   {{48, 16897, 832}}, {{64, 25413, 2560}});
}

// Session 47: clusters of four on 232-248 CTAs (past slots - SMs / 4, at most slots - SMs / 8) with 10 or more stages of
// 128 per CTA keep the 4-stage ring at every token tile (3827 x 4984, 240 CTAs: 0.80-0.90x with 4 stages at M <= 16
// and 48-64 on the H100; 3900 x 5000, 244: 0.89-0.94x at 48-64 on the H200). Fewer stages (3840 x 2560: 5) or more
// CTAs (4002 x 5120: 252) keep 3. Session 48: from 9 stages (3711 x 4104, 3839 x 4608: 0.85-0.95x on the H100, set
// thirty); 8 keep 3 (3840 x 4096: 1.02-1.05x with 4 at M = 8-16 on the H200).
TEST(StructuralPick, FoursJustPastTheSlotLineWithLongRangesKeepFourStages) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {1, 3827, 4984, "tma_m8_r64_b2_s4_x4"},     {48, 3827, 4984, "tma_m64_r64_b1_s4_x4"},
      {64, 3827, 5000, "tma_m64_r64_b1_s4_x4"},   {48, 3900, 5000, "tma_m64_r64_b1_s4_x4"},
      {1, 3840, 2560, "tma_m8_r64_b2_s3_x4"},     {48, 4002, 5120, "tma_m64_r64_b1_s3_x4"},
      // The stage line (240 CTAs): 8 stages per CTA at K = 4096 keep 3, 9 (a partial one counted) at 4104 take 4.
      {1, 3839, 4096, "tma_m8_r64_b2_s3_x4"},     {1, 3839, 4104, "tma_m8_r64_b2_s4_x4"},
      {48, 3839, 4096, "tma_m64_r64_b1_s3_x4"},   {48, 3839, 4104, "tma_m64_r64_b1_s4_x4"},
      {1, 3839, 4608, "tma_m8_r64_b2_s4_x4"},
      // The CTA line (K = 4840, 10 stages): 248 CTAs (62 tiles) take 4, 252 (63) keep 3.
      {1, 3967, 4840, "tma_m8_r64_b2_s4_x4"},     {1, 3971, 4840, "tma_m8_r64_b2_s3_x4"},
      {48, 3967, 4840, "tma_m64_r64_b1_s4_x4"},   {48, 3971, 4840, "tma_m64_r64_b1_s3_x4"},
  });
}

// Session 48 (docs/tuning.md "Session 48"): at 32 tokens, 64-row tiles 1 to 2 per SM take one CTA per tile where K is
// 704-1664 (1088 at first, 1600 after set thirty-two, 1664 after set thirty-three in session 49) or the tiles give 1.75
// per SM or more with K <= 5376 (10003 / 10007 x 1016: 0.77-0.83x stream-K on both
// GPUs; 16388 x 5376, 257 tiles: 0.87-0.88x); and at 128 MiB or more with K <= 3072 the 64-row tiles are one CTA each
// from M = 3 (summed 0.96-0.99x stream-K over sets nine to thirty-one). Misaligned y rows above 16 tokens, where the
// first cut is the pick.
TEST(StructuralPick, OneCtaPerTileAtThirtyTwoTokensAndAbove128MiB) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {24, 10003, 1016, "tma_m32_r64_b2_s4_c2_d6"},  {32, 10007, 1032, "tma_m32_r64_b2_s4_c2_d6"},
      {24, 16388, 5376, "tma_m32_r64_b2_s4_c2_d6"},  {32, 15157, 4608, "tma_m32_r64_b2_s4_c2_d6"},
      {3, 50257, 1536, "tma_m8_r64_b2_s4_c2_d6"},    {16, 65536, 1024, "tma_m16_r64_b2_s4_c2_d6"},
      // The lines: K over 1600 on fewer than 1.75 tiles per SM (12628 x 5120: 198 tiles; 230 tiles, 14719 rows, against
      // 231, 14721; 10970 x 3136, measured 1.03x for stream-K; 10007 x 1664) or under 704 (640), K over 5376 (16388 x
      // 5440), rule O's K (11003 x 3080); M <= 2 and K outside 1024-3072 at 128 MiB or more.
      {24, 12628, 5120, "tma_m32_r64_b2_s4_c2_u1"},  {24, 14719, 4096, "tma_m32_r64_b2_s4_c2_u1"},
      {24, 14721, 4096, "tma_m32_r64_b2_s4_c2_d6"},  {24, 16388, 5440, "tma_m32_r64_b2_s4_c2_u1"},
      {24, 11003, 3080, "tma_m32_r64_b2_s4_c2_u1"},  {2, 50257, 1536, "tma_m8_r64_b2_s4_c2_u1"},
      {8, 32000, 3136, "tma_m8_r64_b2_s4_c2_u1"},    {24, 10970, 3136, "tma_m32_r64_b2_s4_c2_u1"},
      {24, 10007, 1728, "tma_m32_r64_b2_s4_c2_u1"},  {24, 10007, 640, "tma_m32_r64_b2_s4_c2_u1"},   // K 1664 / 704
      {24, 10007, 1664, "tma_m32_r64_b2_s4_c2_d6"},  {32, 12347, 1664, "tma_m32_r64_b2_s4_c2_d6"},  // session 49
      {24, 10007, 1600, "tma_m32_r64_b2_s4_c2_d6"},  {24, 14715, 1600, "tma_m32_r64_b2_s4_c2_d6"},
      {24, 10007, 704, "tma_m32_r64_b2_s4_c2_d6"},   {24, 14715, 1096, "tma_m32_r64_b2_s4_c2_u1"},  // K 704; rule O's K
      {24, 14715, 1088, "tma_m32_r64_b2_s4_c2_d6"},
      {8, 140000, 512, "tma_m8_r64_b2_s4_c2_u1"},   // 128 MiB or more with K under 1024
  });
  expect_rule_note(h200, "1-2 per SM with K <= 1664 or 1.75-2 per SM with K <= 5376 at 32 tokens", "1.75-2 per SM",
                   {{24, 10003, 1016}}, {{24, 12628, 5120}});
  expect_rule_note(h200, "at 128 MiB or more with K <= 3072 at M = 3-16", "at 128 MiB or more with K",
                   {{3, 50257, 1536}}, {{2, 50257, 1536}});
}

// Session 49 (docs/tuning.md "Session 49"). Rule X: aligned y rows at 33-48 tokens take the first cut's cluster of eight
// on 2-18 row tiles with 4-10 boxes of 64 per CTA (192 x 4096, 352 x 2048, 1152 x 3584 at M = 48: 0.84-0.87x
// cuBLASLt's pick on the H200). Rule Y: at 64 tokens, K % 64 != 0 and 128-row tiles for 0.7x the slots or more take
// those tiles of one box per stage in the grid the rules chose (33337 x 1000: 0.81-0.82x on the H200). Rule Z below.
TEST(StructuralPick, SessionFortyNineRules) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {
      {48, 192, 4096, "tma_m64_r64_b1_s4_x8"},   {33, 352, 2048, "tma_m64_r64_b1_s4_x8"},
      {40, 1152, 3584, "tma_m64_r64_b1_s4_x8"},  {48, 1024, 5120, "tma_m64_r64_b1_s4_x8"},  // 18 tiles; 10 boxes
      {48, 128, 5112, "tma_m64_r64_b1_s4_x8"},                                              // 2 tiles
      {48, 33337, 1000, "tma_m64_r128_b1_s3_x1"},   {64, 25279, 2504, "tma_m64_r128_b1_s3_c2_u1"},
      {48, 24003, 4040, "tma_m64_r128_b1_s3_c2_u1"}, {48, 23553, 1000, "tma_m64_r128_b1_s3_x1"},  // 185 tiles of 128
      // Y's lines: 184 tiles of 128 (23551 rows), K % 64 == 0 (33337 x 1024), 79 tiles (10007 x 1016), 32 tokens.
      {48, 23551, 1000, "tma_m64_r64_b2_s3_x1"},    {48, 33337, 1024, "tma_m64_r64_b2_s3_x1"},
      {64, 10007, 1016, "tma_m64_r64_b2_s3_x1"},    {32, 33337, 1000, "tma_m32_r128_b1_s4_c2_d6"},
  });
  // X's lines: M = 49 and up (192 x 4096 at 49 / 64), 11 boxes per CTA (1024 x 5632), 3 (512 x 1536), 152 CTAs (1216 x
  // 7168), one row tile under 32 rows (16 x 4096; session 51 takes one tile of 32 rows or more): the scored heuristic.
  expect_left_to_the_scored_heuristic(h200, {{49, 192, 4096}, {64, 192, 4096}, {48, 1024, 5632}, {48, 512, 1536},
                                             {48, 1216, 7168}, {48, 16, 4096},
                                             {48, 1216, 2560},    // 19 tiles (152 CTAs) of 5 boxes: the CTA line alone
                                             {48, 16, 2048}});    // one tile of 4 boxes under 32 rows
  EXPECT_THAT(pick_on(h200, 48, 192, 4096).reason.str(), HasSubstr("4-10 boxes of 64 per CTA at 33-48 tokens"));
  // Rule Z: at 9-16 tokens narrow clusters of eight over 1 MiB on 3 or more tiles whose CTAs' shares fit the ring
  // (192 x 4096, 256 x 2048, 150 x 3504: 0.85-0.93x bulk's time on both GPUs); M <= 8, 2 tiles (128 x 4096) and more
  // stages than the ring (136 x 5112: 5 of 4; 128 x 7168) keep the scored heuristic.
  expect_structural_picks(h200, {{12, 192, 4096, "tma_m16_r64_b2_s4_x8"},
                                 {16, 256, 2048, "tma_m16_r64_b2_s4_x8"},
                                 {9, 150, 3504, "tma_m16_r64_b2_s4_x8"}});
  expect_left_to_the_scored_heuristic(h200, {{8, 192, 4096}, {16, 128, 4096}, {16, 136, 5112}, {16, 128, 7168}});
  // Clusters of four or eight on more than 1.4 CTAs per SM with up to 5 stages of 128 each take the 3-stage ring at M
  // <= 16 (1784 x 4136 in eights: 0.88-0.91x; 3584 x 2368 in fours: 0.87-0.89x). The lines: 5 stages per CTA in (3584 x
  // 2560: 20 stages of 4 CTAs) against 5.25 (3584 x 2688); 188 CTAs in (2945 x 2560: 47 tiles in fours) against 184
  // (2944 x 2560) and 168 (2688 x 2560); 160 CTAs (2560 x 2560: 1.08-1.11x with 3 on the H100).
  expect_structural_picks(h200, {{1, 1784, 4136, "tma_m8_r64_b2_s3_x8"},  {16, 3584, 2368, "tma_m16_r64_b2_s3_x4"},
                                 {8, 1728, 5120, "tma_m8_r64_b2_s3_x8"},  {4, 3584, 2560, "tma_m8_r64_b2_s3_x4"},
                                 {4, 3584, 2688, "tma_m8_r64_b2_s4_x4"},  {4, 2560, 2560, "tma_m8_r64_b2_s4_x4"},
                                 {4, 2945, 2560, "tma_m8_r64_b2_s3_x4"},  {4, 2944, 2560, "tma_m8_r64_b2_s4_x4"},
                                 {4, 2688, 2560, "tma_m8_r64_b2_s4_x4"}});
  expect_rule_note(h200, "128-row tiles of one box per stage at 64 tokens, where K is not a multiple of 64",
                   "K is not a multiple of 64 and those", {{48, 33337, 1000}}, {{48, 33337, 1024}, {48, 23551, 1000}});
}

// Session 51 (docs/tuning.md "Session 51"): rule V takes rule O's misaligned K up to 1536 (9431 x 1032 / 1528; 23555 x
// 1480 through rule Y's 128-row tiles; 1544 and 11003 x 3080 keep stream-K), clusters of four of under 4 boxes of 64
// per CTA on SMs / 4 tiles or more at 32-64 tokens give way to one CTA per tile (3331 x 448 / 512 / 896, 2111 x 448's 33
// tiles; 3331 x 1024's 4 boxes and 2047 x 448's 32 tiles keep the fours, 512 x 1024's 8 tiles the eights), and the
// one-box tiles take the deepest ring that keeps three CTAs per SM (7 / 6 / 5 stages at 8 / 16 / 32 tokens; 8 / 7 / 6 do
// not fit).
TEST(StructuralPick, SessionFiftyOneRules) {
  const DeviceInfo h200 = tune::device_preset("h200");
  expect_structural_picks(h200, {{48, 9431, 1032, "tma_m64_r64_b2_s3_x1"},     {64, 23555, 1480, "tma_m64_r128_b1_s3_x1"},
                                 {48, 9431, 1528, "tma_m64_r64_b2_s3_x1"},     {48, 9431, 1544, "tma_m64_r64_b2_s3_c2_u1"},
                                 {48, 11003, 3080, "tma_m64_r64_b2_s3_c2_u1"}, {24, 3331, 448, "tma_m32_r64_b2_s4_x1"},
                                 {64, 3331, 448, "tma_m64_r64_b1_s4_x1"},      {48, 3331, 512, "tma_m64_r64_b1_s4_x1"},
                                 {24, 3331, 896, "tma_m32_r64_b2_s4_x1"},      {24, 3331, 1024, "tma_m32_r64_b2_s4_x4"},
                                 {24, 2111, 448, "tma_m32_r64_b2_s4_x1"},      {24, 2047, 448, "tma_m32_r64_b2_s4_x4"},
                                 {24, 512, 1024, "tma_m32_r64_b2_s4_x8"}});
  EXPECT_THAT(pick_on(h200, 24, 3331, 448).reason.str(), HasSubstr("not clusters of four of under 4 boxes of 64"));
  for (const auto& [tile, stages] : std::vector<std::pair<int, int>>{{8, 7}, {16, 6}, {32, 5}}) {
    Config c = Config::parse("tma_m8_r64_b1_s4_c2_d6");
    c.tile_m = tile;
    const auto bytes = [&](int s) { return tma::smem_bytes(c.rows, c.tile_m, s, c.boxes, c.cluster, true); };
    EXPECT_LE(3 * (bytes(stages) + 1024), 228 * 1024) << tile;
    EXPECT_GT(3 * (bytes(stages + 1) + 1024), 228 * 1024) << tile;
  }
}

TEST(StructuralPick, FollowsTheDeviceFactsItIsGiven) {
  DeviceInfo half = tune::device_preset("h200");
  half.sms = 66;  // 132 two-per-SM slots: 33 row tiles x 4 (the cluster of 8 no longer fits) fill them with 14
                  // stages each, so 32-row tiles with an 8-stage ring from M = 5 (sessions 33-35), in the lead
                  // split's two parts since session 42 (rule T)
  const Choice c = pick_on(half, 8, 2112, 7168);
  EXPECT_EQ(c.config.name(), "tma_m8_r32_b2_s8_c2_d9");
  EXPECT_THAT(c.reason.str(), HasSubstr("66 row tiles of 32 x 2 lead-split parts = 132 CTAs on 132 two-per-SM slots"));
  // ... and at M <= 4 the lead split's four parts per tile (session 34).
  EXPECT_THAT(pick_on(half, 1, 2112, 7168).reason.str(),
              HasSubstr("33 row tiles of 64 x 4 lead-split parts = 132 CTAs"));
  // The scored heuristic alone (what `skinnygemm heuristic` dumps as scored_pick) never takes the structural family.
  Choice scored;
  const Problem p{1, 2112, 7168, DType::BF16};
  const DeviceInfo h200 = tune::device_preset("h200");
  ASSERT_TRUE(scored_heuristic_choice_among(p, h200, [&](const Config& x) { return fits_shape(x, p, h200); }, &scored));
  EXPECT_NE(scored.config.family, Family::Tma) << scored.config.name();
}

}  // namespace
}  // namespace skinnygemm
