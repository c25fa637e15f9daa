// Tensor-core skinny GEMM family fed by bulk asynchronous copies (cp.async.bulk + mbarrier): same swapped-
// operand MMAs and epilogue as skinny_mma.cuh, but a warp moves a whole stage (16 weight rows x 128 K,
// and its tokens' x) with one copy instruction per row instead of one 16-byte cp.async per lane and row.
//
// NOTE: Nsight Compute on the cp.async family (3648x7168, M = 1, 2026-11-29): DRAM at 50% of peak,
// 4.7 cycles between a warp's instructions and 12.5% occupancy (the rings fill shared memory): the warps
// were busy issuing copies, address arithmetic and waits, not waiting for memory. Bulk copies cut the
// instructions per weight byte by ~30x (docs/kernels.md).
//
// Stage layout in shared memory (per warp, per slot): rows of kStageBytes = 256 bytes padded to a pitch
// of 320 bytes, so that the 8 lanes of a shared-memory phase (rows g, g+1 at 16-byte column t) fall in
// different banks: 16 weight rows, then x rows (tokens 0..kTileM-1).
#pragma once

#include "cuda/kernels/skinny_common.cuh"
#include "cuda/kernels/skinny_mma.cuh"

namespace skinnygemm::cuda {

constexpr int kBulkStageK = 128;                   // K elements per stage
constexpr int kBulkRowBytes = 2 * kBulkStageK;     // 256 bytes of a row per stage
constexpr int kBulkPitch = kBulkRowBytes + 64;     // padded row pitch in shared memory

__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))),
               "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(bar))),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(addr),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          static_cast<unsigned>(__cvta_generic_to_shared(dst))),
      "l"(src), "r"(bytes), "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
      : "memory");
}

// One warp's ring of kStages stages. Stage v of the warp's sequence is (row block v / per_block, stage
// s_begin + v % per_block of its K slice); it lives in slot v % kStages and completes phase
// (v / kStages) & 1 of that slot's mbarrier.
template <int kStages, int kXRows>
struct BulkRing {
  static constexpr int kRows = 16 + kXRows;
  static constexpr int kSlotBytes = kRows * kBulkPitch;
  char* slots;          // kStages x kSlotBytes
  uint64_t* bars;       // kStages mbarriers
  const char* w0;       // row 0 of this warp's tile in its CTA's first row block
  const char* x0;       // x row 0
  long long ldw_bytes, ldx_bytes, block_bytes;
  int w_rows0;          // valid weight rows of the tile in the first row block (n - first row, clamped)
  int rows_per_step;    // rows between consecutive row blocks of this CTA
  int x_rows;           // valid x rows: min(M, kXRows)
  int s_begin, per_block, total, k, lane;

  __device__ __forceinline__ int w_rows(int block) const {
    const int r = w_rows0 - block * rows_per_step;
    return r < 0 ? 0 : (r > 16 ? 16 : r);
  }
  __device__ __forceinline__ int stage_bytes(int stage) const {  // bytes of each row this stage copies
    const int left = (k - stage * kBulkStageK) * 2;
    return left < kBulkRowBytes ? left : kBulkRowBytes;
  }
  // Issues stage v's weight rows (with_x: and its x rows); lane 0 announces the bytes first.
  __device__ __forceinline__ void produce(int v, bool weights, bool with_x) const {
    if (v >= total) return;
    const int block = v / per_block, stage = s_begin + v % per_block;
    const int slot = v % kStages;
    const int bytes = stage_bytes(stage), rows = w_rows(block);
    if (weights && lane == 0) mbar_expect_tx(bars + slot, static_cast<unsigned>((rows + x_rows) * bytes));
    char* dst = slots + slot * kSlotBytes;
    const long long col = static_cast<long long>(stage) * kBulkRowBytes;
    if (weights && lane < rows)
      bulk_copy(dst + lane * kBulkPitch, w0 + block * block_bytes + lane * ldw_bytes + col, bytes, bars + slot);
    if (with_x)
      for (int r = lane; r < x_rows; r += 32)
        bulk_copy(dst + (16 + r) * kBulkPitch, x0 + r * ldx_bytes + col, bytes, bars + slot);
  }
};

