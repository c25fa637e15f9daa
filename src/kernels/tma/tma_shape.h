// Launch-shape arithmetic of the TMA family, shared by the kernel, its launcher and host-only code (no CUDA
// header here).
#pragma once

#include <cstddef>
#include <cstdint>

namespace skinnygemm::tma {

constexpr int kStageK = 64;            // K elements per stage: one 128-byte row of the 128-byte swizzle
constexpr int kStageBytes = 2 * kStageK;
constexpr int kConsumerWarps = 4;
constexpr int kThreads = 32 * (kConsumerWarps + 1);  // + one producer warp
constexpr int kMaxStages = 32;
constexpr int kBarrierBytes = 4096;    // mbarriers, a flag, the reduction's lane sums; keeps slots 1024-aligned
constexpr int kReduceSlotsOffset = 1024;  // 128 float4 lane sums (2 KB)
// The driver's shared-memory reservation per CTA on sm_90 (cudaDevAttrReservedSharedMemoryPerBlock).
constexpr int kReservedSmemPerCta = 1024;
// The lab's timeline (TmaParams::trace): words per CTA, {entry, after griddepcontrol.wait, exit, SM, first stage
// landed, last stage multiplied, the other parts' sums gathered} (words 4 and 5 split what a CTA does after the wait:
// docs/kernels.md "Session 13"; word 6, written by the lead split's reducers of token tiles 8 and 16 only, splits their
// drain: "Session 19").
constexpr int kTraceWords = 7;
constexpr int kMaxLeadParts = 16;  // the reducer gathers parts - 1 partials (51 parts of 144 rows: 9.6 us at M = 1)

#ifdef __CUDACC__
#define SKINNYGEMM_TMA_HD __host__ __device__
#else
#define SKINNYGEMM_TMA_HD
#endif

// Consumer warps side by side along a stage's rows (16 rows each, at most all four); the others split its K.
SKINNYGEMM_TMA_HD constexpr int row_warps(int rows) { return rows >= 16 * kConsumerWarps ? kConsumerWarps : rows / 16; }

// Which (rows, token tile, boxes per stage) are instantiated (tma_instances.cuh) and accepted (fits()): 1 and 2 boxes
// for every tile; 4 and 8 (lab candidates since session 25) for the 16- and 32-row tiles at token tiles 8 and 16; 16
// (session 38) for the 16-row tile at those token tiles.
constexpr int max_rows_for_boxes(int boxes) { return boxes <= 2 ? 128 : boxes <= 8 ? 32 : boxes == 16 ? 16 : 0; }
constexpr bool boxes_built(int rows, int tile_m, int boxes) {
  return rows <= max_rows_for_boxes(boxes) && (boxes <= 2 || tile_m <= 16);
}

// Shared memory of one CTA: 1024 bytes of alignment slack, the barriers, then stages x (rows + tile_m) rows of
// 128 bytes (weights, then x).
// Cluster split-K adds the reduce-scatter's receive buffer, the lead split and stream-K (cluster 0) with whole-stage
// warps at token tiles <= 16 the other parts' sums: rows x tile_m FP32 each; warps splitting K (rows < 64) their sums
// for the warp-order reduction: (K warps - 1) x rows x tile_m.
constexpr bool gathers_sums(int rows, int tile_m, int cluster, bool lead_split) {
  return cluster > 1 || lead_split || (cluster == 0 && tile_m <= 16 && row_warps(rows) == kConsumerWarps);
}
constexpr int smem_bytes(int rows, int tile_m, int stages, int boxes, int cluster = 1, bool lead_split = false) {
  return 1024 + kBarrierBytes + stages * boxes * (rows + tile_m) * kStageBytes +
         (gathers_sums(rows, tile_m, cluster, lead_split) ? rows * tile_m * 4 : 0) +
         (kConsumerWarps / row_warps(rows) - 1) * rows * tile_m * 4;
}

// The row stream (row_stream.cuh, config _rs): stages of 16 KB of weights, 128 / rows boxes of 64 K; 8-, 16- and 32-row tiles,
// token tiles 8 and 16. Shared memory: 1024 bytes of alignment slack, the barriers, per slot the weights and the x boxes of
// tile_m token rows (1024-byte aligned; the launch passes M, fits() the token tile), then warps 1-3's sums for warp 0.
constexpr int kRowStreamStageBytes = 16384;
SKINNYGEMM_TMA_HD constexpr int row_stream_boxes(int rows) { return kRowStreamStageBytes / (rows * kStageBytes); }
constexpr bool row_stream_built(int rows, int tile_m) { return (rows == 8 || rows == 16 || rows == 32) && tile_m <= 16; }
constexpr int row_stream_smem_bytes(int rows, int tile_m, int stages) {
  return 1024 + 1024 + stages * (kRowStreamStageBytes + (row_stream_boxes(rows) * tile_m * kStageBytes + 1023) / 1024 * 1024) +
         (kConsumerWarps - 1) * (rows / 8) * 4 * 32 * 4;
}

}  // namespace skinnygemm::tma

