// TMA-family development probe: correctness (bitwise on small integers, same bits twice) and timing of every
// config against the dependent-chain floor, the stream-read limit and cuBLASLt (default, and with reduced-
// precision split-K reductions allowed as torch allows them), all in one process.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Iinclude tools/probes/tma_family.cu -lcuda -lcublasLt
// Output: CSV rows "time,<shape>,<m>,<what>,<config>,<us>" and "check,..." lines, then a summary table.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "lab/cuda/chain_floor.cuh"
#include "kernels/tma/tma_gemm.cuh"
#include "probe_harness.h"

using bf16 = __nv_bfloat16;
using namespace skinnygemm::tma;
using probe::launch_pdl;
using probe::time_launches;

#define LT_CHECK(x)                                                         \
  do {                                                                      \
    cublasStatus_t s_ = (x);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                      \
      std::fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, (int)s_); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

static int g_sms = 132;

// 2D maps and a copy per 64-wide box (TmaParams::box3d stays 0): since session 25 the library copies a whole stage
// in one 3D copy where K % 64 == 0, ~24 ns a copy less (docs/kernels.md "Session 25"); this probe's rings still pay it.
// The weights without L2 promotion, as the library since session 31 (256 bytes cost its ring 8-10% from 90 MB), x with.
CUtensorMap make_map(const void* ptr, uint64_t inner, uint64_t outer, uint64_t row_bytes, uint32_t box_inner,
                     uint32_t box_outer, CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  CUtensorMap m;
  cuuint64_t dims[2] = {inner, outer};
  cuuint64_t strides[1] = {row_bytes};
  cuuint32_t box[2] = {box_inner, box_outer};
  cuuint32_t es[2] = {1, 1};
  CU_CHECK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(ptr), dims, strides, box,
                                  es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

struct Cfg {
  int rows, tile_m, stages, ctas_per_sm, min_units, boxes = 1, cluster = 0;  // cluster 0: stream-K, 1: a CTA per tile
  int lead = -1;  // >= 0: the lead split (ctas_per_sm x SMs CTAs, part 0 has `lead` more stages)
  int handoff = 0;  // lead split: 1 = partials polled for a sentinel (the library: token tiles <= 16)
  bool is_lead() const { return lead >= 0; }
  std::string name() const {
    char b[80];
    if (is_lead())
      std::snprintf(b, sizeof b, "tma_m%d_r%d_b%d_s%d_c%d_d%d%s", tile_m, rows, boxes, stages, ctas_per_sm, lead,
                    handoff ? "_h1" : "");
    else if (cluster >= 1)
      std::snprintf(b, sizeof b, "tma_m%d_r%d_b%d_s%d_x%d", tile_m, rows, boxes, stages, cluster);
    else
      std::snprintf(b, sizeof b, "tma_m%d_r%d_b%d_s%d_c%d_u%d", tile_m, rows, boxes, stages, ctas_per_sm, min_units);
    return b;
  }
};

using KernelFn = void (*)(CUtensorMap, CUtensorMap, TmaParams);
static int g_ablate = 0;  // 1: no split reduction, 2: ring only (timing of the ingredients)
template <int R, int B, int A>
KernelFn kernel_for_tile(int tile_m) {
  switch (tile_m) {
    case 8: return tma_gemm_kernel<bf16, R, 8, B, A>;
    case 16: return tma_gemm_kernel<bf16, R, 16, B, A>;
    case 32: return tma_gemm_kernel<bf16, R, 32, B, A>;
    default: return tma_gemm_kernel<bf16, R, 64, B, A>;
  }
}
template <int R, int A>
KernelFn kernel_boxes(const Cfg& c) {
  return c.boxes == 2 ? kernel_for_tile<R, 2, A>(c.tile_m) : kernel_for_tile<R, 1, A>(c.tile_m);
}
template <int A>
KernelFn kernel_ablate(const Cfg& c) {
  switch (c.rows) {
    case 16: return kernel_boxes<16, A>(c);
    case 32: return kernel_boxes<32, A>(c);
    case 64: return kernel_boxes<64, A>(c);
    default: return kernel_boxes<128, A>(c);
  }
}
KernelFn kernel_for(const Cfg& c) {
  return g_ablate == 1 ? kernel_ablate<1>(c) : g_ablate == 2 ? kernel_ablate<2>(c) : kernel_ablate<0>(c);
}

struct Workspace {
  float* partials = nullptr;
  unsigned* counters = nullptr;
  float* lead_partials = nullptr;
  Workspace() {
    CHECK(cudaMalloc(&partials, partial_floats(4 * 132, 128, 64) * sizeof(float)));
    CHECK(cudaMalloc(&counters, 1 << 20));
    CHECK(cudaMemset(counters, 0, 1 << 20));
    CHECK(cudaMalloc(&lead_partials, partial_floats(4 * 132, 128, 64) * sizeof(float)));
    CHECK(cudaMemset(lead_partials, 0xff, partial_floats(4 * 132, 128, 64) * sizeof(float)));  // the sentinel
  }
};
static Workspace* g_ws;

struct Launch {
  KernelFn fn;
  CUtensorMap wm, xm;
  TmaParams p;
  int ctas, smem, cluster;
};

Launch plan(const Cfg& c, const bf16* x, const bf16* w, bf16* y, int m, int n, int k) {
  Launch l;
  l.fn = kernel_for(c);
  l.wm = make_map(w, k, n, 2ull * k, kStageK, c.rows, CU_TENSOR_MAP_L2_PROMOTION_NONE);
  l.xm = make_map(x, k, m, 2ull * k, kStageK, c.tile_m);
  const Grid g = c.cluster >= 1 ? cluster_grid_for(n, k, c.rows, c.boxes, c.cluster)
                 : c.is_lead()  ? lead_split_grid_for(n, k, c.rows, c.boxes, c.ctas_per_sm, c.lead, g_sms)
                                : grid_for(n, k, c.rows, c.boxes, c.ctas_per_sm, c.min_units, g_sms);
  std::memset(&l.p, 0, sizeof l.p);
  l.p.y = y;
  l.p.m = m, l.p.n = n, l.p.k = k, l.p.ldy = n;
  // As the launcher sets it (tma_launch.cu, y_rows_aligned16; y is a cudaMalloc'd row-major [m][n]): the staged epilogue
  // stores y where its rows are 16-byte aligned.
  l.p.y_rows16 = (reinterpret_cast<uintptr_t>(y) % 16 == 0 && n % 8 == 0) ? 1 : 0;
  l.p.k_stages = g.k_stages, l.p.tiles = g.tiles, l.p.units = g.units, l.p.stages = c.stages;
  l.p.cluster = c.cluster > 1 ? c.cluster : 1;
  l.p.parts = g.parts, l.p.lead_stages = g.lead_stages;
  l.p.handoff = c.handoff, l.p.lead_partials = g_ws->lead_partials;
  l.cluster = l.p.cluster;
  l.p.partials = g_ws->partials, l.p.counters = g_ws->counters;
  l.ctas = g.ctas;
  l.smem = smem_bytes(c.rows, c.tile_m, c.stages, c.boxes, c.cluster, c.is_lead());
  CHECK(cudaFuncSetAttribute(l.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, l.smem));
  return l;
}
void run(const Launch& l, cudaStream_t s) {
  if (l.cluster == 1) return launch_pdl(l.fn, dim3(l.ctas), dim3(kThreads), (size_t)l.smem, s, l.wm, l.xm, l.p);
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(l.ctas);
  c.blockDim = dim3(kThreads);
  c.dynamicSmemBytes = l.smem;
  c.stream = s;
  cudaLaunchAttribute a[2];
  a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a[0].val.programmaticStreamSerializationAllowed = 1;
  a[1].id = cudaLaunchAttributeClusterDimension;
  a[1].val.clusterDim.x = l.cluster, a[1].val.clusterDim.y = 1, a[1].val.clusterDim.z = 1;
  c.attrs = a;
  c.numAttrs = 2;
  CHECK(cudaLaunchKernelEx(&c, l.fn, l.wm, l.xm, l.p));
}

// ---- data ----
__global__ void fill_kernel(bf16* p, size_t n, uint32_t seed, int integers) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    p[i] = integers ? __float2bfloat16((float)((int)(h % 5) - 2)) : __float2bfloat16(((h & 0xffff) / 65536.f - 0.5f));
  }
}
void fill(bf16* p, size_t n, uint32_t seed, bool integers) {
  fill_kernel<<<1024, 256>>>(p, n, seed, integers);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());  // the probe's stream does not wait for the legacy stream
}
__global__ void ref_kernel(const bf16* x, const bf16* w, float* y, int m, int n, int k) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x, token = blockIdx.y;
  if (row >= n) return;
  float s = 0.f;
  for (int i = 0; i < k; ++i) s += __bfloat162float(x[(size_t)token * k + i]) * __bfloat162float(w[(size_t)row * k + i]);
  y[(size_t)token * n + row] = s;
}

