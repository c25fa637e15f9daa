// Tensor-core skinny GEMM family fed by a CTA-wide ring of bulk asynchronous copies (cp.async.bulk + mbarrier),
// v6 "stage ring" in docs/kernels.md: the same swapped-operand MMAs and epilogue as kernels/common/mma_fragments.cuh.
//
// NOTE: why this shape (tools/probes/stage_prefetch.cu, H200, 2026-11-29): a dependent GEMM must wait for the
// previous kernel (griddepcontrol.wait) before it reads x, and a register ring holds only a few KB per warp in
// flight at that point (1.5-2 us lost per call). Here a CTA fills *every* slot of its ring with weights
// before the wait (36-72 KB), lets the next kernel in at its start, and is small enough that 2-3 CTAs fit on
// an SM, so the next kernel's CTAs land their weights while this one drains. Measured at M = 1 against the
// register ring in the same harness: 1536x7168 6.64 vs 8.09 us, 896x7168 3.88 vs 5.91, 144x7168 1.66 vs
// 3.06, 2304x1536 2.55 vs 4.60, 3648x7168 14.20 vs 14.78.
//
// Decomposition: a CTA owns one 16-row block (grid.y = row blocks, not persistent: a persistent grid would
// keep the next kernel's CTAs off the SMs) and a K slice (grid.x = split_k CTAs of a cluster). The slice is
// cut into stages of 16 rows x 256 K; stage j lives in slot j % kSlots, is consumed by warp j % warps_k,
// which then refills the slot with stage j + kSlots (kSlots % warps_k == 0, so a slot has one owner warp).
// A slot holds the 16 weight rows, then min(M, kTileM) x rows; its mbarrier expects both, the weight copies
// are issued before the PDL wait and the x copies after it.
#pragma once

#include "kernels/common/skinny_common.cuh"
#include "kernels/bulk/tiling.h"
#include "kernels/common/mbarrier.cuh"
#include "kernels/common/mma_fragments.cuh"

namespace skinnygemm::cuda {

constexpr int kBulkRowBytes = 2 * kBulkChunkK;  // 512 bytes of a row per stage

// Split-K across the cluster without holding it (skinny_bulk_kernel's kLeaderReduce; measured by
// tools/probes/cluster_reduce.cu, kernels/bulk/tiling.h bulk_leader_reduce): ranks > 0 push their CTA's sums
// into rank 0's shared memory, arrive on its mbarrier (every thread, release at cluster scope) and exit; rank 0
// waits once and adds in rank order, 0 + rank 0 + rank 1 + ..., the order reduce_and_store uses, so the bits
// are the same. reduce_and_store instead holds every CTA for two cluster barriers (~1 us at split 4-8, v6 in
// docs/kernels.md). Needs cluster_arrive_early() at the kernel's start, after recv_bar was initialized with
// (split_k - 1) x blockDim.x arrivals.
__device__ __forceinline__ void cluster_arrive_early() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

template <typename T, int kTileM>
__device__ __forceinline__ void reduce_to_leader(const SkinnyParams& p, float* partials, float* recv,
                                                 uint64_t* recv_bar, int row_block) {
  namespace cg = cooperative_groups;
  constexpr int kRows = 16;  // one warp row (w1xK)
  constexpr int kOutputs = kTileM * kRows;
  const int pitch = partial_pitch(1);
  const int slice_floats = kTileM * pitch;
  __syncthreads();
  for (int i = threadIdx.x; i < kOutputs; i += blockDim.x) {  // warps of this CTA, in warp order
    const int off = (i / kRows) * pitch + i % kRows;
    float s = partials[off];
    for (int wk = 1; wk < p.warps_k; ++wk) s += partials[wk * slice_floats + off];
    partials[off] = s;
  }
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  cluster_wait();  // every CTA of the cluster has started: rank 0's mbarrier is initialized
  if (rank != 0) {
    float* dst = cluster.map_shared_rank(recv, 0) + (rank - 1) * kOutputs;
    for (int i = threadIdx.x; i < kOutputs; i += blockDim.x) dst[i] = partials[(i / kRows) * pitch + i % kRows];
    const unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(recv_bar));
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote) : "r"(local));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
    return;
  }
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(recv_bar));
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(addr)
      : "memory");
  const int row0 = row_block * kRows;
  for (int i = threadIdx.x; i < kOutputs; i += blockDim.x) {
    const int token = i / kRows, row = i % kRows;
    if (token >= p.m || row0 + row >= p.n) continue;
    float s = 0.f;
    s += partials[token * pitch + row];
    for (int r = 1; r < p.split_k; ++r) s += recv[(r - 1) * kOutputs + i];
    store_output<T>(p, token, row0 + row, s);
  }
}

