// The quick tune's moves (lab/tune_moves.h): each move names the config the study scored, every listed move parses, and
// `tune --moves K` times the pick, K - 1 moves in list order and cuBLASLt's default.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "kernels/family.h"
#include "lab/device_presets.h"
#include "lab/tune_moves.h"
#include "lab/tuner.h"
#include "runtime/backends.h"
#include "skinnygemm/skinnygemm.h"

using namespace skinnygemm;
using ::testing::HasSubstr;

namespace {

std::string moved(const std::string& move, const std::string& pick, const Problem& p = {4, 1536, 7168, DType::BF16}) {
  const std::optional<std::string> name = tune::apply_move(move, Config::parse(pick), p, tune::device_preset("h200"));
  return name ? *name : "(none)";
}

}  // namespace

// The study's notation (tools/trials/selector_study/topk.py apply_move), one case per op and target.
TEST(TuneMoves, EachMoveNamesTheConfigTheStudyScored) {
  // Clusters.
  EXPECT_EQ(moved("S+1 x/2", "tma_m8_r64_b2_s4_x8"), "tma_m8_r64_b2_s5_x4");
  EXPECT_EQ(moved("S-1 x*2", "tma_m8_r64_b2_s5_x4"), "tma_m8_r64_b2_s4_x8");
  EXPECT_EQ(moved("r/2 S+4", "tma_m8_r64_b2_s4_x8"), "tma_m8_r32_b2_s8_x8");  // 4 steps along 3 4 5 6 7 8 12 16 24
  EXPECT_EQ(moved(">lead(c2,d6)", "tma_m16_r64_b2_s4_x8"), "tma_m16_r64_b2_s4_c2_d6");
  EXPECT_EQ(moved(">sk(c1,u8)", "tma_m8_r64_b2_s4_x8"), "tma_m8_r64_b2_s4_c1_u8");
  EXPECT_EQ(moved("b*2 x/2", "tma_m8_r64_b1_s4_x8"), "tma_m8_r64_b2_s4_x4");
  // The lead split.
  EXPECT_EQ(moved("S+1", "tma_m8_r64_b2_s5_c2_d6"), "tma_m8_r64_b2_s6_c2_d6");
  EXPECT_EQ(moved("r*2 b/2", "tma_m8_r64_b2_s5_c2_d6"), "tma_m8_r128_b1_s5_c2_d6");
  EXPECT_EQ(moved("r*2>sk(c+0,u8)", "tma_m8_r32_b2_s5_c2_d6"), "tma_m8_r64_b2_s5_c2_u8");
  EXPECT_EQ(moved("S+1 d-3", "tma_m8_r64_b2_s5_c2_d6"), "tma_m8_r64_b2_s6_c2_d3");
  EXPECT_EQ(moved(">x(x1)", "tma_m8_r64_b2_s5_c2_d6"), "tma_m8_r64_b2_s5_x1");
  // Stream-K.
  EXPECT_EQ(moved("r/2>lead(c+0,d0)", "tma_m8_r64_b2_s4_c2_u1"), "tma_m8_r32_b2_s4_c2_d0");
  EXPECT_EQ(moved("c-1 U+2", "tma_m8_r64_b2_s4_c2_u1"), "tma_m8_r64_b2_s4_c1_u8");  // along 1 2 8
  EXPECT_EQ(moved("S+1>lead(c+0,d3)", "tma_m8_r64_b2_s4_c2_u1"), "tma_m8_r64_b2_s5_c2_d3");
  // The stage ring's tokens.
  EXPECT_EQ(moved("w1x8>w1x4 u/2", "bulk_m8_w1x8_u4_sk4"), "bulk_m8_w1x4_u2_sk4");
  EXPECT_EQ(moved("u/2 sk*2", "bulk_m16_w1x8_u2_sk4"), "bulk_m16_w1x8_u1_sk8");
  // Any pick.
  EXPECT_EQ(moved("LT:cublaslt_a1", "tma_m8_r64_b2_s4_x8"), "cublaslt_a1");
  const Problem wide{48, 7168, 7168, DType::BF16};
  EXPECT_EQ(moved("CUT:tma", "cublaslt", wide), family(Family::Tma).first_cut(wide, tune::device_preset("h200")).name());
  // Where a move does not apply: off the stage list, a remainder, no such token, a first cut on a tma pick, another
  // kind's move (a field the pick's kind does not have).
  EXPECT_EQ(moved("S+1", "tma_m8_r64_b2_s24_c2_d6"), "(none)");
  EXPECT_EQ(moved("S-1", "tma_m8_r64_b2_s3_c2_d6"), "(none)");
  EXPECT_EQ(moved("b/2", "tma_m8_r64_b1_s4_c2_d6"), "(none)");  // the study names b0, which no list holds
  EXPECT_EQ(moved("w1x8>w1x4", "bulk_m8_w1x4_u4_sk4"), "(none)");
  EXPECT_EQ(moved("CUT:tma", "tma_m8_r64_b2_s4_x8"), "(none)");
  EXPECT_EQ(moved("S+1", "cublaslt"), "(none)");
  EXPECT_EQ(moved("x/2", "tma_m8_r64_b2_s5_c2_d6"), "(none)");
  EXPECT_EQ(moved("d-3", "tma_m8_r64_b2_s4_x8"), "(none)");
  EXPECT_EQ(moved("U+1", "tma_m8_r64_b2_s5_c2_d6"), "(none)");
  EXPECT_EQ(moved("c-1", "tma_m8_r64_b2_s4_x8"), "(none)");
  EXPECT_EQ(moved("S+1", "bulk_m8_w1x8_u4_sk4"), "(none)");
}

