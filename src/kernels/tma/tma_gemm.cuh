// The TMA family: y[M,N] = x[M,K] w[N,K]^T for M <= 64, one kernel for every shape.
//
// Why this design (docs/kernels.md, "Session 6"): a projection in a decode step is a dependent kernel: it may
// read x only after the previous kernel finished (griddepcontrol.wait), but its weights never depend on
// anything. The dependent-chain probe (lab probe `chain`) runs a chain of such kernels as fast as the same
// streaming with no dependency once every CTA has its whole shared-memory ring of weights requested before
// the wait and is small enough that the next kernel's CTAs fit beside it. This kernel is that probe with a
// GEMM inside:
//   - one producer warp issues one TMA copy per stage (R weight rows x kBoxes x 64 K, 128-byte swizzle) into a
//     ring of S slots, every slot before griddepcontrol.wait, and the stage's x tile (tile_m tokens x kBoxes x 64 K,
//     zero filled past M and K by the copy engine) after it. Where K is a multiple of 64 and a stage has several
//     boxes, the copy is one 3D box of a [K / 64][rows][64] view (if the driver takes it); else one 2D box per 64 K.
//     Each copy costs the stream ~24 ns: the 16-row one-CTA-per-tile ring on 2112 x 7168 ran 13.6 us with two 2D
//     copies of w and two of x per stage, 11.0 with one 3D copy each, and the fused step 34-45 us less at M = 1-16
//     (docs/kernels.md "Session 25");
//   - four consumer warps multiply the slot: one warpgroup's wgmma on 64- and 128-row tiles (both operands read from the
//     swizzled slot by the tensor cores, kernels/tma/wgmma.cuh), elsewhere ldmatrix and mma.sync m16n8k16 with the
//     weights as the 16-row operand (rows on the MMA's M side, tokens on its N side), FP32 accumulators in
//     registers; tiles of 64 and 128 rows split the rows over the warps, tiles of 16 and 32 rows also split each
//     stage's K steps (4 and 2 warps per row block), summed through shared memory in warp order at the end of the
//     tile;
//   - split-K with a lead part (config _c<ctas per SM>_d<lead>): each row tile is cut along K into P parts, one
//     CTA each; part 0, the reducer, has `lead` more stages than the others, so that the others have handed off
//     their FP32 partials (a released counter, or words polled for a sentinel) before it needs them, and its
//     producer warp, idle after its last copy, sums them into shared memory while the consumers multiply the
//     last stages (the stream-K fix-up below cost 2.7-3.3 us per call at the end of the kernel, where the L2 is
//     busy with the next kernel's ring). Faster alone, slower in the whole step: not the first cut
//     (docs/kernels.md "Session 7");
//   - one CTA per row tile over the whole K (config x1: no split at all; 16-row tiles give 2112 rows 132 CTAs),
//     or work split stream-K style: the (row tile x K stage) units of the whole problem are cut into equal
//     contiguous ranges, one per CTA, so every SM streams the same bytes for any N. A row tile whose stages
//     fall to several CTAs is reduced by the last of them to arrive (a counter per tile), which sums the FP32
//     partials in CTA order: the same inputs give the same bits whoever arrives last; no atomics on values.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/common/mbarrier.cuh"
#include "kernels/common/output_segments.cuh"
#include "kernels/tma/ptx.cuh"
#include "kernels/tma/tma_params.cuh"
#include "kernels/tma/tma_shape.h"
#include "kernels/tma/wgmma.cuh"