// ---- the dependent-chain floor: the benchmarks' own kernel (cuda/chain_floor.cuh) ----

// ---- the stream-read limit: plain 16-byte loads, never waiting before the end ----
__global__ void __launch_bounds__(512) stream_kernel(const uint4* src, size_t n16, unsigned* out) {
  pdl_launch_dependents();
  unsigned acc = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "l"(src + i + u * stride));
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n16; i += stride) acc ^= src[i].x;
  pdl_wait();
  if (acc == 0x12345678u) out[0] = acc;
}

// ---- cuBLASLt ----
struct Lt {
  cublasLtHandle_t h;
  void* ws;
  Lt() {
    LT_CHECK(cublasLtCreate(&h));
    CHECK(cudaMalloc(&ws, 32 << 20));
  }
  struct P {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
  };
  P plan(int m, int n, int k, bool reduced) {
    P p;
    LT_CHECK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    LT_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof nn));
    LT_CHECK(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, k, n, k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, k, m, k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_16BF, n, m, n));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    size_t wsb = 32 << 20;
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    uint32_t mask = reduced ? CUBLASLT_REDUCTION_SCHEME_MASK : CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask));
    cublasLtMatmulHeuristicResult_t r[1];
    int found = 0;
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(h, p.op, p.a, p.b, p.d, p.d, pref, 1, r, &found));
    p.algo = r[0].algo;
    cublasLtMatmulPreferenceDestroy(pref);
    return p;
  }
  void run(const P& p, const bf16* x, const bf16* w, bf16* y, cudaStream_t s) {
    const float one = 1.f, zero = 0.f;
    LT_CHECK(cublasLtMatmul(h, p.op, &one, w, p.a, x, p.b, &zero, y, p.d, y, p.d, &p.algo, ws, 32 << 20, s));
  }
};

