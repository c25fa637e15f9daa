// Kernel configurations: one value type with a stable, human-readable name that round-trips.
//
// Names (every number is a parameter):
//   bulk_m8_w1x4_u2_sk1   mma.sync m16n8k16 (weights on the 16-row side) fed by a CTA-wide ring of bulk asynchronous
//                         copies (one instruction per row and 256-wide K stage): m = token tile (max M per launch),
//                         w = warps along N x warps along K in a CTA, u: the ring has 4 x u stages, all in flight
//                         before the PDL wait, sk = CTAs of a cluster splitting K; one row block per CTA; only w1x4
//                         and w1x8 layouts
//   tma_m8_r64_b2_s4_c2_u2  the TMA family (src/kernels/tma): r = weight rows per tile, b = 64-wide K boxes per
//                         stage, s = ring stages (all requested before the PDL wait), c = CTAs per SM,
//                         u = fewest (tile, stage) units per CTA of the stream-K split
//   tma_m8_r64_b2_s4_x8   the same kernel with split-K by a cluster of x CTAs per row tile (reduced through
//                         distributed shared memory) instead of stream-K; x1 = one CTA per row tile, whole K
//   tma_m8_r64_b2_s4_c2_d3  split-K of every row tile into about c x SMs / tiles parts, one CTA each; the part that
//                         reduces has d more stages than each other part (their partials are ready when it ends)
//   tma_m8_r16_b8_s4_rs   the row stream (src/kernels/tma/row_stream.cuh): one CTA per 8, 16 or 32 weight rows over the
//                         whole K, tokens on the MMA's 16-row side, 16 KB weight stages (b = 128 / r), no split; a named
//                         lab candidate, not listed
//   cublaslt              cuBLASLt with its default heuristic; cublaslt_a3 = its 4th heuristic algorithm
//                         (split-K partials reduced in FP32 only); cublaslt_torch = the default heuristic with
//                         every reduction scheme allowed, as torch's F.linear allows reduced-precision reductions
//   cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0  one cuBLASLt algorithm by identity, whatever the heuristic's order:
//                         its algorithm, tile, stages, split-K, reduction scheme, CTA swizzling, custom option,
//                         cluster shape and inner shape ids (src/backends/cuda/cublaslt_family.cpp). A position
//                         (cublaslt_a3) names another algorithm under another cuBLASLt version or alignment, so
//                         tables store identities
//   cpu_r4                CPU backend, 4 weight rows per inner block
//
// Each family is one descriptor in the runtime's registry (src/kernels/registry.cpp; docs/adding-a-family.md),
// which parses and prints its names, lists its configs and knows what it supports and costs. The constexpr lists
// below are the skinny families' parameters: their instance files, the heuristic, the tuner and the tests all
// enumerate them (kTmaBoxes' 4, 8 and 16 excepted: named lab candidates that the listing skips).
#pragma once

#include <string>
#include <vector>