namespace skinnygemm::tma {

// Register caps: 128 per thread (3 CTAs of 160 threads per SM: ours, and room for the next kernel's) for token
// tiles 8 and 16, and for 32 and 64 on 64-row tiles, which fit since wgmma (124 / 128 registers, no spills, ptxas -v);
// 204 (2 CTAs) for the other tiles of 32 and 64 tokens, whose accumulators and reduction spilled under 128 (measured
// under mma.sync; the 128-row tiles' wgmma, session 23, still uses 168 and spills at 64 tokens). With 2
// CTAs per SM a grid of two per SM leaves the next kernel no room and a chain of them cannot overlap: the 64-row
// tiles' first cuts at M = 64 ran 0.3-10.3 us faster with room for a third (2112 x 7168 25.16 -> 14.86 us on a
// 69 KB ring; docs/kernels.md "Session 22", part 4).
// kAblate (probes only; the library builds 0): 1 = every part stores y directly with no split reduction (wrong
// results where a tile is split: timing only), 2 = the ring alone (no MMA, no epilogue).
// kBoxes: 64-wide K boxes per stage (a stage reads kBoxes x 128 contiguous bytes of each of its rows).
template <typename T, int kRows, int kTileM, int kBoxes = 1, int kAblate = 0>
__global__ void __launch_bounds__(kThreads, kTileM >= 32 && kRows != 64 ? 2 : 3)
    tma_gemm_kernel(const __grid_constant__ CUtensorMap w_map, const __grid_constant__ CUtensorMap x_map,
                    const TmaParams p) {
  constexpr int kRowWarps = row_warps(kRows);           // warps side by side along the rows of a stage
  constexpr int kKWarps = kConsumerWarps / kRowWarps;   // warps side by side along its K steps
  constexpr int kWarpRows = kRows / kRowWarps;          // rows of a stage each consumer warp multiplies
  constexpr int kMt = kWarpRows / 16;                   // 16-row MMA tiles per warp
  constexpr int kNt = kTileM / 8;                       // 8-token MMA tiles
  constexpr int kSteps = kBoxes * kStageK / 16;         // K steps of 16 per stage
  constexpr unsigned kWBox = kRows * kStageBytes, kXBox = kTileM * kStageBytes;
  constexpr unsigned kWBytes = kBoxes * kWBox, kXBytes = kBoxes * kXBox;
  static_assert(kWarpRows % 16 == 0 && kTileM % 8 == 0 && kTileM <= 64, "rows: 16, 32, 64 or 128; token tile 8..64");
  static_assert(kSteps % kKWarps == 0, "every K warp takes the same number of K steps");
  // The 64- and 128-row tiles multiply with wgmma (kernels/tma/wgmma.cuh): per 64 rows of the tile (acc[mt]) the
  // warpgroup's four warps hold 16 rows each, as mma.sync's fragments. Session 22, same call: 0.1-0.3 us faster alone at
  // M <= 16 and 0.2-2.1 us at M = 32-64 on the Kimi-K3 shapes, the step 8-38 us faster at M = 1-16 (docs/kernels.md
  // "Session 22"). 128-row tiles since session 23 (two wgmma per K step): 0.6-2.5 us faster than mma.sync, whose four
  // warps each read the whole x tile per K step, and still 15-40% behind 64-row tiles at 32 / 64 tokens (6288 x 7168:
  // 29.44 / 38.20 us against 25.66 / 30.84; docs/kernels.md "Session 23", part 4).
  constexpr bool kWgmma = (kRows == 64 || kRows == 128) && kKWarps == 1;
  static_assert(kWgmma || kMt == 1, "the ldmatrix / mma.sync path (16- and 32-row tiles) gives each warp one 16-row tile");
  // An accumulator's row within the tile: 64-row block mt's rows 16 w + g4 (+ 8) sit in warp w (wgmma's layout; mma.sync
  // gives warp_row w the same rows of its single 16-row tile, kMt = 1).
  auto row_in_tile = [](int warp_row, int mt, int g4, int e) { return mt * 64 + warp_row * 16 + g4 + (e >> 1) * 8; };

  extern __shared__ char smem_raw[];
  char* smem = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  unsigned* last_flag = reinterpret_cast<unsigned*>(empty + kMaxStages);
  float4* reduce_slots = reinterpret_cast<float4*>(smem + kReduceSlotsOffset);  // 128 lane sums of a reduction
  char* slots = smem + kBarrierBytes;
  const int S = p.stages;
  auto slot_w = [&](int s) { return slots + s * (kWBytes + kXBytes); };
  auto slot_x = [&](int s) { return slots + s * (kWBytes + kXBytes) + kWBytes; };

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int warp_row = warp % kRowWarps, warp_k = warp / kRowWarps;
  const int ctas = static_cast<int>(gridDim.x), g = static_cast<int>(blockIdx.x);
  // Stream-K: the CTA's share of all units. Cluster split-K: cluster g / cluster owns row tile g / cluster, and
  // its CTA of rank g % cluster the rank-th share of the tile's stages.
  // Lead split: part 0 of tile g / parts has stages [0, lead_stages), part j > 0 its share of the rest.
  const int rank = g % p.cluster;
  // Each tile's parts side by side in CTA order. The reducers placed after all other parts measured no better alone
  // (docs/kernels.md "Session 7"). In session 33 (call 1, same binary, two rounds) they cost the fused step 120-130 us at
  // M = 8 and 16, and placed first 325-390 us, though the reducers-last order was 0.5-0.9 us faster alone on 6288 and
  // 6016 x 7168.
  const int part = p.parts > 1 ? g % p.parts : 0, lead_tile = p.parts > 1 ? g / p.parts : 0;
  // The partial slot of part j > 0 of the lead split's tile.
  auto lead_slot = [&](int j) { return static_cast<long long>(lead_tile) * (p.parts - 1) + j - 1; };
  auto lead_split_stage = [&](int j) {  // first stage of part j (j = parts: the end)
    return j == 0 ? 0 : p.lead_stages + (j - 1) * (p.k_stages - p.lead_stages) / (p.parts - 1);
  };
  long long u0, u1;
  if (p.parts > 1) {
    const long long base = static_cast<long long>(lead_tile) * p.k_stages;
    u0 = base + lead_split_stage(part), u1 = base + lead_split_stage(part + 1);
  } else if (p.cluster > 1) {
    const long long base = static_cast<long long>(g / p.cluster) * p.k_stages;
    u0 = base + static_cast<long long>(rank) * p.k_stages / p.cluster;
    u1 = base + static_cast<long long>(rank + 1) * p.k_stages / p.cluster;
  } else {
    u0 = first_unit(g, p.units, ctas), u1 = first_unit(g + 1, p.units, ctas);
  }
  const int count = static_cast<int>(u1 - u0);
  // The CTAs whose partials this CTA adds to its last tile, itself included (0: none), and the workspace slot of the
  // first other one (part j at gather_base + j - 1). The lead split: part 0 of each tile gathers its other parts.
  // Stream-K at token tiles <= 16 with whole-stage warps (handoff 1, which the launcher sets up to M = 2: at M = 16 the
  // shares' 4-byte stores lost 5-10%, tma_launch.cu): the CTA whose range holds a tile's first stage
  // owns the tile; where its range ends inside that tile it gathers the CTAs after it, each of which published its
  // share of the tile (the first segment of its range) as polled words in its own slot (g) and went on without
  // waiting. Session 24's probe (tools/probes/tma_family.cu, ring alone / without the split reduction / whole): the
  // released counter at every tile end cost stream-K 2.2-2.7 us on 7168 x 14336 and 20480 x 7168, 2.3 on 6288 x 7168
  // and 2.4 on 2112 x 7168 at M = 1, 3.9 at M = 16 (the consumers wait for an L2 round trip per tile end, the ring full).
  // The owners' ranges lengthened by 1-4 stages so that the shares they gather are published earlier (session 34, call 2,
  // a lab bit since deleted) lost: 7168 x 14336 +0.1-0.3 us at M = 1-2 and +1.0-1.6 at M = 16, 20480 x 7168 +0.5-0.7; only
  // 6288 x 7168 at M = 1 gained 0.2 (docs/kernels.md "Session 34"): the late share is not what the reduction costs.
  // Built for whole-stage warps (the K warps' reduce buffer sits where the gathered sums go) at the token tiles of the
  // polled handoff (<= 16; in the 32-token 128-row instance it added spills, ptxas -v).
  constexpr bool kPolledStreamK = kKWarps == 1 && kTileM <= 16;
  int gather_parts = 0;
  long long gather_base = 0;
  if (p.parts > 1) {
    if (part == 0) gather_parts = p.parts, gather_base = lead_slot(1);
  } else if (kPolledStreamK && p.handoff == 1 && p.cluster == 1 && u1 % p.k_stages != 0 &&
             (u1 - 1) / p.k_stages * p.k_stages >= u0) {
    const long long tail_u0 = (u1 - 1) / p.k_stages * p.k_stages;  // the last tile's first stage is ours
    gather_parts = owner_cta(tail_u0 + p.k_stages - 1, p.units, ctas) - g + 1;
    gather_base = g + 1;
  }
  // Lead split: the other parts' sums [token][row] (tokens < M), added by the producer warp in part order.
  float* others_sum = reinterpret_cast<float*>(slots + S * (kWBytes + kXBytes));
  uint64_t* others_ready = empty + kMaxStages + 1;  // after last_flag
  // Cluster split-K: complete when every rank's sums of this CTA's slice of the tile are in.
  uint64_t* recv_full = empty + kMaxStages + 2;
  uint64_t* gather_bar = empty + kMaxStages + 3;  // the bulk gather's bytes (bulk_gather below)
  const bool cluster = p.cluster > 1;
  const bool no_reduction = ((p.ablate & 2) && p.parts > 1) || ((p.ablate & 4) && cluster) ||
                            ((p.ablate & 8) && p.parts <= 1 && !cluster);
  // The lead split's reducer of a two-part tile at the polled handoff reads the other part's sums with one bulk copy
  // into shared memory, issued by the copying lane after its last weight copy, and polls only words that were still the
  // sentinel: against the producer warp's polled loads (8 per lane at M = 16), the fused step 103-117 / 156-170 /
  // 170-177 us faster at M = 1 / 8 / 16 in the same call (session 26, two rounds; issued 2 or 4 copies before the last
  // it gained less: docs/kernels.md "Session 26"). Up to 8 float4 groups per lane (rows x token tile <= 1024).
  const bool bulk_gather = kTileM <= 16 && kRows * kTileM <= 1024 && kAblate == 0 && !no_reduction && p.parts > 1 &&
                           gather_parts == 2 && p.handoff == 1;

  if (p.trace && threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    trace_now(p, 0);
    p.trace[static_cast<long long>(kTraceWords) * g + 3] = sm;
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(full + s, 1), mbar_init(empty + s, kConsumerWarps);
    mbar_init(others_ready, 32);
    mbar_init(gather_bar, 1);
    if (cluster) {  // our own arrival now; the phase completes with the bytes: rows x tokens x 4 from the whole cluster
      mbar_init(recv_full, 1);
      mbar_expect_tx(recv_full, static_cast<unsigned>(kRows * (p.m < kTileM ? p.m : kTileM) * 4));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  // The peers may signal recv_full only once it is initialised: arrive now, wait just before the first remote store
  // (by then every CTA of the cluster arrived long ago, so the wait costs nothing on the path).
  if (cluster) cluster_arrive();
  // The next kernel's CTAs may take the free room on the SMs now and fill their own rings during our tail. (Letting them
  // in only once a CTA had multiplied its first or third stage, as CUTLASS's low-latency GEMM lets its dependents in
  // after about half its K tiles are loaded, cost the step 171-472 us: docs/kernels.md "Session 14".)
  pdl_launch_dependents();

  // A position in this CTA's range of units, advanced without divisions (they cost ~100 instructions each).
  struct Unit {
    int tile, ks;
  };
  const Unit first = {static_cast<int>(u0 / p.k_stages), static_cast<int>(u0 % p.k_stages)};
  auto next = [&](Unit& u) {
    if (++u.ks == p.k_stages) u.ks = 0, ++u.tile;
  };

  auto load_w = [&](int s, const Unit& u, uint64_t policy) {
    if (p.ablate & 16)
      return tma_load_hint(slot_w(s), &w_map, full + s, 0, (u.tile * p.k_stages + u.ks) * (kBoxes * kRows), policy);
    if (kBoxes > 1 && p.box3d)
      return tma_load_3d_hint(slot_w(s), &w_map, full + s, u.tile * kRows, u.ks * kBoxes, policy);
#pragma unroll
    for (int b = 0; b < kBoxes; ++b)
      tma_load_hint(slot_w(s) + b * kWBox, &w_map, full + s, (u.ks * kBoxes + b) * kStageK, u.tile * kRows, policy);
  };
  auto load_x = [&](int s, const Unit& u) {
    if (kBoxes > 1 && p.box3d) return tma_load_3d(slot_x(s), &x_map, full + s, 0, u.ks * kBoxes);
#pragma unroll
    for (int b = 0; b < kBoxes; ++b) tma_load(slot_x(s) + b * kXBox, &x_map, full + s, (u.ks * kBoxes + b) * kStageK, 0);
  };

  if (warp == kConsumerWarps) {  // producer
    if (lane == 0) {
      const int ahead = count < S ? count : S;
      // Weights are read once: their lines leave the L2 first, so that x, the partials and the next kernel's input
      // outlive the stream (the step 36-68 us faster at M = 1-16; prefetching 4 or more stages past the ring into the
      // L2 before the wait cost it 192-2173 us: docs/kernels.md "Session 14").
      const uint64_t policy = evict_first_policy();
      Unit u = first;
      const bool no_x = p.ablate & 1;
      const unsigned stage_bytes = kWBytes + (no_x ? 0u : kXBytes);
      for (int i = 0; i < ahead; ++i, next(u)) {  // weights never depend on the previous kernel: all before the wait
        mbar_expect_tx(full + i, stage_bytes);
        load_w(i, u, policy);
      }
      pdl_wait();
      trace_now(p, 1);
      Unit ux = first;
      if (!no_x)
        for (int i = 0; i < ahead; ++i, next(ux)) load_x(i, ux);
      for (int i = ahead, s = ahead % S, phase = 0; i < count; ++i, next(u)) {
        mbar_wait(empty + s, phase);
        mbar_expect_tx(full + s, stage_bytes);
        load_w(s, u, policy);
        if (!no_x) load_x(s, u);
        if (++s == S) s = 0, phase ^= 1;
      }
      if (bulk_gather) {
        const unsigned bytes = static_cast<unsigned>(kRows * p.m * 4);
        mbar_expect_tx(gather_bar, bytes);
        bulk_copy(others_sum, p.lead_partials + gather_base * (kRows * kTileM), bytes, gather_bar);
      }
    }
    if (cluster) cluster_wait();  // pairs with the arrival at the start
    if (bulk_gather) {
      // The other part's sums landed in others_sum with the copy; lane l checks groups l, l + 32, ... for sentinels
      // (words the other part had not yet stored when it was read), polls those, and resets every word it read.
      // The copy (async proxy) reads words the other part may be storing at that moment (st.relaxed.gpu, generic
      // proxy) with nothing to synchronize on: it relies on the L2 returning each 4-byte word whole, either the
      // sentinel or its value (is_sentinel tests every word of a group; a word is never anything else within a launch,
      // and the last launch's resets were done before griddepcontrol.wait returned, which the copy follows). The
      // consumers read others_sum after others_ready, whose arrivals (release, cumulative) follow this warp's wait on
      // gather_bar, which made the copy's bytes visible to it. (A helper's review of session 26 named both as relying
      // on the model rather than spelled out by it; the polled loads of the path below are the fallback.)
      __syncwarp();
      mbar_wait(gather_bar, 0);
      float4* sums = reinterpret_cast<float4*>(others_sum);
      float4* src = reinterpret_cast<float4*>(p.lead_partials + gather_base * (kRows * kTileM));
      const int per_lane = (kRows / 4 * p.m - lane + 31) / 32;  // at most 8 (kRows x kTileM <= 1024)
      unsigned pending = 0;
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (q < per_lane && is_sentinel(sums[lane + 32 * q])) pending |= 1u << q;
      while (pending) {  // all of this lane's missing groups in flight at once, as the gather below polls
        float4 v[8];
#pragma unroll
        for (int q = 0; q < 8; ++q)
          if (pending & (1u << q)) v[q] = ld_relaxed_v4(src + lane + 32 * q);
#pragma unroll
        for (int q = 0; q < 8; ++q)
          if ((pending & (1u << q)) && !is_sentinel(v[q])) sums[lane + 32 * q] = v[q], pending &= ~(1u << q);
        if (pending) __nanosleep(32);
      }
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (q < per_lane) st_relaxed_v4(src + lane + 32 * q, sentinel4());
      if (lane == 0) trace_now(p, 6);
      mbar_arrive(others_ready);
    } else if (gather_parts > 1 && kAblate == 0 && !no_reduction) {
      // The reducer's producer warp, done with its copies: wait until the other parts released the tile's
      // counter, add their partials in part order (float4 groups of [token][row]) into shared memory, and
      // reset the counter for the next launch (which touches it only after griddepcontrol.wait, i.e. after us).
      __syncwarp();
      constexpr int kTileFloats = kRows * kTileM;
      const int groups = kRows / 4 * p.m;  // float4 groups of [token][row], tokens < M
      if (p.handoff == 0) {
        if (lane == 0)
          while (load_acquire(p.counters + lead_tile) != static_cast<unsigned>(p.parts - 1)) __nanosleep(32);
        __syncwarp();  // lane 0's acquire orders the other lanes' loads below (as the consumers' barrier does)
      }
      // Lane l adds groups l, l + 32, ... of every part, part by part: (part j, group index q) walked in that order
      // in batches of 8 loads in flight (one L2 round trip per batch; one group at a time, the M = 16 gather took
      // 16 dependent round trips), added into shared memory in walk order, i.e. in part order for every group.
      const int per_lane = (groups - lane + 31) / 32;
      float4* sums = reinterpret_cast<float4*>(others_sum);
      const float* base = p.handoff == 0 ? p.partials : p.lead_partials;
      constexpr int kBatch = 8;
      for (int j = 1, q = 0; per_lane > 0 && j < gather_parts;) {
        float4 v[kBatch];
        const float4* src[kBatch];
        int jq[kBatch];  // part << 16 | q of each load; 0: none
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          jq[b] = j < gather_parts ? (j << 16) | q : 0;
          src[b] = reinterpret_cast<const float4*>(base + (gather_base + (j < gather_parts ? j : 1) - 1) * kTileFloats) +
                   lane + 32 * q;
          if (j < gather_parts && ++q == per_lane) q = 0, ++j;
        }
        if (p.handoff == 0) {
#pragma unroll
          for (int b = 0; b < kBatch; ++b)
            if (jq[b]) v[b] = __ldcg(src[b]);
        } else {
          // Every word is written once per launch by its part and reset here: poll until none is the sentinel.
          unsigned pending = 0;
#pragma unroll
          for (int b = 0; b < kBatch; ++b) pending |= jq[b] ? 1u << b : 0u;
          while (pending) {
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
              if (pending & (1u << b)) v[b] = ld_relaxed_v4(src[b]);
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
              if ((pending & (1u << b)) && !is_sentinel(v[b])) pending &= ~(1u << b);
            if (pending) __nanosleep(32);
          }
#pragma unroll
          for (int b = 0; b < kBatch; ++b)
            if (jq[b]) st_relaxed_v4(const_cast<float4*>(src[b]), sentinel4());
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          if (!jq[b]) continue;
          float4& a = sums[lane + 32 * (jq[b] & 0xffff)];
          if ((jq[b] >> 16) == 1) {
            a = v[b];  // part 1
          } else {
            a.x += v[b].x, a.y += v[b].y, a.z += v[b].z, a.w += v[b].w;
          }
        }
      }
      if (lane == 0 && p.handoff == 0) p.counters[lead_tile] = 0;
      // The timeline: the others' sums are in (token tiles of M <= 16: in the 128-row 64-token instances the stamp
      // took their spills from 436 to 772 bytes of loads, ptxas -v).
      if (kTileM <= 16 && lane == 0) trace_now(p, 6);
      mbar_arrive(others_ready);  // release (CTA scope): the sums above are visible to the consumers' wait
    }
    return;
  }

  // Consumers. Nothing global is written before the previous kernel is done (it may still read our outputs).
  pdl_wait();
  const int q = lane >> 3, r8 = lane & 7;   // ldmatrix: this lane addresses row r8 of matrix q
  const int g4 = lane >> 2, t4 = lane & 3;  // mma fragments: row g4 (+8), tokens 2 t4 (+1)
  const int tid = threadIdx.x;              // 0..127: the consumers
  auto exit_trace = [&] {  // at every return of the consumers
    if (tid == 0) trace_now(p, 2);
  };
  float acc[kMt][kNt][4];
  auto clear = [&] {
#pragma unroll
    for (int i = 0; i < kMt; ++i)
#pragma unroll
      for (int j = 0; j < kNt; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;
  };
  clear();
  // Visits every accumulator of the warp's live tokens with its row within the tile (the MMA fragment: rows g4 and
  // g4 + 8 of each 16-row tile, tokens 2 t4 and 2 t4 + 1 of each 8-token tile).
  // With K warps, the sums of warps warp_k > 0 are added into warp_k == 0's in warp order first (sum_k_warps).
  auto for_each_output = [&](auto&& f) {
#pragma unroll
    for (int mt = 0; mt < kMt; ++mt)
#pragma unroll
      for (int j = 0; j < kNt; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int rloc = row_in_tile(warp_row, mt, g4, e), token = j * 8 + 2 * t4 + (e & 1);
          if (warp_k == 0 && token < p.m) f(token, rloc, acc[mt][j][e]);
        }
  };
  // The K warps' sums of one tile through shared memory (after the ring and the cluster receive buffer):
  // [warp_k - 1][warp_row][accumulator][lane], added in warp_k order (the same bits whoever finishes first).
  auto sum_k_warps = [&] {
    if constexpr (kKWarps > 1) {
      constexpr int kAcc = kMt * kNt * 4;
      float* red = reinterpret_cast<float*>(slots + S * (kWBytes + kXBytes) +
                                            (p.cluster > 1 || p.parts > 1 ? kRows * kTileM * 4 : 0));
      if (warp_k > 0) {
        float* mine = red + ((warp_k - 1) * kRowWarps + warp_row) * kAcc * 32 + lane;
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt)
#pragma unroll
          for (int j = 0; j < kNt; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) mine[((mt * kNt + j) * 4 + e) * 32] = acc[mt][j][e];
      }
      consumers_sync();
      if (warp_k == 0)
        for (int src = 1; src < kKWarps; ++src) {
          const float* theirs = red + ((src - 1) * kRowWarps + warp_row) * kAcc * 32 + lane;
#pragma unroll
          for (int mt = 0; mt < kMt; ++mt)
#pragma unroll
            for (int j = 0; j < kNt; ++j)
#pragma unroll
              for (int e = 0; e < 4; ++e) acc[mt][j][e] += theirs[((mt * kNt + j) * 4 + e) * 32];
        }
      consumers_sync();  // the buffer is rewritten at the next tile's end
    }
  };
  // The staged epilogue of the lead split at M >= 2: the others' sums area ([token][row], rows x tile_m FP32, in every
  // lead-split CTA's shared memory) holds the tile's outputs or partials, so that they leave in 16-byte stores along
  // the rows (8 outputs, or 4 FP32 partials) instead of one store per element from the MMA fragments (2 rows x 2
  // tokens per lane per 16 x 8 tile: at M = 16, 8 stores per thread, each warp's in four lines). Session 19's step,
  // skinny_fused, against the per-element stores in the same call: -93 / -104 us at M = 16, -32 / -46 at M = 4,
  // -16 / -20 at M = 2, +5 / -9 at M = 8; at M = 1 staged +45, so not there (docs/kernels.md "Session 19"). Built for
  // the token tiles of M <= 16 only (at 64 tokens the added path spilled the 16-row instances, ptxas -v).
  const bool staged = kTileM <= 16 && kAblate == 0 && p.parts >= 1 && p.m >= 2;
  // y through the staging area only where its rows take 16-byte stores. On rows that are not 16-byte aligned (N % 8 != 0,
  // packed) store_output8 falls back to eight single stores, so the staging is pure cost: the 32-row lead split of one
  // part per tile ran 0.6-0.8 us slower than the same ring as one CTA per tile (x1, the per-element stores) at M = 2-16
  // on 5003 x 1024, 9001 x 1024 and (3.9 us over six waves) 51866 x 1280, and equal at M = 1, where nothing is staged
  // (held-out sets sixteen to eighteen; docs/kernels.md "Session 32"). Without the staging there (session 33, call 2,
  // against the old path in the same binary, two rounds): 5003 x 1024 4.84 -> 4.24 us at M = 2 and 8, 9001 x 1024 6.82
  // -> 6.07, 51866 x 1280 38.0 -> 35.1 at M = 2, each within 0.06 us of x1; M = 1 and the Kimi-K3 step unchanged. The
  // partials keep their staging (the workspace is aligned).
  const bool staged_y = staged && p.y_rows16 != 0;
  float* stage = others_sum;
  auto stage_acc = [&] { for_each_output([&](int token, int rloc, float v) { stage[token * kRows + rloc] = v; }); };
  auto store_staged = [&](int tile) {  // after a consumers_sync that follows the area's last write
    constexpr int kChunks = kRows / 8;  // 8 rows of one token per store
    for (int c = tid; c < kChunks * p.m; c += 32 * kConsumerWarps) {
      const int token = c / kChunks, r0 = (c % kChunks) * 8;
      const float4* src = reinterpret_cast<const float4*>(stage + token * kRows + r0);
      const float4 a = src[0], b = src[1];
      const float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
      cuda::store_output8<T>(p.y, p.ldy, p.seg, p.n, token, tile * kRows + r0, v);
    }
  };
  // The timeline: the first stage (its weights and x) landed. A consumer writes it, so that it precedes the last
  // multiply (the producer's stamp after its own wait could follow it: session 13's first run of the GPU test).
  if (p.trace) {
    mbar_wait(full, 0);
    if (tid == 0) trace_now(p, 4);
  }
  int seg_first_stage = first.ks;
  Unit u = first;
  for (int i = 0, s = 0, phase = 0; i < count; ++i, next(u)) {
    mbar_wait(full + s, phase);
    if constexpr (kAblate == 2) {
      __syncwarp();
      if (lane == 0) mbar_arrive(empty + s);
      if (++s == S) s = 0, phase ^= 1;
      continue;
    }
    if constexpr (kWgmma) {
      const uint32_t wb = shared_addr(slot_w(s)), xb = shared_addr(slot_x(s));
      wgmma_fence();
#pragma unroll
      for (int kb = 0; kb < kSteps; ++kb) {  // K steps of 16: 32 bytes along the box's 128-byte rows
        const uint32_t box = kb / (kStageK / 16), kk = kb % (kStageK / 16);
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt)  // 64 rows of 128 bytes: 8 KB on, the same 1024-byte swizzle phase
          wgmma_k16<T, kNt>(acc[mt], wgmma_desc(wb + box * kWBox + mt * 64 * kStageBytes + kk * 32),
                            wgmma_desc(xb + box * kXBox + kk * 32));
      }
      wgmma_commit();
      wgmma_wait_all();
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt) wgmma_fence_operands(acc[mt]);
    } else {
#pragma unroll
    for (int kq = 0; kq < kSteps / kKWarps; ++kq) {
      const int kb = kq * kKWarps + warp_k;  // this warp's K steps of the stage: warp_k, warp_k + kKWarps, ...
      const int kk = kb % (kStageK / 16);
      const uint32_t wb = shared_addr(slot_w(s)) + (kb / (kStageK / 16)) * kWBox;
      const uint32_t xb = shared_addr(slot_x(s)) + (kb / (kStageK / 16)) * kXBox;
      uint32_t b[kNt][2];
      if constexpr (kNt == 1) {
        ldmatrix_x2(b[0][0], b[0][1], swizzled(xb, r8, 2 * kk + (q & 1)));
      } else {
#pragma unroll
        for (int j = 0; j < kNt; j += 2) {
          uint32_t r[4];
          ldmatrix_x4(r, swizzled(xb, 8 * (j + (q >> 1)) + r8, 2 * kk + (q & 1)));
          b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
        }
      }
      uint32_t a[4];
      ldmatrix_x4(a, swizzled(wb, warp_row * 16 + (q & 1) * 8 + r8, 2 * kk + (q >> 1)));
#pragma unroll
      for (int j = 0; j < kNt; ++j) mma<T>(acc[0][j], a, b[j][0], b[j][1]);
    }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(empty + s);
    if (++s == S) s = 0, phase ^= 1;
    if (u.ks != p.k_stages - 1 && i != count - 1) continue;
    if (i == count - 1 && tid == 0) trace_now(p, 5);  // the timeline: the last stage multiplied (at the tile end, not
                                                       // per stage: a test there spilled the 128-row 64-token instances)

    // The end of this CTA's part of row tile u.tile.
    const int tile = u.tile;
    sum_k_warps();
    if (p.parts > 1 && kAblate != 1 && !no_reduction) {
      if (part != 0 && staged) {  // the same partials, staged: one 16-byte store per 4 rows of a token
        stage_acc();
        consumers_sync();
        float4* mine = reinterpret_cast<float4*>((p.handoff == 1 ? p.lead_partials : p.partials) +
                                                 lead_slot(part) * kRows * kTileM);
        const float4* staged4 = reinterpret_cast<const float4*>(stage);
        for (int gi = tid; gi < kRows / 4 * p.m; gi += 32 * kConsumerWarps) {
          if (p.handoff == 1) {
            st_relaxed_v4(mine + gi, not_sentinel4(staged4[gi]));
          } else {
            __stcg(mine + gi, staged4[gi]);
          }
        }
        if (p.handoff == 0) {
          consumers_sync();  // as below: thread 0's release covers every consumer's stores
          if (tid == 0) arrive_release(p.counters + tile);
        }
        exit_trace();
        return;
      }
      if (part != 0) {  // FP32 partials [token][row] to this part's slot, then release the tile's counter
        if (p.handoff == 1) {  // no fence, no counter: the reducer polls the words themselves
          float* mine = p.lead_partials + lead_slot(part) * kRows * kTileM;
          for_each_output(
              [&](int token, int rloc, float v) { st_relaxed(mine + token * kRows + rloc, not_sentinel(v)); });
          exit_trace();
          return;
        }
        float* mine = p.partials + lead_slot(part) * kRows * kTileM;
        for_each_output([&](int token, int rloc, float v) { __stcg(mine + token * kRows + rloc, v); });
        consumers_sync();  // thread 0's release covers every consumer's stores (cumulativity)
        if (tid == 0) arrive_release(p.counters + tile);
        exit_trace();
        return;
      }
      mbar_wait(others_ready, 0);
      if (staged_y) {  // the tile's sums into the staging area (each thread its own words), then 16-byte stores
        for_each_output([&](int token, int rloc, float v) {
          float& sum = stage[token * kRows + rloc];
          sum = v + sum;
        });
        consumers_sync();
        store_staged(tile);
        exit_trace();
        return;
      }
      for_each_output([&](int token, int rloc, float v) {
        const int row = tile * kRows + rloc;
        if (row < p.n) store_output<T>(p, token, row, v + others_sum[token * kRows + rloc]);
      });
      exit_trace();
      return;
    }
    if (cluster && no_reduction && rank != 0) {
      exit_trace();
      return;
    }
    if (cluster && kAblate != 1 && !no_reduction) {
      // Cluster split-K: a reduce-scatter through distributed shared memory. Rank r owns rows [r * slice,
      // (r + 1) * slice) of the tile; every rank pushes its sums of those rows into r's receive buffer
      // [source rank][row][token] with st.async, each store completing its bytes on r's recv_full, and r, once all
      // have landed, adds the sources in rank order and stores y. Only the owner waits, for its slice; a cluster barrier
      // after DSMEM stores (every thread of the cluster, each after its stores were released) cost the step 34 / 84 /
      // 59 us at M = 1 / 8 / 16, 116-137 us unfused (docs/kernels.md "Session 15").
      const int slice = kRows / p.cluster;
      float* recv = reinterpret_cast<float*>(slots + S * (kWBytes + kXBytes));
      const uint32_t recv_local = shared_addr(recv), bar_local = shared_addr(recv_full);
      cluster_wait();  // every CTA of the cluster initialised its recv_full (it returns at once: all arrived at the start)
      if constexpr (kMt == 1) {
        // Four tokens of one row per 16-byte store: lanes t4 and t4 ^ 1 trade halves of their fragments (rows g4 and
        // g4 + 8, two tokens each) so that each holds four consecutive tokens of one row. One 4-byte store per output
        // (8 per thread at M = 16) had the clusters' drain grow 1.15 -> 2.19 us from M = 1 to 16 (session 19); 16-byte
        // stores: 0.25-0.5 us faster alone at M = 8-16 on the clustered Kimi-K3 shapes (session 22, call 2). The
        // 128-row tiles keep [source rank][token][row] and 4-byte stores (their 16-token instances spilled with this
        // under mma.sync, session 22; not re-checked since they moved to wgmma).
        const bool even = (t4 & 1) == 0;
        const int rloc = row_in_tile(warp_row, 0, g4, even ? 0 : 2);
        if (warp_k == 0) {  // with K warps (16- and 32-row tiles), warp_k 0 holds the sums (sum_k_warps)
#pragma unroll
          for (int j = 0; j < kNt; ++j) {
            // acc is indexed with constants only: a pointer into it put the 16-token instances' accumulators on the
            // stack (32 bytes, ptxas -v) and cost 6.5 us on 6288 x 7168 at M = 16 (session 22, call 2).
            const float give0 = even ? acc[0][j][2] : acc[0][j][0], give1 = even ? acc[0][j][3] : acc[0][j][1];
            const float got0 = __shfl_xor_sync(0xffffffffu, give0, 1), got1 = __shfl_xor_sync(0xffffffffu, give1, 1);
            const float v[4] = {even ? acc[0][j][0] : got0, even ? acc[0][j][1] : got1, even ? got0 : acc[0][j][2],
                                even ? got1 : acc[0][j][3]};
            const int token0 = j * 8 + 4 * (t4 >> 1);
            const uint32_t addr =
                recv_local + 4u * static_cast<uint32_t>((rank * slice + rloc % slice) * kTileM + token0);
            if (token0 + 4 <= p.m) {
              st_async_cluster_v4(addr, bar_local, rloc / slice, v);
            } else {
#pragma unroll
              for (int i = 0; i < 4; ++i)
                if (token0 + i < p.m) st_async_cluster(addr + 4u * i, bar_local, rloc / slice, v[i]);
            }
          }
        }
      } else {
        for_each_output([&](int token, int rloc, float v) {
          st_async_cluster(recv_local + 4u * static_cast<uint32_t>((rank * kTileM + token) * slice + rloc % slice),
                           bar_local, rloc / slice, v);
        });
      }
      mbar_wait_cluster(recv_full, 0);
      for (int o = tid; o < slice * p.m; o += 32 * kConsumerWarps) {
        const int token = o / slice, r = o % slice;
        float sum = 0.f;
        for (int src = 0; src < p.cluster; ++src)
          sum += kMt == 1 ? recv[(src * slice + r) * kTileM + token] : recv[(src * kTileM + token) * slice + r];
        const int row = tile * kRows + rank * slice + r;
        if (row < p.n) store_output<T>(p, token, row, sum);
      }
      exit_trace();
      return;
    }
    if (kAblate == 1 || no_reduction || (seg_first_stage == 0 && u.ks == p.k_stages - 1)) {  // the whole tile: store y
      if (staged_y) {  // a lead-split grid of one part per tile: one tile per CTA, so the area is not reused
        stage_acc();
        consumers_sync();
        store_staged(tile);
      } else {
        for_each_output([&](int token, int rloc, float v) {
          if (tile * kRows + rloc < p.n) store_output<T>(p, token, tile * kRows + rloc, v);
        });
      }
    } else if (kPolledStreamK && p.handoff == 1) {
      if (seg_first_stage != 0) {
        // Another CTA owns the tile (its range holds the first stage): our share as polled words in slot g, and on.
        float* mine = p.lead_partials + static_cast<long long>(g) * kRows * kTileM;
        for_each_output([&](int token, int rloc, float v) { st_relaxed(mine + token * kRows + rloc, not_sentinel(v)); });
      } else {  // our last tile, from its first stage: the others' shares, gathered in CTA order by the producer warp
        mbar_wait(others_ready, 0);
        for_each_output([&](int token, int rloc, float v) {
          const int row = tile * kRows + rloc;
          if (row < p.n) store_output<T>(p, token, row, v + others_sum[token * kRows + rloc]);
        });
      }
    } else {
      // Part of a tile: FP32 partials [token][row] to this CTA's slot (0 = its first tile, 1 = its last), then
      // the last CTA of the tile to arrive sums every part in a fixed order.
      constexpr int kTileFloats = kRows * kTileM;
      float* mine = p.partials + (static_cast<long long>(g) * 2 + (tile == first.tile ? 0 : 1)) * kTileFloats;
      for_each_output([&](int token, int rloc, float v) { __stcg(mine + token * kRows + rloc, v); });
      consumers_sync();
      const long long tile_u0 = static_cast<long long>(tile) * p.k_stages;
      const int g_first = owner_cta(tile_u0, p.units, ctas);
      const int parts = owner_cta(tile_u0 + p.k_stages - 1, p.units, ctas) - g_first + 1;
      // Thread 0's release covers the partials every consumer stored before the barrier (cumulativity); its
      // acquire, with the barrier after it, orders the reducer's reads of the other CTAs' partials.
      if (tid == 0) *last_flag = arrive_acq_rel(p.counters + tile) == static_cast<unsigned>(parts - 1);
      consumers_sync();
      if (*last_flag) {
        // Part c (0 = CTA g_first) of the tile: CTAs after g_first start inside it (their slot 0); g_first's
        // slot is 0 only if its range starts at the tile.
        const float* part0 = p.partials +
                             (static_cast<long long>(g_first) * 2 + (first_unit(g_first, p.units, ctas) == tile_u0 ? 0 : 1)) *
                                 kTileFloats;
        const float* part1 = p.partials + static_cast<long long>(g_first) * 2 * kTileFloats;  // + c * 2 * kTileFloats
        auto part = [&](int c) -> const float4* {
          return reinterpret_cast<const float4*>(c == 0 ? part0 : part1 + static_cast<long long>(c) * 2 * kTileFloats);
        };
        // Float4 groups of [token][row]; `lanes` threads share a group's parts (part c to lane c % lanes), their
        // sums are added in lane order: a fixed tree for the tile's (parts, M), whoever arrives last.
        const int groups = kRows / 4 * p.m;
        const int lanes = groups >= 32 * kConsumerWarps ? 1 : min(parts, 32 * kConsumerWarps / groups);
        constexpr int kV = 2;  // groups per thread per pass (lanes == 1)
        float4 sum[kV];
        const int lane_of = lanes == 1 ? 0 : tid / groups;
        for (int g0 = lanes == 1 ? tid : tid % groups; g0 < groups && lane_of < lanes; g0 += kV * 32 * kConsumerWarps) {
#pragma unroll
          for (int v = 0; v < kV; ++v) sum[v] = make_float4(0.f, 0.f, 0.f, 0.f);
          for (int c0 = lane_of; c0 < parts; c0 += 4 * lanes) {
            float4 val[4][kV];
#pragma unroll
            for (int b = 0; b < 4; ++b)  // up to 8 loads in flight before the first add
#pragma unroll
              for (int v = 0; v < kV; ++v) {
                const int c = c0 + b * lanes, gi = g0 + v * 32 * kConsumerWarps;
                if (c < parts && gi < groups && (lanes == 1 || v == 0)) val[b][v] = __ldcg(part(c) + gi);
              }
#pragma unroll
            for (int b = 0; b < 4; ++b)
#pragma unroll
              for (int v = 0; v < kV; ++v) {
                const int c = c0 + b * lanes, gi = g0 + v * 32 * kConsumerWarps;
                if (c < parts && gi < groups && (lanes == 1 || v == 0)) {
                  sum[v].x += val[b][v].x, sum[v].y += val[b][v].y, sum[v].z += val[b][v].z, sum[v].w += val[b][v].w;
                }
              }
          }
          if (lanes > 1) {
            reduce_slots[lane_of * groups + g0] = sum[0];
          } else {
#pragma unroll
            for (int v = 0; v < kV; ++v) {
              const int gi = g0 + v * 32 * kConsumerWarps;
              if (gi < groups) store_group<T, kRows>(p, tile * kRows, gi, sum[v]);
            }
          }
        }
        if (lanes > 1) {
          consumers_sync();
          for (int gi = tid; gi < groups; gi += 32 * kConsumerWarps) {
            float4 t = reduce_slots[gi];
            for (int l = 1; l < lanes; ++l) {
              const float4 o = reduce_slots[l * groups + gi];
              t.x += o.x, t.y += o.y, t.z += o.z, t.w += o.w;
            }
            store_group<T, kRows>(p, tile * kRows, gi, t);
          }
        }
        if (tid == 0) p.counters[tile] = 0;  // ready for the next launch (which waits for us)
      }
      consumers_sync();  // last_flag and the lane sums are rewritten at the next partial tile
    }
    clear();
    seg_first_stage = 0;
  }
  exit_trace();
}

}  // namespace skinnygemm::tma
