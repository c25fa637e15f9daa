// Tile and shared-memory arithmetic of the bulk family (the stage ring), shared by its kernel, its launcher and
// its host-only descriptor (no CUDA header).
#pragma once

#include "kernels/common/tiling.h"

namespace skinnygemm {

// The bulk-copy family (kernels/bulk/kernel.cuh): a CTA-wide ring of 4 x unroll stages of 16 weight rows x
// 256 K (and the tokens' x rows at the same K); rows padded to 576 bytes. Shared memory depends on M: only
// min(M, tile_m) x rows are staged.
constexpr int kBulkChunkK = 256;
constexpr int kBulkPitchBytes = 2 * kBulkChunkK + 64;
constexpr int kBulkBarsBytes = 128;  // up to 16 slot mbarriers
SKINNYGEMM_HD constexpr int bulk_slots(int unroll) { return 4 * unroll; }
SKINNYGEMM_HD constexpr int bulk_x_rows(int tile_m, int m) { return m < tile_m ? m : tile_m; }
SKINNYGEMM_HD constexpr int bulk_slot_bytes(int tile_m, int m) { return (16 + bulk_x_rows(tile_m, m)) * kBulkPitchBytes; }
// Shared memory the leader reduction adds (skinny_bulk_kernel's kLeaderReduce): an mbarrier, then the sums the
// other split_k - 1 CTAs of the cluster push into rank 0.
SKINNYGEMM_HD constexpr int bulk_leader_bytes(int tile_m, int split_k) { return 16 + (split_k - 1) * tile_m * 16 * 4; }
SKINNYGEMM_HD constexpr int bulk_smem_bytes(int tile_m, int m, int warps_k, int unroll) {
  return kBulkBarsBytes + bulk_slots(unroll) * bulk_slot_bytes(tile_m, m) + partial_floats(tile_m, 1, warps_k) * 4;
}
// Token tiles whose split-K goes through the leader reduction. Measured on the H200 (tools/probes/
// cluster_reduce.cu, 85bb96e, tile 8): bitwise equal to the cluster-barrier reduction at every split, and faster
// where split-K wins: 144x7168 M = 1 2.87 -> 2.45 us, 896x7168 5.61 -> 4.96, 104x16384 2.96 -> 2.69. Tiles 32 and
// 64 keep the barrier reduction (with both in one instance the m64 kernel spilled, ptxas -v).
SKINNYGEMM_HD constexpr bool bulk_leader_reduce(int tile_m) { return tile_m <= 16; }
SKINNYGEMM_HD constexpr int bulk_launch_smem_bytes(int tile_m, int m, int warps_k, int unroll, int split_k) {
  return bulk_smem_bytes(tile_m, m, warps_k, unroll) +
         (bulk_leader_reduce(tile_m) && split_k > 1 ? bulk_leader_bytes(tile_m, split_k) : 0);
}

}  // namespace skinnygemm
