// cublaslt_unsplit (backends/cuda/cublaslt_unsplit.h): which of cuBLASLt's answers the heuristic's cuBLASLt pick runs,
// the tile shapes read from the toolkit's header, and where selection names it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/cuda/cublaslt_unsplit.h"
#include "lab/device_presets.h"
#include "runtime/cost_model.h"
#include "skinnygemm/select.h"

namespace skinnygemm {
namespace {

using cuda::LtAnswer;
using cuda::unsplit_answer;

LtAnswer answer(int split_k, int rows, int tokens) {
  LtAnswer a;
  a.split_k = split_k, a.tile_rows = rows, a.tile_tokens = tokens;
  return a;
}

TEST(CublasltUnsplit, TheDefaultUnlessItSplitsK) {
  EXPECT_EQ(unsplit_answer({}, 32), 0);
  EXPECT_EQ(unsplit_answer({answer(1, 64, 32), answer(1, 128, 32)}, 32), 0);  // the default does not split
  // 9216 x 4608 at M = 32 (heuristic-eleventh-partial-e2c09d8.json): the default 192 x 32 split in two ran 28.15 us,
  // the first unsplit answer, 128 x 32, 23.17.
  EXPECT_EQ(unsplit_answer({answer(2, 192, 32), answer(1, 128, 32), answer(3, 256, 32)}, 32), 1);
}

TEST(CublasltUnsplit, SkipsSplitsNarrowTilesAndFewTokens) {
  // A later split, a 32-row tile (4096 x 3584 at M = 32: 15.62 us against the split's 11.99) and an unknown tile pass.
  EXPECT_EQ(unsplit_answer({answer(2, 64, 32), answer(3, 64, 32), answer(1, 32, 64), answer(1, 0, 0),
                            answer(1, 64, 32)},
                           32),
            4);
  // Fewer than M / 2 tokens read the weights three times or more (2112 x 5120 at M = 24: 64 x 8 15.10 us against
  // 10.88): 8 tokens at M = 24 pass, 16 are taken.
  EXPECT_EQ(unsplit_answer({answer(3, 64, 24), answer(1, 64, 8), answer(1, 64, 16)}, 24), 2);
  // The edges: 48 rows and exactly M / 2 tokens are taken; one token short of M / 2 is not.
  EXPECT_EQ(unsplit_answer({answer(2, 64, 32), answer(1, 48, 16)}, 32), 1);
  EXPECT_EQ(unsplit_answer({answer(2, 64, 32), answer(1, 47, 64)}, 32), 0);
  EXPECT_EQ(unsplit_answer({answer(2, 64, 48), answer(1, 64, 16)}, 33), 0);
  EXPECT_EQ(unsplit_answer({answer(2, 64, 48), answer(1, 64, 16)}, 32), 1);
}

// cuBLASLt reports split-K -1 on some algorithms (ids 41 and 42 on 13.1; 25013 x 10240 at M = 24: such a 64 x 64
// answer ran 752.5 us against the default's 488.6): neither a default that stays nor an unsplit answer.
TEST(CublasltUnsplit, SplitKOfMinusOneIsNotUnsplit) {
  EXPECT_EQ(unsplit_answer({answer(2, 64, 32), answer(-1, 64, 64), answer(1, 64, 32)}, 32), 2);
  EXPECT_EQ(unsplit_answer({answer(-1, 64, 32), answer(1, 64, 32)}, 32), 1);
  EXPECT_EQ(unsplit_answer({answer(2, 64, 32), answer(0, 64, 32)}, 32), 0);
}

TEST(CublasltUnsplit, NoUnsplitAnswerKeepsTheDefault) {
  EXPECT_EQ(unsplit_answer({answer(2, 64, 32), answer(4, 128, 32), answer(1, 32, 32), answer(1, 64, 8)}, 32), 0);
}

TEST(CublasltUnsplit, TileShapesComeFromTheToolkitsHeader) {
  int rows = -1, tokens = -1;
#if SKINNYGEMM_TESTS_BUILT_WITH_CUDA
  // CUBLASLT_MATMUL_TILE_8x8 = 1 and _64x32 = 13 in every CUDA 12-13 header (newer tiles such as 64x16 = 312 and
  // 192x24 = 450 came with 12.6; CMakeLists.txt warns where the header lacks them).
  ASSERT_TRUE(cuda::cublaslt_tile_shape(1, &rows, &tokens));
  EXPECT_EQ(rows, 8);
  EXPECT_EQ(tokens, 8);
  ASSERT_TRUE(cuda::cublaslt_tile_shape(13, &rows, &tokens));
  EXPECT_EQ(rows, 64);
  EXPECT_EQ(tokens, 32);
#else
  // Built without the CUDA toolkit: no shape is known (and no cuBLASLt runs).
  EXPECT_FALSE(cuda::cublaslt_tile_shape(13, &rows, &tokens));
#endif
  // CUBLASLT_MATMUL_TILE_UNDEFINED and ids past the header's list have no shape.
  EXPECT_FALSE(cuda::cublaslt_tile_shape(0, &rows, &tokens));
  EXPECT_EQ(rows, 0);
  EXPECT_EQ(tokens, 0);
  EXPECT_FALSE(cuda::cublaslt_tile_shape(1 << 20, &rows, &tokens));
  EXPECT_FALSE(cuda::cublaslt_tile_shape(-1, &rows, &tokens));
}

// The heuristic as a build holding every instance picks (supports() replaced by the shape arithmetic, so that a build
// without CUDA judges the same picks).
Choice heuristic_on(const DeviceInfo& dev, const Problem& p) {
  Choice c;
  EXPECT_TRUE(heuristic_choice_among(p, dev, [&](const Config& x) { return fits_shape(x, p, dev); }, &c)) << p.str();
  return c;
}

// The heuristic names cublaslt_unsplit where it picks cuBLASLt up to M = 64, the default above, and the fallback stays
// cuBLASLt's default (what every table entry was measured against).
TEST(CublasltUnsplit, TheHeuristicsCublasltPickUpToSixtyFourTokens) {
  const DeviceInfo h200 = tune::device_preset("h200");
  // 48 x 7168 x 7168: cuBLASLt by the margin (test_tune.cpp: TheFirstCutOfAFamilyThePickIsNotOf).
  const Choice at48 = heuristic_on(h200, Problem{48, 7168, 7168, DType::BF16});
  EXPECT_EQ(at48.config.name(), "cublaslt_unsplit") << at48.reason.str();
  EXPECT_EQ(at48.source, Source::Heuristic);
  EXPECT_THAT(at48.reason.str(), ::testing::HasSubstr("as cublaslt_unsplit"));
  // Above 64 tokens no kernel runs: the fallback, cuBLASLt's default, in every build. (The scored models alone keep
  // naming the default too: HeuristicModel.MeasuredPointsOfTheTuningRuns in test_cost_model.cpp.)
  const Choice at65 = select(Problem{65, 7168, 7168, DType::BF16}, h200, nullptr, 16);
  EXPECT_EQ(at65.config.name(), "cublaslt") << at65.reason.str();
  // K % 8 != 0: no kernel runs, the fallback.
  const Choice fallback = select(Problem{16, 7168, 7170, DType::BF16}, h200, nullptr, 16);
  EXPECT_EQ(fallback.source, Source::Fallback);
  EXPECT_EQ(fallback.config.name(), "cublaslt");
}

}  // namespace
}  // namespace skinnygemm
