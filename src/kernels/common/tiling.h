// Tile, split and shared-memory arithmetic the skinny kernel families share, used by the device code, the launcher
// and the host-only families (so this header includes no CUDA header). The bulk family adds kernels/bulk/tiling.h.
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

}  // namespace skinnygemm