// Every move of every list names a config for some pick of its kind (a typo in the table would otherwise throw mid-tune
// or never apply).
TEST(TuneMoves, EveryListedMoveAppliesToAPickOfItsKind) {
  const std::vector<std::string> picks = {
      "tma_m8_r64_b2_s4_x8",    "tma_m8_r64_b1_s4_x8",    "tma_m8_r32_b2_s5_x8",    "tma_m8_r64_b2_s5_c2_d6",
      "tma_m8_r32_b2_s5_c2_d6", "tma_m8_r64_b2_s4_c2_u1", "tma_m8_r32_b2_s4_c2_u1", "bulk_m8_w1x8_u4_sk4",
      "bulk_m8_w1x8_u2_sk2",    "cublaslt"};
  const Problem wide{48, 7168, 7168, DType::BF16};
  for (const std::string kind : {"x", "lead", "sk", "bulk", "cublaslt"}) {
    ASSERT_FALSE(tune::moves_for(kind).empty()) << kind << " has no list";
    for (const std::string& move : tune::moves_for(kind)) {
      bool applies = false;
      for (const std::string& pick : picks) {
        if (tune::move_kind(Config::parse(pick)) != kind) continue;
        std::string name;
        EXPECT_NO_THROW(name = moved(move, pick, wide)) << kind << ": " << move << " on " << pick;
        applies = applies || name != "(none)";
      }
      EXPECT_TRUE(applies) << kind << ": " << move << " names no config for any sample pick of its kind";
    }
  }
  EXPECT_TRUE(tune::moves_for(tune::move_kind(Config::parse("cpu_r4"))).empty());
}

// On the h200's facts: the pick first, then the moves in list order that name a listed config that runs, then cuBLASLt's
// default; K = 1 is the pick and the default alone; never more than K + 1 configs, none twice.
TEST(TuneMoves, TheQuickTuneTimesThePickItsFirstMovesAndTheDefault) {
  const DeviceInfo gpu = tune::device_preset("h200");
  for (const Problem& p : {Problem{4, 1536, 7168, DType::BF16}, Problem{1, 20480, 7168, DType::BF16},
                           Problem{16, 7168, 7168, DType::BF16}, Problem{48, 7168, 7168, DType::BF16},
                           Problem{1, 100, 5128, DType::BF16}}) {
    const Config pick = select(p, gpu, nullptr, 16).config;
    const std::vector<Config> all = tune::tune_candidates(p, gpu, "");
    std::set<std::string> listed;
    for (const Config& c : all_listed_configs()) listed.insert(c.name());
    for (const int k : {1, 3, 8}) {
      const std::vector<Config> quick = tune::tune_candidates(p, gpu, "", std::nullopt, k);
      ASSERT_FALSE(quick.empty());
      EXPECT_EQ(quick[0], pick) << p.n << "x" << p.k << " m=" << p.m;
      EXPECT_LE(quick.size(), static_cast<std::size_t>(k) + 1);
      std::set<std::string> names;
      for (const Config& c : quick) {
        EXPECT_TRUE(names.insert(c.name()).second) << c.name() << " twice";
        EXPECT_TRUE(supports(c, p, gpu, 16)) << c.name();
      }
      EXPECT_EQ(names.count("cublaslt"), 1u) << "the margin rule's baseline";
      if (!cuda::built()) continue;  // no kernel instance: the pick is cuBLASLt's default
      // The moves taken, in list order: each the first applicable one after the previous.
      std::size_t next = 1;
      for (const std::string& move : tune::moves_for(tune::move_kind(pick))) {
        if (next >= quick.size() || static_cast<int>(next) >= k) break;
        const std::optional<std::string> name = tune::apply_move(move, pick, p, gpu);
        // The first cut is taken whether or not it is a listed config (as --near-heuristic measures it).
        const bool cut = move == "CUT:tma";
        if (!name || (!cut && !listed.count(*name))) continue;
        const Config named = cut ? family(Family::Tma).first_cut(p, gpu) : Config::parse(*name);
        if (!supports(named, p, gpu, 16)) continue;
        if (std::any_of(quick.begin(), quick.begin() + next, [&](const Config& c) { return c.name() == *name; }))
          continue;
        EXPECT_EQ(quick[next].name(), *name) << p.n << "x" << p.k << " m=" << p.m << " k=" << k << ": move " << move;
        ++next;
      }
      if (k == 8) {
        EXPECT_LT(quick.size(), all.size()) << "the quick tune times fewer configs than every listed one";
      }
    }
  }
}

TEST(TuneMoves, BadCountsAreErrorsNamingTheValue) {
  const DeviceInfo gpu = tune::device_preset("h200");
  const Problem p{4, 1536, 7168, DType::BF16};
  try {
    tune::tune_candidates(p, gpu, "", std::nullopt, 0);
    FAIL() << "moves 0 was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("moves 0: expected the number of configs to time per point, >= 1"));
  }
  try {
    tune::tune_candidates(p, gpu, "", 2, 8);
    FAIL() << "two ways of choosing candidates were accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("near-heuristic distance 2 and moves 8: expected one way of choosing candidates"));
  }
  int status = 0;
  std::string out = test::run_cli("tune --backend cpu --shapes 64x256 --m 1 --moves 0 --no-store", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("--moves 0: expected the number of configs to time per point, >= 1"));
  out = test::run_cli("tune --backend cpu --shapes 64x256 --m 1 --moves 2 --near-heuristic 1 --no-store", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("excludes"));
  // On the CPU the pick (a cpu config) has no list: the quick tune times it alone.
  out = test::run_cli("tune --backend cpu --shapes 64x256 --m 1 --moves 4 --samples 1 --replays 1 --no-store", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("the heuristic's pick and its first 3 moves (quick tune)"));
}
