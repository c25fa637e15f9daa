// Ring ladder (docs/kernels.md "Session 31"): the dependent-chain floor moved toward the TMA family's ring one
// ingredient per rung, to find which one makes the family's ring alone 6-8% slower than the floor from 90 MB
// (session 24: stream-K's ring alone 48.65 against 45.95 us on 7168 x 14336) when the row-strided copy explains
// only 0.6 us of it (session 30). Each rung is chained behind itself (40 PDL launches per graph, rotating cold weight
// copies, tools/probes/probe_harness.h); every rung reads a word the previous launch wrote after griddepcontrol.wait.
// The unfolded rungs (fold 0) free slots without waiting for the word: a floor without x's arrival (session 31's
// review). Rungs (cumulative, in the order printed):
//   chain     the benchmarks' chain floor kernel (lab/cuda/chain_floor.cuh), 2 CTAs per SM, 6 x 16 KB
//   L1 ..     this file's ladder kernel, equal to `chain` at L1, then one change each (see kRungs)
//   ours_ring the family's kernel (r64_b2_s4_c2_u1 stream-K, M = 1, 3D maps) with no MMA and no epilogue
//   ours      the same config whole
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Iinclude tools/probes/ring_ladder.cu -lcuda
// Output: "ladder,<shape>,<rung>,<round>,<us>" rows, then one table row per shape (means of the rounds).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/tma/tma_gemm.cuh"
#include "lab/cuda/chain_floor.cuh"
#include "probe_harness.h"

using bf16 = __nv_bfloat16;
using namespace skinnygemm::tma;
using probe::launch_pdl;
using probe::time_launches;

constexpr int kUnitBytes = 16384;  // one stage of the family's r64_b2 configs: 64 rows x 2 boxes x 128 bytes

struct LadderParams {
  const char* w;
  long long units;
  int k_stages;
  int slots, slot_stride;
  int copy;         // 0: one contiguous bulk copy of the unit (the chain floor); 1: a 2D tensor copy of the packed
                    // view (16 KB run; the rung's map); 2: the family's 3D copy of 64 rows x 2 boxes (row-strided);
                    // 3: the row-strided stage by 64 bulk copies of 256 bytes; 4: the packed unit by 8 of 2 KB
  int evict_first;  // the family's L2 policy on every weight copy
  int even;         // 0: ceil(units / CTAs) per CTA (the last CTAs short or idle, as the chain floor); 1: the
                    // family's stream-K ranges g units / CTAs
  int fold;         // consumers read every 16 bytes of the slot (the chain floor); 0: they only free it
  int packed_line;  // bytes per line of the packed map (its inner box)
  long long row_bytes;
  const uint32_t* word_in;
  uint32_t* word_out;
};

