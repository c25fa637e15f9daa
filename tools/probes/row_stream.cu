// Row stream (docs/kernels.md "Session 39"): the dependent-chain floor's grid with a GEMM inside, no split reduction.
// Each CTA owns R = 8 or 16 consecutive weight rows over the whole K, so 2112 x 7168 at R = 8 is 264 CTAs of 112 KB of
// weights each: two per SM, every CTA the same bytes, as the floor's streamed rings (lab/cuda/chain_floor.cuh). The
// weights ride alone in a ring of 16 KB stages (one 3D copy each: R rows x 2 KB, 128-byte swizzle), every slot
// requested before griddepcontrol.wait; x is either copied once per CTA for the whole K straight after the wait
// ("xo": M token rows x K, one copy per 256 boxes; sessions 12 and 38 named it, nobody built it) or per stage beside
// the weights ("xs": the TMA family's habit). The MMA is mma.sync m16n8k16 with x on its 16-row side (tokens, rows
// past M clamped to M - 1 and never stored) and the weights on its 8-wide side, so an 8-row tile wastes nothing of the
// stream; four consumer warps split each stage's 64 K steps and add their sums in warp order at the end (the same bits
// every run). What it leaves out: N and K tails beyond the copy engine's zero fill (K % 64 == 0 here), strides, FP16.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Iinclude tools/probes/row_stream.cu -lcuda
// Output: "check,<shape>,<variant>,<M>,ok|FAIL" rows, then "rs,<shape>,<variant>,<M>,<round>,<us>" rows and one table
// per shape (means of the rounds) with the chain floor of the same bytes measured in the same process.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/tma/ptx.cuh"
#include "lab/cuda/chain_floor.cuh"
#include "probe_harness.h"

using bf16 = __nv_bfloat16;
using namespace skinnygemm::tma;
using probe::launch_pdl;
using probe::time_launches;

constexpr int kStage = 16384;      // weight bytes per stage: R rows x (128 / R) boxes of 128 bytes
constexpr int kMaxSlots = 8;
constexpr int kCopyBoxes = 256;    // the copy engine's largest box dimension

struct RsParams {
  bf16* y;
  int m, n, k;
  int k_stages;  // ceil(K / (64 x boxes))
  int slots;     // ring slots (all requested before the wait)
  int x_once;    // 1: x for the whole K after the wait; 0: each stage's x beside its weights
  int x_rows;    // token rows per x box: M, or M rounded up to 8 (the check tries both: is the swizzle by address?)
  int x_box;     // x once: 64-wide boxes per copy (<= 256), x_copies copies
  int x_copies;
};

// Shared memory: 1024 alignment slack, 1024 of barriers, the ring (slots x (16 KB + per-stage x)), the x-once buffer,
// the warps' sums (3 x R / 8 x 4 x 32 floats).
template <int kRows>
__host__ __device__ constexpr int rs_boxes() { return kStage / (kRows * 128); }
// x once: the stage-padded boxes of K in copies of at most 256 boxes (the last zero-filled past K).
inline int x_box_for(int k_stages, int boxes) { return std::min(kCopyBoxes, k_stages * boxes); }
inline int x_copies_for(int k_stages, int boxes) { return (k_stages * boxes + x_box_for(k_stages, boxes) - 1) / x_box_for(k_stages, boxes); }
template <int kRows>
size_t rs_smem(int x_rows, int k, int slots, int x_once) {
  const int boxes = rs_boxes<kRows>();
  const int k_stages = (k + 64 * boxes - 1) / (64 * boxes);
  const size_t xs = x_once ? 0 : (size_t)boxes * x_rows * 128;
  const size_t xo = x_once ? (size_t)x_copies_for(k_stages, boxes) * x_box_for(k_stages, boxes) * x_rows * 128 : 0;
  return 2048 + slots * (kStage + xs) + (xo + 1023) / 1024 * 1024 + 3 * (kRows / 8) * 4 * 32 * 4;
}

