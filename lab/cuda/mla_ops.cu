// Launchers of the MLA layer's kernels (mla_ops.h): argument checks, then cuda::launch (PDL when on).
#include "lab/cuda/mla_ops.h"

#include <climits>
#include <mutex>

#include "runtime/backends.h"
#include "backends/cuda/check.cuh"
#include "backends/cuda/launch.cuh"
#include "lab/cuda/mla_kernels.cuh"

namespace skinnygemm::cuda::mla {

namespace {

static_assert(kTile == tune::kMlaAttentionTile, "the CPU device mirrors the kernel's tile");

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The split kernel needs more than 48 KB of dynamic shared memory: opt in once per process (per device, as the
// attribute is per function and device; the benchmark uses one device).
void enable_attention_smem() {
  static std::once_flag once;
  std::call_once(once, [] {
    SKINNYGEMM_CUDA_CHECK(
        cudaFuncSetAttribute(attention_split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kAttentionSmem));
  });
}

int64_t head_groups(int64_t heads) { return (heads + kHeadsPerCta - 1) / kHeadsPerCta; }

}  // namespace

void rmsnorm(const tune::MlaNormArgs& a, cudaStream_t stream) {
  SKINNYGEMM_CHECK(a.x && a.y && a.gamma, "rmsnorm: null pointer (x " << a.x << ", y " << a.y << ", gamma " << a.gamma << ")");
  SKINNYGEMM_CHECK(a.rows >= 1 && a.rows <= INT_MAX && a.width >= 1 && a.width <= INT_MAX && a.tail >= 0 &&
                       a.tail <= INT_MAX && a.ldx >= a.width + a.tail && a.ldy >= a.width + a.tail,
                   "rmsnorm: rows=" << a.rows << " width=" << a.width << " tail=" << a.tail << " ldx=" << a.ldx
                                    << " ldy=" << a.ldy << "; expected rows, width >= 1 and strides >= width + tail");
  NormParams p{static_cast<const bf16*>(a.x), a.ldx, static_cast<bf16*>(a.y), a.ldy, static_cast<const bf16*>(a.gamma),
               static_cast<int>(a.width), static_cast<int>(a.tail), static_cast<float>(a.eps)};
  LaunchShape shape;
  shape.grid = dim3(static_cast<unsigned>(a.rows));
  shape.block = dim3(kNormThreads);
  launch(rmsnorm_kernel, shape, stream, p);
}

void head_proj(const tune::MlaHeadProjArgs& a, cudaStream_t stream) {
  SKINNYGEMM_CHECK(a.x && a.w && a.y, "head_proj: null pointer (x " << a.x << ", w " << a.w << ", y " << a.y << ")");
  SKINNYGEMM_CHECK(a.m >= 1 && a.m <= kHpMaxM, "head_proj: m=" << a.m << " must be in 1.." << kHpMaxM);
  SKINNYGEMM_CHECK(a.heads >= 1 && a.heads <= 65535 && a.n >= 1 && a.n <= INT_MAX && a.k >= 1 && a.k <= INT_MAX,
                   "head_proj: heads=" << a.heads << " n=" << a.n << " k=" << a.k
                                       << "; expected heads in 1..65535 and n, k >= 1");
  SKINNYGEMM_CHECK(!a.gate || a.ldg >= a.heads * a.n, "head_proj: ldg=" << a.ldg << " is smaller than the gate's "
                                                                        << a.heads * a.n << " columns");
  HeadProjParams p{static_cast<const bf16*>(a.x), a.ldx, a.x_head, static_cast<const bf16*>(a.w),
                   static_cast<bf16*>(a.y), a.ldy, a.y_head, static_cast<const bf16*>(a.gate), a.ldg,
                   static_cast<int>(a.m), static_cast<int>(a.n), static_cast<int>(a.k)};
  LaunchShape shape;
  shape.grid = dim3(static_cast<unsigned>((a.n + kHpRows - 1) / kHpRows), static_cast<unsigned>(a.heads));
  shape.block = dim3(kHpThreads);
  launch(head_proj_kernel, shape, stream, p);
}

// Queried once: every launch asks for the split, and the answer must not change between the eager check and the
// captured graph (nor cost a driver call per launch).
int64_t attention_slots() {
  static const int64_t slots = [] {
    enable_attention_smem();
    int per_sm = 0;
    SKINNYGEMM_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attention_split_kernel, kAttnThreads, kAttentionSmem));
    SKINNYGEMM_CHECK(per_sm >= 1, "the attention kernel (" << kAttentionSmem << " bytes of shared memory, "
                                                           << kAttnThreads << " threads) does not fit on an SM of "
                                                           << device_info().name);
    return static_cast<int64_t>(per_sm) * device_info().sms;
  }();
  return slots;
}

