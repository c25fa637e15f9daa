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

}  // namespace skinnygemm