template <int kRows>
__global__ void __launch_bounds__(kThreads, 2) rs_kernel(const __grid_constant__ CUtensorMap w_map,
                                                         const __grid_constant__ CUtensorMap x_map, const RsParams p) {
  constexpr int kBoxes = rs_boxes<kRows>();
  constexpr int kNt = kRows / 8;         // 8-row MMA tiles of weights
  constexpr int kSteps = kBoxes * 4;     // K steps of 16 per stage
  constexpr int kWarpSteps = kSteps / kConsumerWarps;
  extern __shared__ char smem_raw[];
  char* smem = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxSlots;
  uint64_t* x_full = empty + kMaxSlots;
  char* ring = smem + 1024;
  const int S = p.slots, M = p.m, XR = p.x_rows;
  const unsigned x_stage_bytes = p.x_once ? 0u : static_cast<unsigned>(kBoxes * XR * 128);
  const unsigned slot_bytes = kStage + x_stage_bytes;
  char* x_once_buf = ring + S * slot_bytes;
  const unsigned x_once_bytes = p.x_once ? static_cast<unsigned>(p.x_copies * p.x_box * XR * 128) : 0u;
  float* red = reinterpret_cast<float*>(x_once_buf + (x_once_bytes + 1023) / 1024 * 1024);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, tile = blockIdx.x;
  const int count = p.k_stages;

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(full + s, 1), mbar_init(empty + s, kConsumerWarps);
    mbar_init(x_full, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  pdl_launch_dependents();

  if (warp == kConsumerWarps) {
    if (lane == 0) {
      const uint64_t policy = evict_first_policy();
      const int ahead = count < S ? count : S;
      for (int i = 0; i < ahead; ++i) {
        mbar_expect_tx(full + i, slot_bytes);
        tma_load_3d_hint(ring + i * slot_bytes, &w_map, full + i, tile * kRows, i * kBoxes, policy);
      }
      pdl_wait();
      if (p.x_once) {
        mbar_expect_tx(x_full, x_once_bytes);
        for (int c = 0; c < p.x_copies; ++c)
          tma_load_3d(x_once_buf + c * p.x_box * XR * 128, &x_map, x_full, 0, c * p.x_box);
      } else {
        for (int i = 0; i < ahead; ++i) tma_load_3d(ring + i * slot_bytes + kStage, &x_map, full + i, 0, i * kBoxes);
      }
      for (int i = ahead, s = ahead % S, phase = 0; i < count; ++i) {
        mbar_wait(empty + s, phase);
        mbar_expect_tx(full + s, slot_bytes);
        tma_load_3d_hint(ring + s * slot_bytes, &w_map, full + s, tile * kRows, i * kBoxes, policy);
        if (!p.x_once) tma_load_3d(ring + s * slot_bytes + kStage, &x_map, full + s, 0, i * kBoxes);
        if (++s == S) s = 0, phase ^= 1;
      }
    }
    return;
  }

  pdl_wait();
  const int q = lane >> 3, r8 = lane & 7, g4 = lane >> 2, t4 = lane & 3;
  float acc[kNt][4];
#pragma unroll
  for (int j = 0; j < kNt; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  if (p.x_once) mbar_wait(x_full, 0);
  // ldmatrix rows of x: tokens r8 (lanes 0-7, 16-23) and 8 + r8 (lanes 8-15, 24-31), clamped to the M rows a box holds.
  const int tok_lo = min(r8, M - 1), tok_hi = min(8 + r8, M - 1);
  const bool hi = M > 8;
  for (int i = 0, s = 0, phase = 0; i < count; ++i) {
    mbar_wait(full + s, phase);
    const uint32_t wb = shared_addr(ring + s * slot_bytes);
    const uint32_t xb = p.x_once ? shared_addr(x_once_buf) : shared_addr(ring + s * slot_bytes + kStage);
    const int xbox0 = p.x_once ? i * kBoxes : 0;  // the x box of the stage's box 0
#pragma unroll
    for (int ws = 0; ws < kWarpSteps; ++ws) {
      const int kb = ws * kConsumerWarps + warp;  // K step of the stage
      const int box = kb >> 2, kk = kb & 3;
      uint32_t a[4];
      const int xline0 = (xbox0 + box) * XR;
      if (hi) {
        // matrices: tokens 0-7 at chunk 2kk, tokens 8-15 at 2kk, tokens 0-7 at 2kk + 1, tokens 8-15 at 2kk + 1
        ldmatrix_x4(a, swizzled(xb, xline0 + ((q & 1) ? tok_hi : tok_lo), 2 * kk + (q >> 1)));
      } else {
        ldmatrix_x2(a[0], a[2], swizzled(xb, xline0 + tok_lo, 2 * kk + (q & 1)));
        a[1] = a[3] = 0u;
      }
#pragma unroll
      for (int j = 0; j < kNt; ++j) {
        uint32_t b0, b1;  // weights rows 8 j .. 8 j + 7 of the box, chunks 2 kk and 2 kk + 1
        ldmatrix_x2(b0, b1, swizzled(wb + box * kRows * 128, 8 * j + r8, 2 * kk + (q & 1)));
        mma<bf16>(acc[j], a, b0, b1);
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(empty + s);
    if (++s == S) s = 0, phase ^= 1;
  }
  // The warps' sums in warp order: warps 1-3 through shared memory, warp 0 adds them and stores y.
  if (warp > 0) {
#pragma unroll
    for (int j = 0; j < kNt; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) red[(((warp - 1) * kNt + j) * 4 + e) * 32 + lane] = acc[j][e];
  }
  consumers_sync();
  if (warp != 0) return;
#pragma unroll
  for (int w = 1; w < kConsumerWarps; ++w)
#pragma unroll
    for (int j = 0; j < kNt; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[j][e] += red[(((w - 1) * kNt + j) * 4 + e) * 32 + lane];
  // D fragment: token g4 (e 0, 1) and g4 + 8 (e 2, 3), rows 2 t4 and 2 t4 + 1 of the 8-row tile j.
#pragma unroll
  for (int j = 0; j < kNt; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int token = g4 + 8 * h, row = tile * kRows + 8 * j + 2 * t4;
      if (token >= M) continue;
      bf16* out = p.y + static_cast<long long>(token) * p.n + row;
      if (row + 1 < p.n && (p.n % 2) == 0) {
        *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(acc[j][2 * h], acc[j][2 * h + 1]);
      } else {
        if (row < p.n) out[0] = __float2bfloat16(acc[j][2 * h]);
        if (row + 1 < p.n) out[1] = __float2bfloat16(acc[j][2 * h + 1]);
      }
    }
}

CUtensorMap map_3d(const void* base, long long rows, long long k, int box_rows, int boxes, bool weights) {
  const cuuint64_t dims[3] = {64, static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(k / 64)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(k) * 2, 128};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_rows), static_cast<cuuint32_t>(boxes)};
  const cuuint32_t es[3] = {1, 1, 1};
  CUtensorMap m;
  CU_CHECK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  weights ? CU_TENSOR_MAP_L2_PROMOTION_NONE : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

struct Variant {
  const char* name;
  int rows, slots, x_once;
};
const Variant kVariants[] = {
    {"r8_s4_xo", 8, 4, 1},  {"r8_s5_xo", 8, 5, 1},  {"r8_s6_xo", 8, 6, 1}, {"r8_s3_xs", 8, 3, 0},
    {"r8_s4_xs", 8, 4, 0},  {"r16_s4_xo", 16, 4, 1}, {"r16_s5_xo", 16, 5, 1}, {"r16_s4_xs", 16, 4, 0},
};

int g_pad_x_rows = 0;  // 1: x boxes of M rounded up to 8 rows (set when the M-row boxes fail the check)
int x_rows_for(int m) { return g_pad_x_rows ? (m + 7) / 8 * 8 : m; }

size_t smem_of(const Variant& v, int m, int k) {
  return v.rows == 8 ? rs_smem<8>(x_rows_for(m), k, v.slots, v.x_once) : rs_smem<16>(x_rows_for(m), k, v.slots, v.x_once);
}
bool fits(const Variant& v, int m, int k, size_t max_smem) {
  if (v.x_once && (size_t)x_rows_for(m) * k * 2 > 64 * 1024) return false;  // x once for M x K of at most 64 KB
  return smem_of(v, m, k) <= max_smem;
}

void launch(const Variant& v, const CUtensorMap& w, const CUtensorMap& x, const RsParams& p, cudaStream_t s) {
  const int tiles = (p.n + v.rows - 1) / v.rows;
  if (v.rows == 8)
    launch_pdl(rs_kernel<8>, dim3(tiles), dim3(kThreads), smem_of(v, p.m, p.k), s, w, x, p);
  else
    launch_pdl(rs_kernel<16>, dim3(tiles), dim3(kThreads), smem_of(v, p.m, p.k), s, w, x, p);
}

RsParams params(const Variant& v, bf16* y, int m, int n, int k) {
  RsParams p{};
  p.y = y, p.m = m, p.n = n, p.k = k, p.slots = v.slots, p.x_once = v.x_once, p.x_rows = x_rows_for(m);
  const int boxes = kStage / (v.rows * 128);
  p.k_stages = (k + 64 * boxes - 1) / (64 * boxes);
  p.x_box = x_box_for(p.k_stages, boxes), p.x_copies = x_copies_for(p.k_stages, boxes);
  return p;
}

CUtensorMap x_map_for(const Variant& v, const bf16* x, int m, int k) {
  const int boxes = kStage / (v.rows * 128);
  const int k_stages = (k + 64 * boxes - 1) / (64 * boxes);
  return map_3d(x, m, k, x_rows_for(m), v.x_once ? x_box_for(k_stages, boxes) : boxes, false);
}

// Bitwise against an FP32 reference on small integers (exact sums, rounded once as the kernel rounds).
bool check(const Variant& v, int m, int n, int k, cudaStream_t s) {
  std::vector<bf16> hw((size_t)n * k), hx((size_t)m * k);
  std::vector<float> fw(hw.size()), fx(hx.size());
  unsigned seed = 12345u + n + 7u * k + 131u * m;
  auto rnd = [&] { seed = seed * 1664525u + 1013904223u; return static_cast<int>((seed >> 16) % 5) - 2; };
  for (size_t i = 0; i < hw.size(); ++i) fw[i] = (float)rnd(), hw[i] = __float2bfloat16(fw[i]);
  for (size_t i = 0; i < hx.size(); ++i) fx[i] = (float)rnd(), hx[i] = __float2bfloat16(fx[i]);
  bf16 *w, *x, *y;
  CHECK(cudaMalloc(&w, hw.size() * 2));
  CHECK(cudaMalloc(&x, hx.size() * 2));
  CHECK(cudaMalloc(&y, (size_t)m * n * 2));
  CHECK(cudaMemcpy(w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(y, 0xff, (size_t)m * n * 2));
  const CUtensorMap wm = map_3d(w, n, k, v.rows, kStage / (v.rows * 128), true), xm = x_map_for(v, x, m, k);
  launch(v, wm, xm, params(v, y, m, n, k), s);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGetLastError());
  std::vector<bf16> hy((size_t)m * n);
  CHECK(cudaMemcpy(hy.data(), y, hy.size() * 2, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int t = 0; t < m; ++t)
    for (int r = 0; r < n; ++r) {
      float ref = 0.f;
      for (int i = 0; i < k; ++i) ref += fx[(size_t)t * k + i] * fw[(size_t)r * k + i];
      const bf16 want = __float2bfloat16(ref);
      if (std::memcmp(&want, &hy[(size_t)t * n + r], 2) != 0 && bad++ < 3)
        std::printf("#   mismatch %s m=%d n=%d k=%d token %d row %d: got %f want %f\n", v.name, m, n, k, t, r,
                    __bfloat162float(hy[(size_t)t * n + r]), ref);
    }
  CHECK(cudaFree(w));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return bad == 0;
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const size_t max_smem = prop.sharedMemPerBlockOptin;
  std::printf("# %s SMs=%d L2=%d MiB smem/block %zu\n", prop.name, sms, prop.l2CacheSize >> 20, max_smem);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaFuncSetAttribute(rs_kernel<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)max_smem));
  CHECK(cudaFuncSetAttribute(rs_kernel<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)max_smem));
  const int chain_smem_max = 1024 + 7 * 16384;
  CHECK(cudaFuncSetAttribute(skinnygemm::cuda::chain_floor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             chain_smem_max));

  // Correctness first: N tails (100, 2100), K not a multiple of a stage (1088 = 17 boxes), M across 8.
  bool all_ok = true;
  struct C { int m, n, k; };
  const C checks[] = {{1, 2112, 7168}, {3, 100, 1088}, {8, 2100, 2048}, {9, 264, 1024}, {16, 136, 4160}, {2, 1536, 7168}};
  // First whether x boxes of M rows (not a multiple of 8) read back through the address swizzle; else pad them to 8.
  for (int pad = 0; pad < 2; ++pad) {
    g_pad_x_rows = pad;
    bool ok = true;
    for (const C& c : {C{3, 100, 1088}, C{9, 264, 1024}})
      for (const Variant& v : {kVariants[0], kVariants[3]}) ok &= check(v, c.m, c.n, c.k, s);
    std::printf("# x boxes of %s rows: %s\n", pad ? "M rounded up to 8" : "M", ok ? "ok" : "FAIL");
    if (ok) break;
  }
  for (const Variant& v : kVariants)
    for (const C& c : checks) {
      if (!fits(v, c.m, c.k, max_smem)) continue;
      const bool ok = check(v, c.m, c.n, c.k, s);
      all_ok &= ok;
      std::printf("check,%dx%d,%s,%d,%s\n", c.n, c.k, v.name, c.m, ok ? "ok" : "FAIL");
    }
  std::printf("# checks %s (x boxes padded: %d)\n", all_ok ? "all ok" : "FAILED", g_pad_x_rows);
  fflush(stdout);

  struct Shape { const char* name; int n, k; };
  const Shape shapes[] = {{"qkv_a", 2112, 7168}, {"g_proj", 1536, 7168}, {"qkv_a_g", 3648, 7168},
                          {"q_b", 3072, 1536},   {"kv_b", 4096, 512}};
  const int ms[] = {1, 2, 4, 8, 16};
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  uint32_t* words;
  CHECK(cudaMalloc(&words, 2 * 4096 * 4));
  CHECK(cudaMemset(words, 0, 2 * 4096 * 4));
  for (const Shape& sh : shapes) {
    const size_t wbytes = (size_t)sh.n * sh.k * 2;
    const int copies = std::min<int>(64, std::max<int>(2, (int)(4.0 * prop.l2CacheSize / wbytes) + 1));
    std::vector<bf16*> ws(copies);
    for (int i = 0; i < copies; ++i) {
      CHECK(cudaMalloc(&ws[i], wbytes));
      CHECK(cudaMemset(ws[i], 0x3c, wbytes));
    }
    bf16 *x, *y;
    CHECK(cudaMalloc(&x, (size_t)16 * sh.k * 2));
    CHECK(cudaMemset(x, 0x3c, (size_t)16 * sh.k * 2));
    CHECK(cudaMalloc(&y, (size_t)16 * sh.n * 2));
    // The chain floor of these bytes: the bench's rings (streamed 2 x 4 and 2 x 6 slots, folding 2 x 6), fastest.
    struct Ring { int slots, streamed; };
    const Ring rings[] = {{4, 1}, {6, 1}, {6, 0}};
    std::vector<double> floor_us;
    std::vector<std::string> names;
    std::vector<std::vector<double>> us;
    std::vector<int> m_of;
    for (int round = 0; round < rounds; ++round) {
      double best = 1e9;
      for (const Ring& r : rings) {
        // The footprint padded so that no third CTA fits beside two (chain_floor.cuh).
        const int smem = std::max(1024 + r.slots * 16384, (int)(prop.sharedMemPerMultiprocessor / 3) + 1024);
        const double t = time_launches(s, [&](int i) {
          launch_pdl(skinnygemm::cuda::chain_floor_kernel, dim3(2 * sms), dim3(skinnygemm::cuda::kChainThreads),
                     (size_t)std::min(smem, chain_smem_max), s, (const char*)ws[i % copies], (long long)wbytes, r.slots,
                     16384, (const uint32_t*)(words + (i & 1) * 4096), (uint32_t*)(words + ((i + 1) & 1) * 4096),
                     r.streamed);
        });
        std::printf("rs,%s,chain_%d_%s,0,%d,%.3f\n", sh.name, r.slots, r.streamed ? "streamed" : "fold", round, t);
        best = std::min(best, t);
      }
      floor_us.push_back(best);
      size_t vi = 0;
      for (int m : ms)
        for (const Variant& v : kVariants) {
          if (!fits(v, m, sh.k, max_smem)) continue;
          std::vector<CUtensorMap> wm(copies);
          for (int i = 0; i < copies; ++i) wm[i] = map_3d(ws[i], sh.n, sh.k, v.rows, kStage / (v.rows * 128), true);
          const CUtensorMap xm = x_map_for(v, x, m, sh.k);
          const RsParams p = params(v, y, m, sh.n, sh.k);
          const double t = time_launches(s, [&](int i) { launch(v, wm[i % copies], xm, p, s); });
          std::printf("rs,%s,%s,%d,%d,%.3f\n", sh.name, v.name, m, round, t);
          if (round == 0) names.push_back(v.name), us.emplace_back(), m_of.push_back(m);
          us[vi++].push_back(t);
        }
      fflush(stdout);
    }
    double fl = 0;
    for (double t : floor_us) fl += t;
    fl /= floor_us.size();
    std::printf("# %s %dx%d: chain floor %.2f us (best of the rings, mean of rounds)\n", sh.name, sh.n, sh.k, fl);
    for (size_t i = 0; i < names.size(); ++i) {
      double m = 0;
      for (double t : us[i]) m += t;
      m /= us[i].size();
      std::printf("#   M=%-2d %-10s %7.2f us  %.3f x floor\n", m_of[i], names[i].c_str(), m, m / fl);
    }
    for (bf16* w : ws) CHECK(cudaFree(w));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
  }
  CHECK(cudaGetLastError());
  return all_ok ? 0 : 2;
}