namespace skinnygemm {

// A family's position in the registry. The enumerators name the built-in families; a family registered after them
// has no enumerator and is found by name (the registry's find_family), so adding one changes no public header.
// 0.2.0 retired the register-ring family (Reg, reg_*): a reg_* name is refused with a message that says so.
enum class Family { Bulk, Tma, Cublaslt, Cpu };

const char* family_name(Family family);

struct WarpLayout {
  int n;  // warps splitting the CTA's rows (16 rows each)
  int k;  // warps splitting the CTA's K range
};

// Compile-time parameters (each (dtype, tile_m, unroll) is one kernel instance).
constexpr int kSkinnyTileM[] = {8, 16, 32, 64};  // the bulk family's token tiles (n8 MMA tiles)
constexpr int kUnroll[] = {2, 4};
// Past tile_m x unroll = 128 no instance is built: the register ring's spilled (ptxas -v: m64_u4 needed 255+
// registers), and the stage ring's 4 x unroll slots of 16 + M rows exceed a block's shared memory at the M the
// 64-token tile serves (M > 32).
constexpr bool instance_listed(int tile_m, int unroll) { return tile_m * unroll <= 128; }
// Run-time parameters (the stage ring runs one warp row: w1x4, w1x8; bulk_fits_shape names the others).
constexpr WarpLayout kWarpLayouts[] = {{1, 4}, {1, 8}, {2, 4}, {4, 2}, {2, 2}, {4, 1}, {8, 1}};
constexpr int kSplitK[] = {1, 2, 4, 8};
constexpr int kMaxSplitK = 8;  // portable thread-block-cluster size
constexpr int kCublasltAlgos = 8;  // heuristic algorithms the tuner measures (cublaslt_a0..a7)
constexpr int kCublasltTorch = -2;  // Config::algo of cublaslt_torch (a baseline, never tuned or selected)
// Config::algo of cublaslt_unsplit: cuBLASLt's first heuristic answer, or where that splits K its first answer that
// does not and whose tile has >= 48 rows of w and >= M / 2 tokens (backends/cuda/cublaslt_unsplit.h; the heuristic's
// cuBLASLt pick at M <= 64).
constexpr int kCublasltUnsplit = -3;
constexpr int kCpuRows[] = {1, 2, 4, 8};
// The TMA family's lists (src/kernels/tma/tma_shape.h has its shared-memory arithmetic).
constexpr int kTmaTileM[] = {8, 16, 32, 64};
constexpr int kTmaRows[] = {16, 32, 64, 128};
constexpr int kTmaBoxes[] = {1, 2, 4, 8, 16};  // 4, 8: 16- and 32-row tiles at token tiles 8, 16; 16: 16-row; unlisted
constexpr int kTmaStages[] = {3, 4, 5, 6, 7, 8, 12, 16, 24};
constexpr int kTmaCtasPerSm[] = {1, 2};
constexpr int kTmaMinUnits[] = {1, 2, 8};
constexpr int kTmaCluster[] = {1, 2, 4, 8};
constexpr int kTmaLead[] = {0, 3, 6, 9, 12};
constexpr int kTmaRowStreamRows[] = {8, 16, 32};

// A cuBLASLt algorithm as cublasLtMatmulAlgoConfigGetAttribute describes it (CUBLASLT_ALGO_CONFIG_* values).
struct CublasltIdentity {
  int id = -1;        // CUBLASLT_ALGO_CONFIG_ID; -1: no algorithm named
  int tile = 0;       // TILE_ID
  int stages = 0;     // STAGES_ID
  int split_k = 1;    // SPLITK_NUM
  int reduction = 0;  // REDUCTION_SCHEME (a single cublasLtReductionScheme_t)
  int swizzle = 0;    // CTA_SWIZZLING
  int custom = 0;     // CUSTOM_OPTION
  int cluster = 0;    // CLUSTER_SHAPE_ID (Hopper thread-block clusters; 0 = auto)
  int inner = 0;      // INNER_SHAPE_ID (0 = undefined)
  bool named() const { return id >= 0; }
};
bool operator==(const CublasltIdentity& a, const CublasltIdentity& b);

struct Config {
  Family family = Family::Cpu;
  int tile_m = 0;   // bulk / tma: largest M this instance handles
  int warps_n = 1;  // bulk
  int warps_k = 1;  // bulk
  int unroll = 0;   // bulk
  int split_k = 1;  // bulk
  int algo = -1;    // cublaslt: heuristic index, -1 = default pick (or lt_identity), kCublasltTorch, kCublasltUnsplit
  int rows = 0;     // cpu: weight rows per inner block; tma: weight rows per tile
  int boxes = 0;    // tma: 64-wide K boxes per stage
  int stages = 0;   // tma: ring stages
  int ctas_per_sm = 0;  // tma
  int min_units = 0;    // tma, stream-K
  int cluster = 0;      // tma: CTAs of a cluster splitting one row tile's K (0: stream-K; 1: one CTA, no split)
  int lead = -1;        // tma lead split: extra stages of each row tile's reducing part (-1: another mode)
  bool row_stream = false;  // tma: the row stream (cluster 1: one CTA per row tile, whole K; its own kernel)
  CublasltIdentity lt_identity;  // cublaslt: the algorithm by identity when lt_identity.named()

  std::string name() const;  // builds a string: not for a per-call path
  // Throws Error naming the part that is wrong ("unknown family 'foo'", "tile m 12 is not built ...").
  static Config parse(const std::string& name);

  int threads() const { return 32 * warps_n * warps_k; }  // bulk CTA size
  int rows_per_cta() const { return 16 * warps_n; }
};

bool operator==(const Config& a, const Config& b);
bool operator!=(const Config& a, const Config& b);

// Every listed config of a family (the cross product of the lists above).
std::vector<Config> listed_configs(Family family);
// Every listed config of every family.
std::vector<Config> all_listed_configs();

}  // namespace skinnygemm