tune::MlaSplit attention_split(int64_t m, int64_t context, int64_t heads) {
  return tune::mla_split(m, context, head_groups(heads), attention_slots(), kTile);
}

int64_t attention_max_units(int64_t max_m) { return 4 * attention_slots() + max_m; }

void attention(const tune::MlaAttentionArgs& a, float* o_part, void* ml, int64_t capacity_units, cudaStream_t stream) {
  SKINNYGEMM_CHECK(a.kv_lora == kLatent && a.rope == kRope,
                   "the CUDA attention kernel is built for kv_lora_rank " << kLatent << " + rope " << kRope
                                                                          << " (Kimi-K3 / DeepSeek-V3 MLA); got "
                                                                          << a.kv_lora << " + " << a.rope
                                                                          << ": scaled dimensions run on --backend cpu");
  SKINNYGEMM_CHECK(a.m >= 1 && a.m <= 65535 && a.context >= 1 && a.context <= INT_MAX && a.heads >= 1 &&
                       a.heads <= 65535 * kHeadsPerCta,
                   "attention: m=" << a.m << " context=" << a.context << " heads=" << a.heads
                                   << "; expected m in 1..65535, context in 1..2^31-1, heads >= 1");
  SKINNYGEMM_CHECK(a.q_lat && a.q && a.cache && a.o_lat && o_part && ml, "attention: null pointer");
  SKINNYGEMM_CHECK(aligned16(a.q_lat) && aligned16(a.q) && aligned16(a.cache) && aligned16(o_part) && aligned16(ml) &&
                       a.ld_qlat % 8 == 0 && a.ld_q % 8 == 0 && a.q_head % 8 == 0 && a.rope_offset % 8 == 0 &&
                       a.seq_stride % 8 == 0 && a.ld_olat % 4 == 0 && reinterpret_cast<uintptr_t>(a.o_lat) % 8 == 0,
                   "attention: the kernel loads 16-byte vectors: q_lat, q, cache (and o_lat 8 bytes) must be aligned "
                   "and ld_qlat=" << a.ld_qlat << ", ld_q=" << a.ld_q << ", q_head=" << a.q_head << ", rope_offset="
                                  << a.rope_offset << ", seq_stride=" << a.seq_stride << " multiples of 8 (ld_olat="
                                  << a.ld_olat << " of 4)");
  SKINNYGEMM_CHECK(a.ld_qlat >= a.heads * kLatent && a.ld_olat >= a.heads * kLatent &&
                       a.ld_q >= (a.heads - 1) * a.q_head + a.rope_offset + kRope && a.seq_stride >= a.context * kRow,
                   "attention: strides smaller than their rows (ld_qlat=" << a.ld_qlat << ", ld_olat=" << a.ld_olat
                                                                          << ", ld_q=" << a.ld_q << ", seq_stride="
                                                                          << a.seq_stride << ")");
  const tune::MlaSplit sp = attention_split(a.m, a.context, a.heads);
  SKINNYGEMM_CHECK(a.m * sp.splits <= capacity_units, "attention: m=" << a.m << " x " << sp.splits
                                                                       << " chunks needs more scratch than the "
                                                                       << capacity_units << " units allocated");
  AttentionParams p{static_cast<const bf16*>(a.q_lat), a.ld_qlat, static_cast<const bf16*>(a.q), a.ld_q, a.q_head,
                    a.rope_offset, static_cast<const bf16*>(a.cache), a.seq_stride, o_part, static_cast<float2*>(ml),
                    static_cast<int>(a.heads), static_cast<int>(a.context), static_cast<int>(sp.chunk),
                    static_cast<int>(sp.splits), static_cast<float>(a.scale * 1.4426950408889634)};
  LaunchShape split;
  split.grid = dim3(static_cast<unsigned>(sp.splits), static_cast<unsigned>(a.m),
                    static_cast<unsigned>(head_groups(a.heads)));
  split.block = dim3(kAttnThreads);
  split.smem = kAttentionSmem;
  launch(attention_split_kernel, split, stream, p);
  LaunchShape combine;
  combine.grid = dim3(static_cast<unsigned>(a.heads), static_cast<unsigned>(a.m));
  combine.block = dim3(kCombineThreads);
  launch(attention_combine_kernel, combine, stream, static_cast<const float*>(o_part), static_cast<const float2*>(ml),
         static_cast<bf16*>(a.o_lat), static_cast<long long>(a.ld_olat), static_cast<int>(a.heads),
         static_cast<int>(sp.splits));
}

}  // namespace skinnygemm::cuda::mla
