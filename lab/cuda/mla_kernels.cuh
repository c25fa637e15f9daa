// The MLA layer's kernels between the GEMMs (lab/mla.h has the formulas): RMSNorm (with the kv append's tail
// copy), the per-head absorb products (W_UK, and W_UV with the sigmoid gate), and the absorbed decode attention:
// a split kernel on the tensor cores (mma.sync m16n8k16, BF16 in, FP32 accumulate) over chunks of each sequence's
// latent cache, then a combine kernel over the chunks in a fixed order (deterministic, no atomics).
//
// Every kernel starts with griddepcontrol.wait: they are launched through cuda::launch (PDL when on), so they may
// start while the previous kernel still runs and must not read or write anything before it has finished. They do
// not trigger their dependents early; the implicit trigger at exit keeps the chain ordered.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace skinnygemm::cuda::mla {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ void wait_previous_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// ---- RMSNorm ----------------------------------------------------------------------------------------------

struct NormParams {
  const bf16* x;
  long long ldx;
  bf16* y;
  long long ldy;
  const bf16* gamma;
  int width, tail;
  float eps;
};

constexpr int kNormThreads = 256;

// One block per row: y = bf16(x · rsqrt(mean(x^2) + eps) · gamma); then the tail columns copied as they are.
// The block sum is reduced in a fixed order (warps, then warp 0 over the 8 partials): same bits every run.
__global__ void __launch_bounds__(kNormThreads) rmsnorm_kernel(NormParams p) {
  wait_previous_grid();
  __shared__ float partial[kNormThreads / 32];
  __shared__ float inv;
  const bf16* x = p.x + blockIdx.x * p.ldx;
  bf16* y = p.y + blockIdx.x * p.ldy;
  float ss = 0;
  for (int i = threadIdx.x; i < p.width; i += kNormThreads) {
    const float v = __bfloat162float(x[i]);
    ss += v * v;
  }
  ss = warp_sum(ss);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0;
    for (int w = 0; w < kNormThreads / 32; ++w) total += partial[w];
    inv = rsqrtf(total / static_cast<float>(p.width) + p.eps);
  }
  __syncthreads();
  const float r = inv;
  for (int i = threadIdx.x; i < p.width; i += kNormThreads)
    y[i] = __float2bfloat16_rn(__bfloat162float(x[i]) * r * __bfloat162float(p.gamma[i]));
  for (int i = threadIdx.x; i < p.tail; i += kNormThreads) y[p.width + i] = x[p.width + i];
}

// ---- per-head products (absorb) ---------------------------------------------------------------------------

struct HeadProjParams {
  const bf16* x;
  long long ldx, x_head;
  const bf16* w;  // [heads][n][k]
  bf16* y;
  long long ldy, y_head;
  const bf16* gate;  // null: no gate
  long long ldg;
  int m, n, k;
};

constexpr int kHpRows = 16;      // output rows (j) per block
constexpr int kHpChunk = 64;     // k per shared-memory stage
constexpr int kHpThreads = 256;  // kHpRows x 64 tokens = 4 outputs per thread
constexpr int kHpMaxM = 64;