template <int kWarps>
__global__ void __launch_bounds__(32 * (kWarps + 1)) ladder_kernel(const __grid_constant__ CUtensorMap packed,
                                                                   const __grid_constant__ CUtensorMap strided,
                                                                   const LadderParams p) {
  extern __shared__ char raw[];
  char* smem = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + 32;
  char* slots = smem + 1024;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = blockIdx.x, ctas = gridDim.x;
  long long u0, u1;
  if (p.even) {
    u0 = g * p.units / ctas, u1 = (g + 1) * p.units / ctas;
  } else {
    const long long per = (p.units + ctas - 1) / ctas;
    u0 = g * per < p.units ? g * per : p.units;
    u1 = u0 + per < p.units ? u0 + per : p.units;
  }
  const int count = static_cast<int>(u1 - u0), S = p.slots;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) skinnygemm::cuda::mbar_init(full + s, 1), skinnygemm::cuda::mbar_init(empty + s, kWarps);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  pdl_launch_dependents();
  if (warp == kWarps) {
    const uint64_t policy = evict_first_policy();
    auto bulk = [&](char* dst, const char* src, unsigned bytes, uint64_t* bar) {
      if (p.evict_first)
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], "
            "%4;" ::"r"(shared_addr(dst)),
            "l"(src), "r"(bytes), "r"(shared_addr(bar)), "l"(policy)
            : "memory");
      else
        skinnygemm::cuda::bulk_copy(dst, src, bytes, bar);
    };
    auto copy = [&](int s, long long u) {
      char* dst = slots + static_cast<long long>(s) * p.slot_stride;
      if (lane == 0) skinnygemm::cuda::mbar_expect_tx(full + s, kUnitBytes);
      if (p.copy == 3) {  // the row-strided layout by bulk copies: row r's 256 bytes of the stage, two rows a lane
        __syncwarp();
        const int tile = static_cast<int>(u / p.k_stages), ks = static_cast<int>(u % p.k_stages);
        for (int r = lane; r < 64; r += 32)
          bulk(dst + r * 256, p.w + (static_cast<long long>(tile) * 64 + r) * p.row_bytes + ks * 256, 256, full + s);
        return;
      }
      if (p.copy == 4) {  // the packed unit in 8 bulk copies of 2 KB
        __syncwarp();
        if (lane < 8) bulk(dst + lane * 2048, p.w + u * kUnitBytes + lane * 2048, 2048, full + s);
        return;
      }
      if (lane != 0) return;
      if (p.copy == 0) {
        bulk(dst, p.w + u * kUnitBytes, kUnitBytes, full + s);
      } else if (p.copy == 1) {
        const int line = static_cast<int>(u * (kUnitBytes / p.packed_line));
        if (p.evict_first) tma_load_hint(dst, &packed, full + s, 0, line, policy);
        else tma_load(dst, &packed, full + s, 0, line);
      } else {
        const int tile = static_cast<int>(u / p.k_stages), ks = static_cast<int>(u % p.k_stages);
        if (p.evict_first) tma_load_3d_hint(dst, &strided, full + s, tile * 64, ks * 2, policy);
        else tma_load_3d(dst, &strided, full + s, tile * 64, ks * 2);
      }
    };
    for (int j = 0; j < count; ++j) {
      const int s = j % S;
      if (j == S) pdl_wait();  // every slot in flight by now
      if (j >= S) skinnygemm::cuda::mbar_wait(empty + s, ((j / S) + 1) & 1);
      copy(s, u0 + j);
    }
    return;
  }
  pdl_wait();
  const uint32_t x = p.word_in[g];
  uint32_t acc = 0;
  for (int j = 0; j < count; ++j) {
    const int s = j % S;
    skinnygemm::cuda::mbar_wait(full + s, (j / S) & 1);
    if (p.fold)
      for (int i = threadIdx.x * 16; i < kUnitBytes; i += kWarps * 32 * 16) {
        const uint4 v = *reinterpret_cast<const uint4*>(slots + static_cast<long long>(s) * p.slot_stride + i);
        acc ^= (v.x + x) ^ v.y ^ v.z ^ v.w;
      }
    __syncwarp();
    if (lane == 0) skinnygemm::cuda::mbar_arrive(empty + s);
  }
  acc = __reduce_xor_sync(0xffffffffu, acc) ^ x;
  if (lane == 0) atomicXor(p.word_out + g, acc + 1);
}

void* w_ptr(const void* w) { return const_cast<void*>(w); }
CUtensorMap encode(const void* base, int rank, const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box) {
  CUtensorMap m;
  const cuuint32_t es[3] = {1, 1, 1};
  CU_CHECK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank, const_cast<void*>(base), dims, strides,
                                  box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}
