// cublaslt_unsplit (Config::algo kCublasltUnsplit): which of cuBLASLt's heuristic answers the heuristic's cuBLASLt pick
// runs at M <= 64. Host-only and free of cuBLASLt's headers, so that the rule is tested without a GPU; the device half
// (backends/cuda/cublaslt.cu) reads each answer's split and tile and caches the index per problem and alignment.
//
// Why: at decode sizes cuBLASLt's first answer often splits K (reduction scheme "compute type": FP32 partials and a
// second pass) where an answer further down its own list does not, and the stream of weights is the whole cost. In the
// held-out reports of sets nine to twenty-one (docs/benchmarks/h200/heuristic-*.json), at the 1161 points where the
// heuristic picked cuBLASLt's default and the report timed cuBLASLt's answers with their identities up to the rule's
// decision (nearly all at M = 24-64), this rule put 945 within 5% of the best candidate against the default's 856 and
// summed 34394 us against 34706 (faster at 94 points, slower at 2: `scripts/heuristic_rescore.py --steps`). It was
// slower than the default by more than 3% at one point (12288 x 12288 at M = 32: 78.64 against 76.05 us, a 96 x 64 tile
// over a 192 x 32 split in two), and every one of the 14 reports gained or kept its count. The thresholds: tiles of 32
// rows lost where they were the first unsplit answer (4096 x 3584 at M = 32: 32 x 64 15.62 us against the split 64 x
// 32's 11.99), and so did tiles of fewer than M / 2 tokens, which read the weights three times or more (2112 x 5120 at
// M = 24: 64 x 8 15.10 against 10.88). Judged offline (docs/tuning.md "Session 37"); blind on set twenty-two when it is
// measured.
#pragma once

#include <vector>

namespace skinnygemm::cuda {

// One heuristic answer as the rule sees it: its split-K count and its tile's rows (along N, w's rows) and columns
// (along M, tokens); a tile whose shape is unknown (an id newer than the header the library was built with) has 0 x 0.
struct LtAnswer {
  int split_k = 1;
  int tile_rows = 0;
  int tile_tokens = 0;
};

// The index among `answers` (cuBLASLt's order) that cublaslt_unsplit runs for M tokens: 0 unless answer 0 splits K
// (split_k other than 1: cuBLASLt reports -1 on some); then the first answer with split_k exactly 1, at least 48 tile
// rows and at least M / 2 tile tokens, or 0 where none has them.
int unsplit_answer(const std::vector<LtAnswer>& answers, int m);

// The rows and tokens of cuBLASLt's tile id (cublasLtMatmulTile_t, CUBLASLT_MATMUL_TILE_<rows>x<cols>), read from the
// toolkit's cublasLt.h when the library was built; false (and 0 x 0) for an id it did not list, or in a build without
// the CUDA toolkit.
bool cublaslt_tile_shape(int tile_id, int* rows, int* tokens);

}  // namespace skinnygemm::cuda
