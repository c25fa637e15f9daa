// Tile, split and shared-memory arithmetic of the skinny kernels, shared by the device code, the launcher
// and the host-only cost model (so this header includes no CUDA header).
#pragma once

#ifdef __CUDACC__
#define SKINNYGEMM_HD __host__ __device__
#else
#define SKINNYGEMM_HD
#endif

namespace skinnygemm {

constexpr int kChunkK = 32;  // K elements per chunk: 4 lanes x 8 elements (16 bytes) per weight row

// Padded row pitch of the FP32 partials so that lanes t = 0..3 (token stride 2) hit different banks.
SKINNYGEMM_HD constexpr int partial_pitch(int warps_n) { return 16 * warps_n + 4; }
SKINNYGEMM_HD constexpr int partial_floats(int tile_m, int warps_n, int warps_k) {
  return warps_k * tile_m * partial_pitch(warps_n);
}
// Pipeline depth of the chunk ring: chunks each warp keeps in flight.
SKINNYGEMM_HD constexpr int ring_stages(int unroll) { return 4 * unroll; }
// 16-byte x vectors each lane stages per chunk: its token of each n8 tile (mma), every token (simt).
SKINNYGEMM_HD constexpr int x_vectors(bool mma, int tile_m) { return mma ? tile_m / 8 : tile_m; }
// Bytes of one ring slot of a warp: two weight rows and the x vectors of 32 lanes.
SKINNYGEMM_HD constexpr int ring_slot_bytes(bool mma, int tile_m) { return (2 + x_vectors(mma, tile_m)) * 512; }
// Dynamic shared memory of a CTA: the warps' chunk rings, then the FP32 partials of one row block.
SKINNYGEMM_HD constexpr int skinny_smem_bytes(bool mma, int tile_m, int warps_n, int warps_k, int unroll) {
  return warps_n * warps_k * ring_stages(unroll) * ring_slot_bytes(mma, tile_m) +
         partial_floats(tile_m, warps_n, warps_k) * 4;
}

// The bulk-copy family (kernels/skinny_bulk.cuh): a CTA-wide ring of 4 x unroll stages of 16 weight rows x
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