// Block (row tile, head): y[t, h·y_head + j] = bf16(σ · Σ_i x[t, h·x_head + i] w[h][j][i]), FP32 in plain i order.
// Output idx = tid + 256·r maps to (j = idx % 16, t = idx / 16): a warp reads one w row per lane pair (stride
// kHpChunk + 1: no bank conflicts) and two broadcast x rows.
__global__ void __launch_bounds__(kHpThreads) head_proj_kernel(HeadProjParams p) {
  wait_previous_grid();
  __shared__ float xs[kHpMaxM][kHpChunk + 1];
  __shared__ float ws[kHpRows][kHpChunk + 1];
  const int h = blockIdx.y, j0 = blockIdx.x * kHpRows, tid = threadIdx.x;
  const bf16* x = p.x + h * p.x_head;
  const bf16* w = p.w + static_cast<long long>(h) * p.n * p.k;
  float acc[kHpRows * kHpMaxM / kHpThreads] = {};
  for (int k0 = 0; k0 < p.k; k0 += kHpChunk) {
    const int kc = min(kHpChunk, p.k - k0);
    for (int v = tid; v < p.m * kHpChunk; v += kHpThreads) {
      const int t = v / kHpChunk, c = v % kHpChunk;
      xs[t][c] = c < kc ? __bfloat162float(x[t * p.ldx + k0 + c]) : 0.f;
    }
    for (int v = tid; v < kHpRows * kHpChunk; v += kHpThreads) {
      const int r = v / kHpChunk, c = v % kHpChunk;
      ws[r][c] = c < kc && j0 + r < p.n ? __bfloat162float(w[static_cast<long long>(j0 + r) * p.k + k0 + c]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kHpRows * kHpMaxM / kHpThreads; ++i) {
      const int idx = tid + kHpThreads * i, j = idx % kHpRows, t = idx / kHpRows;
      if (t < p.m) {
        float s = acc[i];
        for (int c = 0; c < kc; ++c) s += ws[j][c] * xs[t][c];
        acc[i] = s;
      }
    }
    __syncthreads();  // before the next stage overwrites xs and ws
  }
#pragma unroll
  for (int i = 0; i < kHpRows * kHpMaxM / kHpThreads; ++i) {
    const int idx = tid + kHpThreads * i, j = idx % kHpRows, t = idx / kHpRows;
    if (t >= p.m || j0 + j >= p.n) continue;
    float v = acc[i];
    if (p.gate) v *= 1.0f / (1.0f + __expf(-__bfloat162float(p.gate[t * p.ldg + h * p.n + j0 + j])));
    p.y[t * p.ldy + h * p.y_head + j0 + j] = __float2bfloat16_rn(v);
  }
}

// ---- attention: split kernel ------------------------------------------------------------------------------

constexpr int kLatent = 512, kRope = 64, kRow = kLatent + kRope;  // the cache row of Kimi-K3 / DeepSeek-V3 MLA
constexpr int kHeadsPerCta = 16;  // the mma's 16 rows: heads 12..15 of a 12-head rank are zero rows
constexpr int kTile = 32;         // tokens per pipeline stage (= kMlaAttentionTile)
constexpr int kAttnWarps = 4, kAttnThreads = 32 * kAttnWarps;
constexpr int kStride = kRow + 8;    // bf16 per shared row: 1168 bytes = 73 x 16 B, so ldmatrix rows hit 8 banks
constexpr int kSStride = kTile + 4;  // fp32 scores per row (float4-aligned rows)
constexpr int kPStride = kTile + 8;  // bf16 probabilities per row: 80 bytes = 5 x 16 B (conflict-free ldmatrix)
constexpr int kDimsPerWarp = kLatent / kAttnWarps;  // 128: each warp owns these output dims in the P·V product
constexpr int kNTiles = kDimsPerWarp / 8;           // 16 mma n-tiles of 8 dims
constexpr int kSmemQ = kHeadsPerCta * kStride * 2;
constexpr int kSmemC = 2 * kTile * kStride * 2;     // double buffer
constexpr int kSmemS = kHeadsPerCta * kSStride * 4;
constexpr int kSmemP = kHeadsPerCta * kPStride * 2;
constexpr int kSmemAlpha = kHeadsPerCta * 4;
constexpr int kAttentionSmem = kSmemQ + kSmemC + kSmemS + kSmemP + kSmemAlpha;  // 97,088 bytes: 2 CTAs per SM
static_assert(kSmemQ % 16 == 0 && kSmemC % 16 == 0 && kSmemS % 16 == 0 && kSmemP % 16 == 0, "16-byte sections");
static_assert(kTile == 4 * 8 && kAttnWarps == 4, "the score phase gives each warp one n-tile of 8 tokens");
static_assert(kTile * 4 == kAttnThreads && kHeadsPerCta * 8 == kAttnThreads,
              "the softmax phase gives 8 threads to each of the 16 rows, 4 tokens each");

struct AttentionParams {
  const bf16* q_lat;  // [m][ld_qlat]: head h at h·kLatent
  long long ld_qlat;
  const bf16* q;      // [m][ld_q]: head h's rope part at h·q_head + rope_offset
  long long ld_q, q_head, rope_offset;
  const bf16* cache;  // sequence t at t·seq_stride, rows of kRow
  long long seq_stride;
  float* o_part;      // [m][splits][heads][kLatent]: each chunk's unnormalized output
  float2* ml;         // [m][splits][heads]: its (max, sum) in the log2 domain
  int heads, context, chunk, splits;
  float scale_log2;   // softmax scale · log2(e)
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared; src_bytes 0 writes zeros (rows past the chunk: a zero row times p = 0 is 0, while
// stale shared memory could hold NaN bits, and NaN · 0 is NaN).
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a (16x16, row) · b (16x8, col), BF16 in, FP32 accumulate.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Block (chunk, token t, head group): the heads' online softmax over the chunk's cache rows, 32 tokens a step,
// the next step's rows loading (cp.async) while this one computes. Per step:
//   scores  S[16 heads x 32 tokens] = Q[16 x 576] · C^T: warp w takes tokens 8w..8w+7, all 36 k-steps;
//   softmax thread (row tid/8, tokens 4·(tid%8)..): the running max and sum per head, P = exp2(S - max) in BF16,
//           alpha = exp2(old max - new max) for rescaling;
//   output  O[16 x 512] = alpha·O + P[16 x 32] · C[32 x 512]: warp w owns dims 128w..128w+127 in registers.
// All cache rows of a sequence are read once for all its heads (the absorbed form is multi-query).
__global__ void __launch_bounds__(kAttnThreads, 2) attention_split_kernel(AttentionParams p) {
  wait_previous_grid();
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* qs = reinterpret_cast<bf16*>(smem);
  bf16* cs = reinterpret_cast<bf16*>(smem + kSmemQ);
  float* ss = reinterpret_cast<float*>(smem + kSmemQ + kSmemC);
  bf16* ps = reinterpret_cast<bf16*>(smem + kSmemQ + kSmemC + kSmemS);
  float* alpha_s = reinterpret_cast<float*>(smem + kSmemQ + kSmemC + kSmemS + kSmemP);

  const int split = blockIdx.x, t = blockIdx.y, h0 = blockIdx.z * kHeadsPerCta;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, tq = lane % 4;
  const int begin = split * p.chunk;  // < context: the host sizes chunks so that none is empty
  const int end = min(p.context, begin + p.chunk);
  const int ntiles = (end - begin + kTile - 1) / kTile;
  const bf16* seq = p.cache + static_cast<long long>(t) * p.seq_stride;

  const auto load_tile = [&](int i, int buffer) {
    const int tok0 = begin + i * kTile;
    bf16* dst = cs + buffer * kTile * kStride;
    for (int v = tid; v < kTile * (kRow / 8); v += kAttnThreads) {
      const int r = v / (kRow / 8), c = (v % (kRow / 8)) * 8, tok = tok0 + r;
      const bool valid = tok < end;
      cp_async_16(dst + r * kStride + c, seq + static_cast<long long>(valid ? tok : begin) * kRow + c, valid ? 16 : 0);
    }
    cp_async_commit();
  };

  load_tile(0, 0);
  // Q: rows = heads h0..h0+15 (zeros past the rank's heads), columns = q_lat (512) then q's rope part (64).
  for (int v = tid; v < kHeadsPerCta * (kRow / 8); v += kAttnThreads) {
    const int r = v / (kRow / 8), c = (v % (kRow / 8)) * 8, h = h0 + r;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (h < p.heads) {
      const bf16* src = c < kLatent ? p.q_lat + t * p.ld_qlat + static_cast<long long>(h) * kLatent + c
                                    : p.q + t * p.ld_q + h * p.q_head + p.rope_offset + (c - kLatent);
      val = *reinterpret_cast<const uint4*>(src);
    }
    *reinterpret_cast<uint4*>(qs + r * kStride + c) = val;
  }

  float o[kNTiles][4];
#pragma unroll
  for (int n = 0; n < kNTiles; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_run = -INFINITY, l_run = 0.f;  // of softmax row tid / 8 (the 8 threads of a row hold the same values)

  for (int i = 0; i < ntiles; ++i) {
    const int buffer = i & 1;
    if (i + 1 < ntiles) {
      load_tile(i + 1, buffer ^ 1);  // that buffer was released by the __syncthreads ending step i - 1
      cp_async_wait<1>();            // step i's group has landed (this thread's copies)
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();  // every thread's copies of step i (and the Q stores) visible to all
    const bf16* ct = cs + buffer * kTile * kStride;

    float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 4
    for (int ks = 0; ks < kRow / 16; ++ks) {
      uint32_t a[4], b[2];
      ldmatrix_x4(a, qs + (lane % 16) * kStride + ks * 16 + (lane / 16) * 8);
      ldmatrix_x2(b, ct + (warp * 8 + lane % 8) * kStride + ks * 16 + ((lane / 8) % 2) * 8);
      mma_16816(s, a, b[0], b[1]);
    }
    // s[0..1]: head g, tokens 2tq, 2tq+1 of this warp's 8; s[2..3]: head g + 8. Past the chunk: -inf.
    const int tok = begin + i * kTile + warp * 8 + 2 * tq;
    s[0] = tok < end ? s[0] * p.scale_log2 : -INFINITY;
    s[1] = tok + 1 < end ? s[1] * p.scale_log2 : -INFINITY;
    s[2] = tok < end ? s[2] * p.scale_log2 : -INFINITY;
    s[3] = tok + 1 < end ? s[3] * p.scale_log2 : -INFINITY;
    *reinterpret_cast<float2*>(ss + g * kSStride + warp * 8 + 2 * tq) = make_float2(s[0], s[1]);
    *reinterpret_cast<float2*>(ss + (g + 8) * kSStride + warp * 8 + 2 * tq) = make_float2(s[2], s[3]);
    __syncthreads();

    {
      const int r = tid / 8, part = tid % 8;
      const float4 v = *reinterpret_cast<const float4*>(ss + r * kSStride + part * 4);
      float mx = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
      const float m_new = fmaxf(m_run, mx);     // finite: every step holds at least one token of the chunk
      const float alpha = exp2f(m_run - m_new);  // 0 on the first step (m_run = -inf)
      const float p0 = exp2f(v.x - m_new), p1 = exp2f(v.y - m_new), p2 = exp2f(v.z - m_new), p3 = exp2f(v.w - m_new);
      float sum = (p0 + p1) + (p2 + p3);
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      sum += __shfl_xor_sync(0xffffffffu, sum, 4);
      l_run = l_run * alpha + sum;
      m_run = m_new;
      __nv_bfloat162 lo = __floats2bfloat162_rn(p0, p1), hi = __floats2bfloat162_rn(p2, p3);
      uint2 packed;
      packed.x = *reinterpret_cast<uint32_t*>(&lo);
      packed.y = *reinterpret_cast<uint32_t*>(&hi);
      *reinterpret_cast<uint2*>(ps + r * kPStride + part * 4) = packed;
      if (part == 0) alpha_s[r] = alpha;
    }
    __syncthreads();

    const float a_lo = alpha_s[g], a_hi = alpha_s[g + 8];
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
      o[n][0] *= a_lo;
      o[n][1] *= a_lo;
      o[n][2] *= a_hi;
      o[n][3] *= a_hi;
    }
#pragma unroll
    for (int ks = 0; ks < kTile / 16; ++ks) {
      uint32_t a[4];
      ldmatrix_x4(a, ps + (lane % 16) * kPStride + ks * 16 + (lane / 16) * 8);
#pragma unroll
      for (int np = 0; np < kNTiles / 2; ++np) {
        uint32_t b[4];  // tokens 16ks.. (rows), dims warp·128 + 16np.. (cols), transposed into B fragments
        ldmatrix_x4_trans(b, ct + (ks * 16 + lane % 8 + ((lane / 8) % 2) * 8) * kStride + warp * kDimsPerWarp +
                                 np * 16 + (lane / 16) * 8);
        mma_16816(o[2 * np], a, b[0], b[1]);
        mma_16816(o[2 * np + 1], a, b[2], b[3]);
      }
    }
    __syncthreads();  // buffer, scores and probabilities are free for the next step
  }

  const long long unit = (static_cast<long long>(t) * p.splits + split) * p.heads;
#pragma unroll
  for (int n = 0; n < kNTiles; ++n) {
    const int d = warp * kDimsPerWarp + n * 8 + 2 * tq;
    if (h0 + g < p.heads)
      *reinterpret_cast<float2*>(p.o_part + (unit + h0 + g) * kLatent + d) = make_float2(o[n][0], o[n][1]);
    if (h0 + g + 8 < p.heads)
      *reinterpret_cast<float2*>(p.o_part + (unit + h0 + g + 8) * kLatent + d) = make_float2(o[n][2], o[n][3]);
  }
  if (tid % 8 == 0 && h0 + tid / 8 < p.heads) p.ml[unit + h0 + tid / 8] = make_float2(m_run, l_run);
}

// ---- attention: combine -----------------------------------------------------------------------------------

constexpr int kCombineThreads = kLatent / 4;

// Block (head, token): o_lat = bf16(Σ_s 2^(m_s - M) O_s / Σ_s 2^(m_s - M) l_s), M = max_s m_s, in split order.
__global__ void __launch_bounds__(kCombineThreads) attention_combine_kernel(const float* o_part, const float2* ml,
                                                                            bf16* o_lat, long long ld_olat, int heads,
                                                                            int splits) {
  wait_previous_grid();
  const int h = blockIdx.x, t = blockIdx.y, d = threadIdx.x * 4;
  const long long first = static_cast<long long>(t) * splits * heads + h;  // unit of split s: first + s·heads
  float mx = -INFINITY;
  for (int s = 0; s < splits; ++s) mx = fmaxf(mx, ml[first + static_cast<long long>(s) * heads].x);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  float l = 0.f;
  for (int s = 0; s < splits; ++s) {
    const long long u = first + static_cast<long long>(s) * heads;
    const float2 v = ml[u];
    const float wgt = exp2f(v.x - mx);
    l += wgt * v.y;
    const float4 x = *reinterpret_cast<const float4*>(o_part + u * kLatent + d);
    acc.x += wgt * x.x;
    acc.y += wgt * x.y;
    acc.z += wgt * x.z;
    acc.w += wgt * x.w;
  }
  const float inv = 1.0f / l;
  __nv_bfloat162 lo = __floats2bfloat162_rn(acc.x * inv, acc.y * inv), hi = __floats2bfloat162_rn(acc.z * inv, acc.w * inv);
  bf16* out = o_lat + t * ld_olat + static_cast<long long>(h) * kLatent + d;
  *reinterpret_cast<__nv_bfloat162*>(out) = lo;
  *reinterpret_cast<__nv_bfloat162*>(out + 2) = hi;
}

}  // namespace skinnygemm::cuda::mla