// The packed view [N K / inner][inner]: a unit is 16 KB of consecutive lines. Variants: 0 the family's map before session 31 (64-wide
// lines, 128-byte swizzle, 256-byte L2 promotion), 1 the same without L2 promotion, 2 no swizzle, 3 no swizzle and
// 512-byte lines.
constexpr int kPackedVariants = 5;  // 4: 128-byte L2 promotion
CUtensorMap packed_map(const void* w, long long n, long long k, int variant) {
  const int inner = variant == 3 ? 256 : 64;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(n * k / inner)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(inner) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(inner), static_cast<cuuint32_t>(kUnitBytes / (2 * inner))};
  CUtensorMap m;
  const cuuint32_t es[2] = {1, 1};
  CU_CHECK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(w), dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  variant >= 2 ? CU_TENSOR_MAP_SWIZZLE_NONE : CU_TENSOR_MAP_SWIZZLE_128B,
                                  variant == 1 ? CU_TENSOR_MAP_L2_PROMOTION_NONE
                                  : variant == 4 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}
// The family's [K / 64][rows][64] view of row-major [rows][cols], boxes of 64 x box_rows x 2.
CUtensorMap strided_map(const void* w, long long rows, long long cols, int box_rows,
                        CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  const cuuint64_t dims[3] = {64, static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(cols / 64)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(cols) * 2, 128};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_rows), 2};
  CUtensorMap m;
  const cuuint32_t es[3] = {1, 1, 1};
  CU_CHECK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, w_ptr(w), dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