// ---- checks ----
int check_case(cudaStream_t s, int n, int k, int m, const Cfg& c) {
  bf16 *x, *w, *y;
  float* ref;
  CHECK(cudaMalloc(&x, (size_t)m * k * 2));
  CHECK(cudaMalloc(&w, (size_t)n * k * 2));
  CHECK(cudaMalloc(&y, (size_t)m * n * 2));
  CHECK(cudaMalloc(&ref, (size_t)m * n * 4));
  fill(x, (size_t)m * k, 11 + m, true);
  fill(w, (size_t)n * k, 7 + n, true);
  CHECK(cudaMemset(y, 0xff, (size_t)m * n * 2));  // NaN poison: every output must be written
  ref_kernel<<<dim3((n + 127) / 128, m), 128>>>(x, w, ref, m, n, k);
  CHECK(cudaDeviceSynchronize());
  Launch l = plan(c, x, w, y, m, n, k);
  run(l, s);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGetLastError());
  std::vector<uint16_t> hy((size_t)m * n), hy2((size_t)m * n);
  std::vector<float> hr((size_t)m * n);
  CHECK(cudaMemcpy(hy.data(), y, hy.size() * 2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hr.data(), ref, hr.size() * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < hy.size(); ++i) {
    const bf16 want = __float2bfloat16(hr[i]);
    uint16_t wb;
    std::memcpy(&wb, &want, 2);
    if (wb != hy[i] && bad++ < 3)
      std::printf("  mismatch %dx%d m=%d %s at token %zu row %zu: got %04x want %04x (%g)\n", n, k, m, c.name().c_str(),
                  i / n, i % n, hy[i], wb, hr[i]);
  }
  // Same bits twice on random data (the split reduction's order is fixed).
  fill(x, (size_t)m * k, 5, false);
  fill(w, (size_t)n * k, 6, false);
  run(l, s);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(hy.data(), y, hy.size() * 2, cudaMemcpyDeviceToHost));
  run(l, s);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(hy2.data(), y, hy2.size() * 2, cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(hy.data(), hy2.data(), hy.size() * 2) == 0;
  std::printf("check,%dx%d,%d,%s,ctas=%d,%s,%s\n", n, k, m, c.name().c_str(), l.ctas, bad ? "FAIL" : "ok",
              same ? "same-bits" : "BITS-DIFFER");
  cudaFree(x), cudaFree(w), cudaFree(y), cudaFree(ref);
  return (bad ? 1 : 0) + (same ? 0 : 1);
}

