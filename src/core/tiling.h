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
// Pipeline depth of the weight ring: chunks each warp keeps in flight (1 KB each).
SKINNYGEMM_HD constexpr int weight_stages(int unroll) { return 4 * unroll; }
// Dynamic shared memory of a CTA: the warps' weight rings, reused for the FP32 partials afterwards.
SKINNYGEMM_HD constexpr int skinny_smem_bytes(int tile_m, int warps_n, int warps_k, int unroll) {
  const int ring = warps_n * warps_k * weight_stages(unroll) * 1024;
  const int part = partial_floats(tile_m, warps_n, warps_k) * 4;
  return ring > part ? ring : part;
}

}  // namespace skinnygemm