namespace skinnygemm {
// The ring's shared memory for the config lists (config.cpp): the same arithmetic as tma::smem_bytes.
constexpr int tma_ring_bytes(int rows, int tile_m, int stages, int boxes, int cluster = 1, bool lead_split = false) {
  return tma::smem_bytes(rows, tile_m, stages, boxes, cluster, lead_split);
}
}  // namespace skinnygemm

namespace skinnygemm::tma {

struct Grid {
  int k_stages = 0;
  int tiles = 0;
  long long units = 0;
  int ctas = 0;
  int parts = 0;        // lead split: CTAs per row tile (1: whole tiles)
  int lead_stages = 0;  // lead split: stages of part 0
};

// The stream-K split: every (row tile, K stage) unit of the problem, cut into ctas equal contiguous ranges.
// ctas = min(units, ctas_per_sm x sms, units / min_units) and at least 1.
inline Grid grid_for(long long n, long long k, int rows, int boxes, int ctas_per_sm, int min_units, int sms) {
  Grid g;
  g.k_stages = static_cast<int>((k + kStageK * boxes - 1) / (kStageK * boxes));
  g.tiles = static_cast<int>((n + rows - 1) / rows);
  g.units = static_cast<long long>(g.k_stages) * g.tiles;
  long long c = static_cast<long long>(ctas_per_sm) * sms;
  if (min_units > 1 && g.units / min_units < c) c = g.units / min_units;
  if (c > g.units) c = g.units;
  g.ctas = static_cast<int>(c < 1 ? 1 : c);
  return g;
}

// Cluster split-K: one cluster of `cluster` CTAs per row tile, each with an equal share of the tile's stages.
inline Grid cluster_grid_for(long long n, long long k, int rows, int boxes, int cluster) {
  Grid g;
  g.k_stages = static_cast<int>((k + kStageK * boxes - 1) / (kStageK * boxes));
  g.tiles = static_cast<int>((n + rows - 1) / rows);
  g.units = static_cast<long long>(g.k_stages) * g.tiles;
  g.ctas = g.tiles * cluster;
  return g;
}

// The lead split: P = min(ctas_per_sm x sms / tiles, stages, 16) parts per row tile, one CTA each; part 0 has `lead`
// more stages than each of the others (rounded so that all stages are covered and every part has one). P = 1 when
// the tiles alone fill the grid (no split, like x1).
inline Grid lead_split_grid_for(long long n, long long k, int rows, int boxes, int ctas_per_sm, int lead, int sms) {
  Grid g = cluster_grid_for(n, k, rows, boxes, 1);
  // N = 0 has no tile: one part (an empty grid), not a division by zero (supports() and forced_config("tma") reach
  // here with any problem; a review in session 43 found the crash).
  long long parts = g.tiles > 0 ? static_cast<long long>(ctas_per_sm) * sms / g.tiles : 1;
  if (parts > g.k_stages) parts = g.k_stages;
  if (parts > kMaxLeadParts) parts = kMaxLeadParts;
  if (parts < 1) parts = 1;
  // Part 0: (stages + (P - 1) lead) / P (lead >= 0: at least one stage, as P <= stages); fewer parts until the
  // others keep at least one stage each.
  auto part0 = [&](long long p) { return (g.k_stages + (p - 1) * static_cast<long long>(lead)) / p; };
  while (parts > 1 && g.k_stages - part0(parts) < parts - 1) --parts;
  const long long lead_stages = part0(parts);  // parts == 1: every stage
  g.parts = static_cast<int>(parts);
  g.lead_stages = static_cast<int>(lead_stages);
  g.ctas = static_cast<int>(g.tiles * parts);
  return g;
}

// Workspace of a launch: two FP32 partial tiles per CTA and one counter per row tile.
// The lead split's partials: one slot of rows x tile_m per CTA at most (tiles x (parts - 1) < ctas), for grids of up
// to 2 CTAs per SM: lead_partial_floats(sms) holds every listed lead config.
inline std::size_t lead_partial_floats(int sms) { return static_cast<std::size_t>(2) * sms * 128 * 64; }
constexpr int kMaxCounters = 1 << 20;  // row tiles of one launch (one counter each)
// Whether a launch's polled partials fit that workspace: stream-K's shares and the lead split's other parts take one
// rows x tile_m slot per CTA at most; clusters (reduced in shared memory) and a lead split of one part (whole tiles,
// like x1: N over two row tiles per slot) take none. 49155 rows in 32-row tiles are 1537 such CTAs: 1537 x 32 x 64
// floats exceed the 132-SM workspace, and supports() said yes to them before session 32 (the launch threw).
inline bool partials_fit(const Grid& g, int rows, int tile_m, int cluster, bool lead_split, int sms) {
  if (cluster != 0 || (lead_split && g.parts <= 1)) return true;
  return static_cast<std::size_t>(g.ctas) * rows * tile_m <= lead_partial_floats(sms);
}
inline std::size_t partial_floats(int ctas, int rows, int tile_m) {
  return static_cast<std::size_t>(ctas) * 2 * rows * tile_m;
}

}  // namespace skinnygemm::tma