// kLeaderReduce: split-K through reduce_to_leader (the launch adds bulk_leader_bytes of shared memory and a
// cluster of split_k CTAs). The library sets it for tiles 8 and 16 (kernels/bulk/tiling.h, bulk_leader_reduce, with the
// measurements); tiles 32 and 64 leave it false and carry none of that code (the m64 instance spilled, ptxas -v).
template <typename T, int kTileM, int kUnroll, bool kLeaderReduce = false>
__global__ void __launch_bounds__(256) skinny_bulk_kernel(const SkinnyParams p) {
  static_assert(kTileM % 8 == 0 && kTileM <= 64, "token tile must be 8..64 in steps of 8 (n8 MMA tiles)");
  constexpr int kTiles = kTileM / 8;
  constexpr int kSlots = bulk_slots(kUnroll);
  static_assert(kSlots * 8 <= kBulkBarsBytes, "one mbarrier per slot");
  extern __shared__ __align__(128) char bulk_smem[];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = p.warps_k;
  const int g = lane >> 2, t = lane & 3;
  const int x_rows = bulk_x_rows(kTileM, p.m);
  const int slot_bytes = bulk_slot_bytes(kTileM, p.m);
  uint64_t* bars = reinterpret_cast<uint64_t*>(bulk_smem);
  char* slots = bulk_smem + kBulkBarsBytes;
  float* partials = reinterpret_cast<float*>(slots + kSlots * slot_bytes);
  int s0, s1;  // this CTA's stages of K (p.k_chunks counts 256-wide stages for this family)
  slice_range(p.k_chunks, blockIdx.x, p.split_k, s0, s1);
  const int stages = s1 - s0;
  const int row0 = static_cast<int>(blockIdx.y) * 16;
  const int rows = min(16, p.n - row0);
  const long long ldw_bytes = p.ldw * 2, ldx_bytes = p.ldx * 2;
  const char* w_rows = static_cast<const char*>(p.w) + row0 * ldw_bytes;
  const char* x_rows_ptr = static_cast<const char*>(p.x);

  // Early: the next kernel's CTAs take the free SM slots now and land their own weights during our tail
  // (the probe measured early ahead of late for this design: 1536x7168 6.64 vs 6.79 us).
  if (!p.late_trigger) pdl_launch_dependents();
  const bool leader_reduce = kLeaderReduce && p.split_k > 1;
  if (leader_reduce && cooperative_groups::this_cluster().num_blocks() != static_cast<unsigned>(p.split_k))
    __trap();  // every CTA would be rank 0 of its own cluster and wait forever for the others' sums
  float* recv = reinterpret_cast<float*>(reinterpret_cast<char*>(partials + partial_floats(kTileM, 1, warps)) + 16);
  uint64_t* recv_bar = reinterpret_cast<uint64_t*>(recv) - 2;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kSlots; ++i) mbar_init(bars + i, 1);
    if (leader_reduce) mbar_init(recv_bar, (p.split_k - 1) * blockDim.x);
  }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  if (leader_reduce) cluster_arrive_early();

  auto stage_bytes = [&](int j) {  // bytes of each row stage j copies (the last stage of K may be short)
    const int left = (p.k - (s0 + j) * kBulkChunkK) * 2;
    return left < kBulkRowBytes ? left : kBulkRowBytes;
  };
  // Stage j's weight rows into its slot; lane 0 first announces the weight and x bytes the slot will get.
  auto produce_w = [&](int j) {
    if (j >= stages) return;
    uint64_t* bar = bars + j % kSlots;
    const int bytes = stage_bytes(j);
    if (lane == 0) mbar_expect_tx(bar, static_cast<unsigned>((rows + x_rows) * bytes));
    __syncwarp();
    char* dst = slots + (j % kSlots) * slot_bytes;
    const long long col = static_cast<long long>(s0 + j) * kBulkRowBytes;
    if (lane < rows) bulk_copy(dst + lane * kBulkPitchBytes, w_rows + lane * ldw_bytes + col, bytes, bar);
  };
  auto produce_x = [&](int j) {
    if (j >= stages) return;
    char* dst = slots + (j % kSlots) * slot_bytes + 16 * kBulkPitchBytes;
    const long long col = static_cast<long long>(s0 + j) * kBulkRowBytes;
    for (int r = lane; r < x_rows; r += 32)
      bulk_copy(dst + r * kBulkPitchBytes, x_rows_ptr + r * ldx_bytes + col, stage_bytes(j), bars + j % kSlots);
  };
  // Weights never depend on the previous kernel: every slot is in flight before the wait; x after it.
  for (int j = warp; j < kSlots; j += warps) produce_w(j);
  pdl_wait();
  for (int j = warp; j < kSlots; j += warps) produce_x(j);

  float acc[kTiles][4];
