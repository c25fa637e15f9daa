// The mma family: the swapped-operand MMAs of kernels/common/mma_fragments.cuh fed by each warp's cp.async
// chunk ring in shared memory (kernels/common/skinny_common.cuh, ChunkRing).
#pragma once

#include "kernels/common/mma_fragments.cuh"

namespace skinnygemm::cuda {

// kTileM: tokens per launch (8, 16, 32, 64) = kTileM / 8 MMA column tiles.
// kUnroll: loop unroll; the chunk ring is ring_stages(kUnroll) deep.
template <typename T, int kTileM, int kUnroll>
__global__ void __launch_bounds__(256, 1) skinny_mma_kernel(const SkinnyParams p) {
  static_assert(kTileM % 8 == 0 && kTileM <= 64, "token tile must be 8..64 in steps of 8 (n8 MMA tiles)");
  static_assert(kUnroll >= 1 && kUnroll <= 8, "unroll is 1..8 chunks");
  constexpr int kTiles = kTileM / 8;
  constexpr int kStages = ring_stages(kUnroll);
  extern __shared__ uint4 smem[];

  const WarpPlace place = warp_place(p);
  auto ring = make_ring<T, kStages, kTiles>(p, place, smem, 8, place.g);  // lane's token: 8i + g
  ring.prologue();
  float* partials = reinterpret_cast<float*>(smem + p.warps_n * p.warps_k * kStages * decltype(ring)::kSlotVecs);
  const int pitch = partial_pitch(p.warps_n);

  int slot = 0;
  for (int blk = 0; blk < place.blocks; ++blk) {
    float acc[kTiles][4];
#pragma unroll
    for (int i = 0; i < kTiles; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    for (int base = place.c_begin; base < place.c_end; base += kUnroll) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) {
        if (base + j < place.c_end) {
          uint4 wa, wb, xv[kTiles];
          ring.read(slot, wa, wb, xv);
          ring.issue_next();  // refills the slot this lane emptied one chunk ago
          slot = slot + 1 == kStages ? 0 : slot + 1;
#pragma unroll
          for (int i = 0; i < kTiles; ++i) {
            mma_16816<T>(acc[i], wa.x, wb.x, wa.y, wb.y, xv[i].x, xv[i].y);
            mma_16816<T>(acc[i], wa.z, wb.z, wa.w, wb.w, xv[i].z, xv[i].w);
          }
        }
      }
    }
    store_mma_partials<kTileM>(partials, acc, pitch, place.wk, place.wn, place.g, place.t);
    reduce_and_store<T, kTileM>(p, partials, static_cast<int>(blockIdx.y + blk * gridDim.y));
  }
  decltype(ring)::drain();  // the zero-filling copies past the last row block
}

}  // namespace skinnygemm::cuda