template <typename T, int kTileM, int kUnroll>
__global__ void __launch_bounds__(256, 1) skinny_bulk_kernel(const SkinnyParams p) {
  static_assert(kTileM % 8 == 0 && kTileM <= 64, "token tile must be 8..64 in steps of 8 (n8 MMA tiles)");
  constexpr int kTiles = kTileM / 8;
  constexpr int kStages = bulk_stages(kUnroll);
  using Ring = BulkRing<kStages, kTileM>;
  extern __shared__ __align__(128) char bulk_smem[];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wn = warp % p.warps_n, wk = warp / p.warps_n;
  const int warps = p.warps_n * p.warps_k;
  int s_begin, s_end;
  slice_range(p.k_chunks, blockIdx.x * p.warps_k + wk, p.split_k * p.warps_k, s_begin, s_end);  // in stages
  const int blocks =
      (p.row_blocks - static_cast<int>(blockIdx.y) + static_cast<int>(gridDim.y) - 1) / static_cast<int>(gridDim.y);

  Ring ring;
  ring.bars = reinterpret_cast<uint64_t*>(bulk_smem) + warp * kStages;
  ring.slots = bulk_smem + bulk_bars_bytes(warps, kStages) + warp * kStages * Ring::kSlotBytes;
  const int rows_per_cta = 16 * p.warps_n;
  const int row0 = blockIdx.y * rows_per_cta + wn * 16;
  ring.rows_per_step = rows_per_cta * static_cast<int>(gridDim.y);
  ring.w_rows0 = p.n - row0;
  ring.ldw_bytes = p.ldw * 2;
  ring.ldx_bytes = p.ldx * 2;
  ring.block_bytes = static_cast<long long>(ring.rows_per_step) * ring.ldw_bytes;
  ring.w0 = static_cast<const char*>(p.w) + static_cast<long long>(row0 < p.n ? row0 : 0) * ring.ldw_bytes;
  ring.x0 = static_cast<const char*>(p.x);
  ring.x_rows = p.m < kTileM ? p.m : kTileM;
  ring.s_begin = s_begin;
  ring.per_block = s_end - s_begin;
  ring.total = blocks * ring.per_block;
  ring.k = p.k;
  ring.lane = lane;
  float* partials = reinterpret_cast<float*>(bulk_smem + bulk_bars_bytes(warps, kStages) +
                                             warps * kStages * Ring::kSlotBytes);

  if (lane == 0)
    for (int s = 0; s < kStages; ++s) mbar_init(ring.bars + s, 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncwarp();
  // Weights never depend on the previous kernel: in flight before the PDL wait; x after it.
  for (int v = 0; v < kStages - 1; ++v) ring.produce(v, true, false);
  pdl_launch_dependents();
  pdl_wait();
  for (int v = 0; v < kStages - 1; ++v) ring.produce(v, false, true);

  const int pitch = partial_pitch(p.warps_n);
  int v = 0;
  for (int blk = 0; blk < blocks; ++blk) {
    float acc[kTiles][4];
#pragma unroll
    for (int i = 0; i < kTiles; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    for (int s = 0; s < ring.per_block; ++s, ++v) {
      const int slot = v % kStages;
      mbar_wait(ring.bars + slot, static_cast<unsigned>((v / kStages) & 1));
      // Refill the slot consumed one stage ago (every lane passed the __syncwarp below since).
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      ring.produce(v + kStages - 1, true, true);
      const char* base = ring.slots + slot * Ring::kSlotBytes;
      const int valid = ring.stage_bytes(s_begin + s);
#pragma unroll
      for (int sub = 0; sub < kBulkStageK / kChunkK; ++sub) {
        const int col = sub * 64 + 16 * t;
        const bool in = col < valid;  // past K the slot holds stale bytes: use zeros for w and x
        const uint4 zero = make_uint4(0, 0, 0, 0);
        const uint4 wa = in ? *reinterpret_cast<const uint4*>(base + g * kBulkPitch + col) : zero;
        const uint4 wb = in ? *reinterpret_cast<const uint4*>(base + (g + 8) * kBulkPitch + col) : zero;
#pragma unroll
        for (int i = 0; i < kTiles; ++i) {
          const uint4 xv = in ? *reinterpret_cast<const uint4*>(base + (16 + 8 * i + g) * kBulkPitch + col) : zero;
          mma_16816<T>(acc[i], wa.x, wb.x, wa.y, wb.y, xv.x, xv.y);
          mma_16816<T>(acc[i], wa.z, wb.z, wa.w, wb.w, xv.z, xv.w);
        }
      }
      __syncwarp();
    }
    store_mma_partials<kTileM>(partials, acc, pitch, wk, wn, g, t);
    reduce_and_store<T, kTileM>(p, partials, static_cast<int>(blockIdx.y + blk * gridDim.y));
  }
}

}  // namespace skinnygemm::cuda