struct Rung {
  const char* name;
  int warps, copy, evict_first, even, fold, slots, smem;  // smem 0: 1024 + slots x 16 KB + 1024 of alignment slack
  int map = 0;  // copy 1: the packed map's variant; copy 2: 0 the family's map before session 31, 1 no L2 promotion (the family's since), 4 128-byte promotion
};
// Our kernel's shared memory at r64_b2_s4, token tile 8, stream-K (tma_shape.h): what decides how many CTAs of the
// next launch fit beside two of ours (a footprint that lets a third in ran eh_proj 60.1 us against 46.0 in call 1).
constexpr int kOursSmem = smem_bytes(64, 8, 4, 2, 0, false);
const Rung kRungs[] = {
    {"L1_chain_equal", 7, 0, 0, 0, 1, 6, 0},       // the chain floor's 2 x (6 x 16 KB)
    {"L3_4slots_our_smem", 7, 0, 0, 0, 1, 4, kOursSmem},  // our ring depth and footprint
    {"L6_4w_nofold_even", 4, 0, 0, 1, 0, 4, kOursSmem},
    // L3 -> L6 in single steps (session 31, call 6): which of them makes the ladder faster than the floor's kernel
    // below 52 MB (a floor that a kernel which reads its slots could reach, or not).
    {"L4_7w_fold_even", 7, 0, 0, 1, 1, 4, kOursSmem},
    {"L4_4w_fold_ceil", 4, 0, 0, 0, 1, 4, kOursSmem},
    {"L4_7w_nofold_ceil", 7, 0, 0, 0, 0, 4, kOursSmem},
    {"L4_7w_fold_even_6slots", 7, 0, 0, 1, 1, 6, 0},
    {"L7_evict_first", 4, 0, 1, 1, 0, 4, kOursSmem},  // our ring, copied as the chain floor copies
    {"L7_bulk_8x2KB", 4, 4, 1, 1, 0, 4, kOursSmem},
    {"L7_bulk_rows", 4, 3, 1, 1, 0, 4, kOursSmem},  // the row-major weights by bulk copies (no swizzle)
    {"L8_tensor_packed", 4, 1, 1, 1, 0, 4, kOursSmem, 0},
    {"L8_l2_none", 4, 1, 1, 1, 0, 4, kOursSmem, 1},
    {"L8_no_swizzle", 4, 1, 1, 1, 0, 4, kOursSmem, 2},
    {"L8_512B_lines", 4, 1, 1, 1, 0, 4, kOursSmem, 3},
    {"L8_no_evict", 4, 1, 0, 1, 0, 4, kOursSmem, 0},
    {"L8_l2_128", 4, 1, 1, 1, 0, 4, kOursSmem, 4},
    {"L9_tensor_3d", 4, 2, 1, 1, 0, 4, kOursSmem},  // ~ our ring alone without x
    {"L9_l2_none", 4, 2, 1, 1, 0, 4, kOursSmem, 1},
    {"L9_l2_128", 4, 2, 1, 1, 0, 4, kOursSmem, 4},
    {"L9_l2_none_no_evict", 4, 2, 0, 1, 0, 4, kOursSmem, 1},
};

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("# %s SMs=%d L2=%d MiB, our smem %d bytes\n", prop.name, sms, prop.l2CacheSize >> 20, kOursSmem);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  struct Shape { const char* name; int n, k; };
  const Shape shapes[] = {{"eh_proj", 7168, 14336}, {"kda_in", 6288, 7168}, {"qkv_a_g", 3648, 7168},
                          {"qkv_a", 2112, 7168},    {"down", 7168, 3584},   {"o_proj", 7168, 1536}};
  const int rounds = 2;
  uint32_t* words;
  CHECK(cudaMalloc(&words, 2 * 4096 * 4));
  CHECK(cudaMemset(words, 0, 2 * 4096 * 4));
  // The family's workspace (stream-K at M = 1: polled shares, every word the sentinel between launches).
  float *partials, *lead_partials;
  unsigned* counters;
  CHECK(cudaMalloc(&partials, partial_floats(2 * sms, 128, 64) * 4));
  CHECK(cudaMalloc(&lead_partials, partial_floats(2 * sms, 128, 64) * 4));
  CHECK(cudaMemset(lead_partials, 0xff, partial_floats(2 * sms, 128, 64) * 4));
  CHECK(cudaMalloc(&counters, 1 << 20));
  CHECK(cudaMemset(counters, 0, 1 << 20));
  const int max_smem = 1024 + 1024 + 6 * kUnitBytes;
  CHECK(cudaFuncSetAttribute(ladder_kernel<7>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  CHECK(cudaFuncSetAttribute(ladder_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  const int chain_smem = 1024 + 6 * 16384;
  CHECK(cudaFuncSetAttribute(skinnygemm::cuda::chain_floor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, chain_smem));
  auto ours_ring = tma_gemm_kernel<bf16, 64, 8, 2, 2>;
  auto ours_whole = tma_gemm_kernel<bf16, 64, 8, 2, 0>;
  CHECK(cudaFuncSetAttribute(ours_ring, cudaFuncAttributeMaxDynamicSharedMemorySize, kOursSmem));
  CHECK(cudaFuncSetAttribute(ours_whole, cudaFuncAttributeMaxDynamicSharedMemorySize, kOursSmem));

  std::vector<std::string> names = {"chain"};
  for (const Rung& r : kRungs) names.push_back(r.name);
  for (const char* n : {"ours_ring", "ours", "ours_ring_l2_none", "ours_l2_none", "ours_ring_l2_128", "ours_l2_128"})
    names.push_back(n);
  std::printf("%-8s", "shape");
  for (const std::string& n : names) std::printf(" %s", n.c_str());
  std::printf("\n");
  for (const Shape& sh : shapes) {
    const size_t wbytes = (size_t)sh.n * sh.k * 2;
    const int copies = std::min<int>(64, std::max<int>(2, (int)(4.0 * prop.l2CacheSize / wbytes) + 1));
    std::vector<bf16*> ws(copies);
    std::vector<CUtensorMap> packed[kPackedVariants], strided(copies), strided_none(copies), strided_128(copies);
    const size_t padded = (size_t)(sh.n + 63) / 64 * 64 * sh.k * 2;  // the bulk rungs read whole 64-row tiles
    for (int i = 0; i < copies; ++i) {
      CHECK(cudaMalloc(&ws[i], padded));
      CHECK(cudaMemset(ws[i], 0x3c, padded));
      for (int v = 0; v < kPackedVariants; ++v) packed[v].push_back(packed_map(ws[i], sh.n, sh.k, v));
      strided[i] = strided_map(ws[i], sh.n, sh.k, 64);
      strided_none[i] = strided_map(ws[i], sh.n, sh.k, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE);
      strided_128[i] = strided_map(ws[i], sh.n, sh.k, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    }
    bf16 *x, *y;
    CHECK(cudaMalloc(&x, (size_t)64 * sh.k * 2));
    CHECK(cudaMemset(x, 0, (size_t)64 * sh.k * 2));
    CHECK(cudaMalloc(&y, (size_t)64 * sh.n * 2));
    const CUtensorMap x_map = strided_map(x, 1, sh.k, 8);
    const Grid grid = grid_for(sh.n, sh.k, 64, 2, 2, 1, sms);
    TmaParams tp;
    std::memset(&tp, 0, sizeof tp);
    tp.y = y, tp.m = 1, tp.n = sh.n, tp.k = sh.k, tp.ldy = sh.n;
    tp.k_stages = grid.k_stages, tp.tiles = grid.tiles, tp.units = grid.units, tp.stages = 4;
    tp.cluster = 1, tp.parts = 0, tp.handoff = 1, tp.box3d = 1;
    tp.lead_partials = lead_partials, tp.partials = partials, tp.counters = counters;
    std::vector<std::vector<double>> us(names.size());
    for (int round = 0; round < rounds; ++round) {
      size_t ri = 0;
      auto record = [&](double t) {
        us[ri].push_back(t);
        std::printf("ladder,%s,%s,%d,%.3f\n", sh.name, names[ri].c_str(), round, t);
        ++ri;
      };
      record(time_launches(s, [&](int i) {
        launch_pdl(skinnygemm::cuda::chain_floor_kernel, dim3(2 * sms), dim3(skinnygemm::cuda::kChainThreads),
                   (size_t)chain_smem, s, (const char*)ws[i % copies], (long long)wbytes, 6, 16384,
                   (const uint32_t*)(words + (i & 1) * 4096), (uint32_t*)(words + ((i + 1) & 1) * 4096), 0);
      }));
      for (const Rung& r : kRungs) {
        LadderParams lp{};
        lp.units = grid.units, lp.k_stages = grid.k_stages, lp.slots = r.slots, lp.slot_stride = kUnitBytes;
        lp.copy = r.copy, lp.evict_first = r.evict_first, lp.even = r.even, lp.fold = r.fold;
        lp.packed_line = r.map == 3 ? 512 : 128, lp.row_bytes = 2ll * sh.k;
        const int smem = r.smem ? r.smem : 2048 + r.slots * kUnitBytes;
        const std::vector<CUtensorMap>& st = r.copy == 2 && r.map == 1 ? strided_none : r.copy == 2 && r.map == 4 ? strided_128 : strided;
        record(time_launches(s, [&](int i) {
          LadderParams q = lp;
          q.w = (const char*)ws[i % copies];
          q.word_in = words + (i & 1) * 4096, q.word_out = words + ((i + 1) & 1) * 4096;
          if (r.warps == 7)
            launch_pdl(ladder_kernel<7>, dim3(2 * sms), dim3(256), (size_t)smem, s, packed[r.map][i % copies],
                       st[i % copies], q);
          else
            launch_pdl(ladder_kernel<4>, dim3(2 * sms), dim3(160), (size_t)smem, s, packed[r.map][i % copies],
                       st[i % copies], q);
        }));
      }
      for (const std::vector<CUtensorMap>* maps : {&strided, &strided_none, &strided_128})
        for (auto fn : {ours_ring, ours_whole})
          record(time_launches(s, [&](int i) {
            launch_pdl(fn, dim3(grid.ctas), dim3(kThreads), (size_t)kOursSmem, s, (*maps)[i % copies], x_map, tp);
          }));
    }
    std::printf("%-8s", sh.name);
    for (const auto& v : us) {
      double m = 0;
      for (double t : v) m += t;
      std::printf(" %.2f", m / v.size());
    }
    std::printf("\n");
    for (bf16* w : ws) CHECK(cudaFree(w));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
  }
  CHECK(cudaGetLastError());
  return 0;
}