int tile_for(int m) { return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64; }

std::vector<Cfg> configs_for(int m) {
  std::vector<Cfg> out;
  const int tm = tile_for(m);
  for (int boxes : {1, 2})
    for (int rows : {64, 128})
      for (int stages : {3, 4, 6, 8})
        for (int c : {1, 2})
          for (int mu : {1, 2, 8}) {
            const int smem = smem_bytes(rows, tm, stages, boxes);
            if (smem > 110 * 1024 || smem < 40 * 1024) continue;
            out.push_back({rows, tm, stages, c, mu, boxes});
          }
  for (int boxes : {1, 2})
    for (int rows : {64, 128})
      for (int stages : {3, 4, 6})
        for (int cl : {2, 4, 8}) {
          const int smem = smem_bytes(rows, tm, stages, boxes, cl);
          if (smem > 110 * 1024 || smem < 40 * 1024) continue;
          out.push_back({rows, tm, stages, 1, 1, boxes, cl});
        }
  // One CTA per row tile (x1), and 16- and 32-row tiles whose warps also split K, alone or by clusters of 2 and 4.
  for (int boxes : {1, 2})
    for (int rows : {16, 32, 64, 128})
      for (int stages : {3, 4, 6, 8, 12, 16, 24})
        for (int cl : {1, 2, 4}) {
          if (rows >= 64 && (cl > 1 || stages > 6)) continue;
          const int smem = smem_bytes(rows, tm, stages, boxes, cl);
          if (smem > 110 * 1024 || smem < 40 * 1024) continue;
          out.push_back({rows, tm, stages, 0, 0, boxes, cl});
        }
  // The lead split: two CTAs per SM, part 0 of each tile `lead` stages longer.
  for (int boxes : {1, 2})
    for (int rows : {32, 64, 128})
      for (int stages : {3, 4, 5, 6, 7, 8})
        for (int lead : {0, 3, 6, 9, 12, 16})
          for (int mode = 0; mode < 4; mode += 2) {
            const int smem = smem_bytes(rows, tm, stages, boxes, 1, true);
            if (smem > 113 * 1024 || smem < 40 * 1024) continue;
            Cfg c{rows, tm, stages, 2, 0, boxes, 0};
            c.lead = lead, c.handoff = mode >> 1;
            out.push_back(c);
          }
  // Rings of 110-113 KB (two CTAs per SM still fit: 2 x (113 + 1) KB = 228 KB), 5-stage rings.
  for (int boxes : {1, 2})
    for (int rows : {16, 32, 64, 128})
      for (int stages : {5, 6, 7, 12, 16, 24})
        for (int cl : {0, 1, 2, 4, 8}) {
          const int smem = smem_bytes(rows, tm, stages, boxes, cl);
          const bool fresh = stages == 5 || stages == 7 || smem > 110 * 1024;
          if (!fresh || smem > 113 * 1024 || smem < 40 * 1024) continue;
          if (cl == 0) out.push_back({rows, tm, stages, 2, 1, boxes, 0});
          else out.push_back({rows, tm, stages, 0, 0, boxes, cl});
        }
  if (const char* only = std::getenv("PROBE_ONLY")) {  // e.g. "r16,r32": configs whose name holds one of them
    std::vector<Cfg> kept;
    for (const Cfg& c : out) {
      const std::string n = c.name(), list = only;
      for (size_t b = 0; b <= list.size();) {
        const size_t e = std::min(list.find(',', b), list.size());
        if (e > b && n.find(list.substr(b, e - b)) != std::string::npos) { kept.push_back(c); break; }
        b = e + 1;
      }
    }
    out = kept;
  }
  return out;
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  std::printf("# %s SMs=%d L2=%d MiB\n", prop.name, g_sms, prop.l2CacheSize >> 20);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  g_ws = new Workspace();
  const bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;

  // Correctness: tails in N and K, M straddling the token tiles, both row tiles, split and whole tiles.
  int failures = 0;
  struct Case { int n, k, m; };
  const Case cases[] = {{3648, 7168, 1}, {3648, 7168, 16}, {3648, 7168, 64}, {144, 7168, 1}, {144, 7168, 5},
                        {1000, 1000, 7}, {1000, 1000, 33}, {1536, 128, 9}, {7168, 1536, 4}, {130, 72, 3},
                        {1, 64, 1}, {20, 8, 2}};
  for (const Case& cs : cases)
    for (int rows : {64, 128})
      for (int c : {1, 2}) failures += check_case(s, cs.n, cs.k, cs.m, {rows, tile_for(cs.m), 4, c, 1, c});  // boxes = c: both widths
  for (const Case& cs : cases)
    for (int rows : {16, 32})
      for (int cl : {1, 2})
        if ((cs.k + 127) / 128 >= cl) failures += check_case(s, cs.n, cs.k, cs.m, {rows, tile_for(cs.m), 8, 0, 0, 2, cl});
  for (const Case& cs : cases)
    for (int cl : {2, 8})
      if ((cs.k + 127) / 128 >= cl) failures += check_case(s, cs.n, cs.k, cs.m, {64, tile_for(cs.m), 3, 1, 1, 2, cl});
  for (const Case& cs : cases)
    for (int rows : {32, 64, 128})
      for (int lead : {0, 3, 12})
        for (int mode = 0; mode < 4; mode += 2) {
          Cfg c{rows, tile_for(cs.m), 4, 2, 0, 1, 0};  // one box: the 128-row, 64-token ring fits
          c.lead = lead, c.handoff = mode >> 1;
          failures += check_case(s, cs.n, cs.k, cs.m, c);
        }
  failures += check_case(s, 2112, 7168, 8, {128, 8, 6, 1, 8});
  failures += check_case(s, 2112, 7168, 64, {128, 64, 4, 2, 8});
  std::printf("# checks: %d failures\n", failures);

  struct Shape { const char* name; int n, k; };
  const std::vector<Shape> shapes = {{"qkv_a_g", 3648, 7168}, {"qkv_a", 2112, 7168},   {"gate", 1536, 7168},
                                     {"eh_proj", 7168, 14336}, {"f_ab", 144, 7168},     {"f_b", 1536, 128},
                                     {"o_proj", 7168, 1536},   {"lm_head", 20480, 7168}, {"kda_in", 6288, 7168},
                                     {"router", 896, 7168},    {"q_b", 2304, 1536},      {"shared_down", 7168, 768}};
  std::vector<int> ms = quick ? std::vector<int>{1, 8, 16, 64} : std::vector<int>{1, 4, 8, 16, 32, 64};
  if (const char* m_list = std::getenv("PROBE_M")) {  // e.g. "1,16"
    ms.clear();
    for (const char* q = m_list; *q;) {
      ms.push_back(std::atoi(q));
      while (*q && *q != ',') ++q;
      if (*q) ++q;
    }
  }
  const char* shape_filter = std::getenv("PROBE_SHAPES");  // e.g. "qkv_a,gate": only these shapes
  Lt lt;
  std::printf("%-12s %3s | %8s %8s %8s %8s %8s %8s %8s | %6s %6s %6s | %s\n", "shape", "M", "tma", "nofixup", "ring",
              "chain", "stream", "lt", "lt_torch", "t/ch", "str/t", "lt/t", "best config");
  for (const Shape& sh : shapes) {
    if (shape_filter && std::string(",") .append(shape_filter).append(",").find(std::string(",") + sh.name + ",") ==
                            std::string::npos)
      continue;
    const size_t wbytes = (size_t)sh.n * sh.k * 2;
    const int copies = std::min<int>(64, std::max<int>(2, (int)(4.0 * prop.l2CacheSize / wbytes) + 1));
    std::vector<bf16*> ws(copies);
    for (int i = 0; i < copies; ++i) {
      CHECK(cudaMalloc(&ws[i], wbytes));
      fill(ws[i], wbytes / 2, 100 + i, false);
    }
    bf16 *x[2], *y[2];
    for (int i = 0; i < 2; ++i) {
      CHECK(cudaMalloc(&x[i], (size_t)64 * sh.k * 2));
      CHECK(cudaMalloc(&y[i], (size_t)64 * sh.n * 2));
      fill(x[i], (size_t)64 * sh.k, 3 + i, false);
    }
    unsigned* words;
    CHECK(cudaMalloc(&words, 2 * 4096 * 4));
    CHECK(cudaMemset(words, 0, 2 * 4096 * 4));
    // Floors for the bytes (independent of M).
    double stream_us = 1e9, chain_us = 1e9;
    std::string chain_cfg;
    for (int gm : {1, 2, 4})
      stream_us = std::min(stream_us, time_launches(s, [&](int i) {
        launch_pdl(stream_kernel, dim3(gm * g_sms), dim3(512), 0, s, (const uint4*)ws[i % copies], wbytes / 16, words);
      }));
    struct Ring { int gm, S, B; };
    for (Ring r : {Ring{1, 6, 16384}, Ring{2, 6, 16384}, Ring{1, 12, 8192}, Ring{2, 12, 8192}, Ring{3, 8, 8192},
                   Ring{2, 24, 4096}, Ring{3, 16, 4096}, Ring{4, 12, 4096}}) {
      const int smem = 1024 + r.S * r.B;
      CHECK(cudaFuncSetAttribute(skinnygemm::cuda::chain_floor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      const double t = time_launches(s, [&](int i) {
        launch_pdl(skinnygemm::cuda::chain_floor_kernel, dim3(r.gm * g_sms), dim3(skinnygemm::cuda::kChainThreads),
                   (size_t)smem, s, (const char*)ws[i % copies], (long long)wbytes, r.S, r.B,
                   (const uint32_t*)(words + (i & 1) * 4096), (uint32_t*)(words + ((i + 1) & 1) * 4096), 0);
      });
      if (t < chain_us) chain_us = t, chain_cfg = std::to_string(r.gm) + "xSM_S" + std::to_string(r.S) + "_B" + std::to_string(r.B);
    }
    std::printf("time,%s,0,stream,-,%.3f\ntime,%s,0,chain,%s,%.3f\n", sh.name, stream_us, sh.name, chain_cfg.c_str(), chain_us);
    for (int m : ms) {
      double best = 1e9;
      std::string best_name;
      // PROBE_CONFIGS (comma-separated names): only these configs, each with its two ablations (session 24).
      const char* only = std::getenv("PROBE_CONFIGS");
      auto picked = [&](const Cfg& c) {
        return !only || (std::string(",") + only + ",").find("," + c.name() + ",") != std::string::npos;
      };
      for (const Cfg& c : configs_for(m)) {
        if (!picked(c)) continue;
        if (only) {
          double t3[3];
          for (int a = 0; a <= 2; ++a) {
            g_ablate = a;
            std::vector<Launch> ls;
            for (int i = 0; i < copies; ++i)
              for (int j = 0; j < 2; ++j) ls.push_back(plan(c, x[j], ws[i], y[j], m, sh.n, sh.k));
            g_ablate = 0;
            t3[a] = time_launches(s, [&](int i) { run(ls[(i % copies) * 2 + (i & 1)], s); });
          }
          std::printf("%-12s %3d | %8.2f %8.2f %8.2f %8.2f %8.2f | %s\n", sh.name, m, t3[0], t3[1], t3[2], chain_us,
                      stream_us, c.name().c_str());
          std::fflush(stdout);
          continue;
        }
        std::vector<Launch> ls;
        for (int i = 0; i < copies; ++i)
          for (int j = 0; j < 2; ++j) ls.push_back(plan(c, x[j], ws[i], y[j], m, sh.n, sh.k));
        const double t = time_launches(s, [&](int i) { run(ls[(i % copies) * 2 + (i & 1)], s); });
        std::printf("time,%s,%d,tma,%s,%.3f\n", sh.name, m, c.name().c_str(), t);
        if (std::getenv("PROBE_RING_ALL")) {  // the ring alone of every config: where the streaming itself is lost
          g_ablate = 2;
          std::vector<Launch> lr;
          for (int i = 0; i < copies; ++i)
            for (int j = 0; j < 2; ++j) lr.push_back(plan(c, x[j], ws[i], y[j], m, sh.n, sh.k));
          g_ablate = 0;
          const double tr = time_launches(s, [&](int i) { run(lr[(i % copies) * 2 + (i & 1)], s); });
          std::printf("time,%s,%d,ring,%s,%.3f\n", sh.name, m, c.name().c_str(), tr);
        }
        if (t < best) best = t, best_name = c.name();
      }
      if (only) continue;
      // The ingredients of the best config: without the split reduction, and the ring alone.
      const Cfg* bc = nullptr;
      for (const Cfg& c : configs_for(m)) if (c.name() == best_name) bc = &c;
      double abl[2] = {0, 0};
      std::vector<Cfg> cs = configs_for(m);
      for (const Cfg& c : cs)
        if (c.name() == best_name)
          for (int a = 1; a <= 2; ++a) {
            g_ablate = a;
            std::vector<Launch> ls;
            for (int i = 0; i < copies; ++i)
              for (int j = 0; j < 2; ++j) ls.push_back(plan(c, x[j], ws[i], y[j], m, sh.n, sh.k));
            abl[a - 1] = time_launches(s, [&](int i) { run(ls[(i % copies) * 2 + (i & 1)], s); });
            g_ablate = 0;
          }
      (void)bc;
      std::printf("time,%s,%d,tma_nofixup,%s,%.3f\ntime,%s,%d,tma_ringonly,%s,%.3f\n", sh.name, m, best_name.c_str(), abl[0],
                  sh.name, m, best_name.c_str(), abl[1]);
      double ltt[2];
      for (int red = 0; red < 2; ++red) {
        Lt::P p = lt.plan(m, sh.n, sh.k, red == 1);
        ltt[red] = time_launches(s, [&](int i) { lt.run(p, x[i & 1], ws[i % copies], y[i & 1], s); });
      }
      std::printf("time,%s,%d,cublaslt,-,%.3f\ntime,%s,%d,cublaslt_torch,-,%.3f\n", sh.name, m, ltt[0], sh.name, m, ltt[1]);
      std::printf("%-12s %3d | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f | %6.3f %6.3f %6.3f | %s\n", sh.name, m, best,
                  abl[0], abl[1], chain_us,
                  stream_us, ltt[0], ltt[1], best / chain_us, stream_us / best, std::min(ltt[0], ltt[1]) / best,
                  best_name.c_str());
      std::fflush(stdout);
    }
    for (bf16* p : ws) cudaFree(p);
    for (int i = 0; i < 2; ++i) cudaFree(x[i]), cudaFree(y[i]);
    cudaFree(words);
  }
  return 0;
}