#pragma unroll
  for (int i = 0; i < kTiles; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  for (int j = warp; j < stages; j += warps) {
    mbar_wait(bars + j % kSlots, static_cast<unsigned>((j / kSlots) & 1));
    const char* base = slots + (j % kSlots) * slot_bytes;
    const int valid = stage_bytes(j);
#pragma unroll
    for (int sub = 0; sub < kBulkChunkK / kChunkK; ++sub) {
      const int col = sub * 64 + 16 * t;
      const bool in = col < valid;  // past K the slot holds stale bytes: zeros for w and x
      const uint4 wa = in ? *reinterpret_cast<const uint4*>(base + g * kBulkPitchBytes + col) : zero;
      const uint4 wb = in ? *reinterpret_cast<const uint4*>(base + (g + 8) * kBulkPitchBytes + col) : zero;
#pragma unroll
      for (int i = 0; i < kTiles; ++i) {
        const int token = 8 * i + g;  // rows past the staged x rows are not in the slot: zeros
        const uint4 xv = in && token < x_rows
                             ? *reinterpret_cast<const uint4*>(base + (16 + token) * kBulkPitchBytes + col)
                             : zero;
        mma_16816<T>(acc[i], wa.x, wb.x, wa.y, wb.y, xv.x, xv.y);
        mma_16816<T>(acc[i], wa.z, wb.z, wa.w, wb.w, xv.z, xv.w);
      }
    }
    __syncwarp();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // our reads before the copies' writes
    produce_w(j + kSlots);
    produce_x(j + kSlots);
  }
  if (p.late_trigger) pdl_launch_dependents();
  // Weight rows past N were never copied: those outputs hold stale sums and reduce_and_store skips them.
  store_mma_partials<kTileM>(partials, acc, partial_pitch(1), warp, 0, g, t);
  if constexpr (kLeaderReduce) {
    if (leader_reduce) {
      reduce_to_leader<T, kTileM>(p, partials, recv, recv_bar, static_cast<int>(blockIdx.y));
      return;
    }
  }
  reduce_and_store<T, kTileM>(p, partials, static_cast<int>(blockIdx.y));
}

}  // namespace skinnygemm::cuda
