// The MLA layer's GPU device (lab/mla_runner.h): rotating copies of the layer's weights with random values, one
// set of activations, the KV caches of the current (M, context) point (allocated when they grow, filled with random
// entries), the kernels of lab/cuda/mla_ops.cu, CUDA-graph timing on a main stream (the gate's side stream joins
// it inside the graph), the independent FP64 reference of lab/cuda/mla_reference.cuh, and the stream-read probe.
// The protocol itself is run_mla in lab/mla_runner.cpp, shared with the CPU device.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "runtime/backends.h"
#include "lab/stats.h"
#include "backends/cuda/check.cuh"
#include "lab/cuda/bench_common.cuh"
#include "backends/cuda/launch.cuh"
#include "lab/cuda/owned.cuh"
#include "lab/cuda/mla_ops.h"
#include "lab/cuda/mla_reference.cuh"
#include "lab/mla_runner.h"

namespace skinnygemm::tune {

namespace {

using cuda::Allocations;
using cuda::Graph;
using cuda::Stream;

constexpr int64_t kProbeChunk = int64_t{64} << 20;  // 16 back-to-back reads of 64 MiB, as the step's probe
constexpr int64_t kProbeBytes = 16 * kProbeChunk;
constexpr int64_t kReserve = int64_t{1} << 30;      // graphs, cuBLASLt workspaces, the library's own buffers
constexpr double kSampleMs = 20;                    // replays per sample: enough for >= 20 ms of work

int64_t align256(int64_t v) { return (v + 255) / 256 * 256; }

// Uniform values in [center - amp, center + amp) from a hash of the index (never zeros or constants).
__global__ void fill_uniform(__nv_bfloat16* out, long long count, uint32_t seed, float center, float amp) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA77u;
    h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h *= 0x297A2D39u; h ^= h >> 15;
    out[i] = __float2bfloat16_rn(center + amp * ((static_cast<float>(h >> 8) / 8388608.0f) - 1.0f));
  }
}


void check_launch() { SKINNYGEMM_CUDA_CHECK(cudaGetLastError()); }

unsigned blocks_for(long long threads, int per_block) {
  return static_cast<unsigned>((threads + per_block - 1) / per_block);
}

class CudaMlaDevice final : public MlaDevice {
 public:
  CudaMlaDevice(const MlaDims& dims, int64_t max_m)
      : dims_(dims), layout_(mla_weight_layout(dims)), info_(cuda::device_info()), max_m_(max_m) {
    SKINNYGEMM_CHECK(dims.dtype == DType::BF16, "the MLA layer's CUDA kernels are BF16 only");
    const int64_t e = 2;
    // Enough weight copies that a graph of `copies` layers reads >= 4x L2 of weights (at least 2): cold weights.
    copies_ = static_cast<int>(std::max<int64_t>(2, (4 * info_.l2_bytes + layout_.read_bytes - 1) / layout_.read_bytes));
    units_ = cuda::mla::attention_max_units(max_m);
    const int64_t scratch = align256(units_ * dims.heads * dims.kv_lora * 4) + align256(units_ * dims.heads * 8);
    int64_t reference = align256(max_m * dims.hidden * 8);  // the FP64 output
    for (int64_t w : {dims.hidden, dims.a_width(), dims.q_lora, dims.cache_row(), dims.q_width(), dims.heads * dims.kv_lora,
                      dims.heads * dims.kv_lora, dims.gated_width()})
      reference += align256(max_m * w * e);
    const int64_t fixed = copies_ * layout_.bytes + mla_activation_bytes(dims, max_m) + scratch + reference + kProbeBytes;
    std::size_t free_bytes = 0, total_bytes = 0;
    SKINNYGEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    SKINNYGEMM_CHECK(fixed + kReserve <= static_cast<int64_t>(free_bytes),
                     info_.name << ": the MLA layer " << dims.name() << " needs " << (fixed + kReserve) / 1e9
                                << " GB before any KV cache (" << copies_ << " weight copies of " << layout_.bytes / 1e6
                                << " MB, activations, attention scratch, the reference's buffers, a 1 GiB probe and a "
                                << "1 GiB reserve) but " << free_bytes / 1e9 << " GB of " << total_bytes / 1e9
                                << " GB are free");
    memory_.backend = Backend::Cuda;
    char* w = mem_.get(copies_ * layout_.bytes, "the layer's weight copies");
    for (int c = 0; c < copies_; ++c) memory_.weights.push_back(w + c * layout_.bytes);
    for (int b = 0; b < kMlaBufferCount; ++b)
      memory_.buffers[b] = mem_.get(max_m * mla_buffer_width(dims, b) * e, mla_buffer_name(b));
    o_part_ = reinterpret_cast<float*>(mem_.get(units_ * dims.heads * dims.kv_lora * 4, "the attention's chunk outputs"));
    ml_ = mem_.get(units_ * dims.heads * 8, "the attention's chunk max and sum");
    r_out_ = reinterpret_cast<double*>(mem_.get(max_m * dims.hidden * 8, "the reference output"));
    for (int i = 0; i < kRef; ++i) r_[i] = mem_.get(max_m * ref_width(i) * e, "a reference buffer");
    probe_ = mem_.get(kProbeBytes, "the stream-read probe");
    sink_ = reinterpret_cast<uint32_t*>(mem_.get(sizeof(uint32_t), "the probe's sink"));
    uint32_t seed = 0xA5000000u;
    for (int c = 0; c < copies_; ++c)
      for (const MlaFill& f : mla_weight_fills(dims))
        fill(memory_.weights[c] + f.offset, f.elems, seed++, static_cast<float>(f.center), static_cast<float>(f.amp));
    fill(probe_, kProbeBytes / 2, 0x0BEu, 0.f, 1.f);
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(main_.s));
  }

  std::string name() const override { return info_.name; }
  DeviceInfo info() const override { return info_; }
  const MlaMemory& memory() const override { return memory_; }
  void* stream() const override { return main_.s; }
  void* side_stream() const override { return side_.s; }
  bool pdl() const override { return cuda::pdl_enabled(); }
  int weight_copies() const override { return copies_; }

  std::string fits(int64_t m, int64_t context) const override {
    SKINNYGEMM_CHECK(m >= 1 && m <= max_m_, "m=" << m << " is outside 1.." << max_m_);
    std::size_t free_bytes = 0, total_bytes = 0;
    SKINNYGEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t need = point_bytes(m, context), avail = static_cast<int64_t>(free_bytes) + big_bytes_ - kReserve;
    if (need <= avail) return "";
    std::ostringstream os;
    os << "the KV cache (" << cache_copies(m, context) << " x " << mla_cache_bytes(dims_, m, context) / 1e9
       << " GB) and the reference's scores (" << scores_bytes(m, context) / 1e9 << " GB) need " << need / 1e9
       << " GB but " << std::max<int64_t>(avail, 0) / 1e9 << " GB are free on " << info_.name << " after the weights and a "
       << kReserve / 1e9 << " GB reserve";
    return os.str();
  }

  int prepare(int64_t m, int64_t context, uint32_t seed) override {
    const std::string why = fits(m, context);
    SKINNYGEMM_CHECK(why.empty(), "m=" << m << " context=" << context << ": " << why);
    const int64_t need = point_bytes(m, context);
    if (need > big_bytes_) {
      SKINNYGEMM_CUDA_CHECK(cudaDeviceSynchronize());  // nothing may still use the old caches
      if (big_) mem_.release(big_);
      big_ = nullptr;  // if the next allocation fails, nothing dangles
      big_bytes_ = 0;
      big_ = mem_.get(need, "the KV caches");
      big_bytes_ = need;
    }
    m_ = m;
    context_ = context;
    copies_now_ = cache_copies(m, context);
    memory_.cache = big_;
    scores_ = reinterpret_cast<float*>(big_ + align256(copies_now_ * mla_cache_bytes(dims_, m, context)));
    fill(big_, copies_now_ * mla_cache_bytes(dims_, m, context) / 2, seed ^ 0xCAC4Eu, 0.f, 1.f);
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(main_.s));
    return copies_now_;
  }

  void reset_activations(uint32_t seed) override {
    SKINNYGEMM_CHECK(m_ > 0, "reset_activations before prepare(): no KV cache yet");
    for (int b = 0; b < kMlaBufferCount; ++b) {
      const int64_t elems = max_m_ * mla_buffer_width(dims_, b);
      if (b == kMlaX) fill(memory_.buffers[b], elems, seed, 0.f, 1.f);
      else SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(memory_.buffers[b], 0xFF, elems * 2, main_.s));  // NaN in bf16
    }
    // The slot the layer appends, in every copy: a layer that forgot to write it must not pass.
    const int64_t row = dims_.cache_row() * 2;
    for (int c = 0; c < copies_now_; ++c)
      SKINNYGEMM_CUDA_CHECK(cudaMemset2DAsync(big_ + c * mla_cache_bytes(dims_, m_, context_) + (context_ - 1) * row,
                                              static_cast<std::size_t>(context_ * row), 0xFF,
                                              static_cast<std::size_t>(row), static_cast<std::size_t>(m_), main_.s));
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(main_.s));
  }

  void rmsnorm(const MlaNormArgs& a, void* stream) override { cuda::mla::rmsnorm(a, static_cast<cudaStream_t>(stream)); }
  void head_proj(const MlaHeadProjArgs& a, void* stream) override {
    cuda::mla::head_proj(a, static_cast<cudaStream_t>(stream));
  }
  void attention(const MlaAttentionArgs& a, void* stream) override {
    cuda::mla::attention(a, o_part_, ml_, units_, static_cast<cudaStream_t>(stream));
  }
  MlaSplit attention_split(int64_t m, int64_t context) const override {
    return cuda::mla::attention_split(m, context, dims_.heads);
  }

  MlaTiming time(const std::function<void()>& enqueue, int samples) override {
    Graph g;
    SKINNYGEMM_CUDA_CHECK(cudaStreamBeginCapture(main_.s, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {  // end the capture so that the streams are usable after the error
      cudaGraph_t aborted = nullptr;
      cudaStreamEndCapture(main_.s, &aborted);
      if (aborted) cudaGraphDestroy(aborted);
      cudaGetLastError();
      throw;
    }
    // Fails (cudaErrorStreamCaptureUnjoined) if the side stream was not joined back into the main stream.
    g.end_capture(main_.s);
    const int replays = g.replays_for(main_.s, kSampleMs);
    const SampleSummary s = g.sample_us(main_.s, samples, replays);
    return {s.median, s.spread};
  }

  std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) override {
    std::vector<uint16_t> out(static_cast<std::size_t>(m * n));
    const auto row = static_cast<std::size_t>(n) * 2, pitch = static_cast<std::size_t>(ld) * 2;
    SKINNYGEMM_CUDA_CHECK(cudaMemcpy2DAsync(out.data(), row, ptr, pitch, row, static_cast<std::size_t>(m),
                                            cudaMemcpyDeviceToHost, main_.s));
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(main_.s));
    return out;
  }

  std::vector<double> reference(int64_t m, int64_t context) override {
    namespace ref = cuda::mla_ref;
    using bf = __nv_bfloat16;
    SKINNYGEMM_CHECK(m == m_ && context == context_, "reference(m=" << m << ", context=" << context
                                                                    << ") but the prepared point is m=" << m_
                                                                    << " context=" << context_);
    const MlaDims& d = dims_;
    const char* w = memory_.weights[0];
    const auto W = [&](int64_t offset) { return reinterpret_cast<const bf*>(w + offset); };
    const auto R = [&](int i) { return reinterpret_cast<bf*>(r_[i]); };
    const auto B = [&](int b) { return reinterpret_cast<const bf*>(memory_.buffers[b]); };
    const int mi = static_cast<int>(m), ci = static_cast<int>(context), hi = static_cast<int>(d.heads);
    const cudaStream_t s = main_.s;
    const int64_t R6 = d.heads * d.kv_lora, gate_col = d.qkv_a_rows();
    ref::rmsnorm<<<blocks_for(m, 64), 64, 0, s>>>(B(kMlaX), d.hidden, R(kXn), d.hidden, W(layout_.gamma_in), mi,
                                                  static_cast<int>(d.hidden), 0, d.eps);
    check_launch();
    linear(R(kXn), d.hidden, W(layout_.qkv_a_g), R(kA), nullptr, d.a_width(), m, d.a_width(), d.hidden);
    ref::rmsnorm<<<blocks_for(m, 64), 64, 0, s>>>(R(kA), d.a_width(), R(kQn), d.q_lora, W(layout_.gamma_q), mi,
                                                  static_cast<int>(d.q_lora), 0, d.eps);
    check_launch();
    ref::rmsnorm<<<blocks_for(m, 64), 64, 0, s>>>(R(kA) + d.q_lora, d.a_width(), R(kSlot), d.cache_row(),
                                                  W(layout_.gamma_kv), mi, static_cast<int>(d.kv_lora),
                                                  static_cast<int>(d.rope), d.eps);
    check_launch();
    linear(R(kQn), d.q_lora, W(layout_.q_b), R(kQ), nullptr, d.q_width(), m, d.q_width(), d.q_lora);
    ref::head_proj<<<blocks_for(m * d.heads * d.kv_lora, 256), 256, 0, s>>>(
        R(kQ), d.q_width(), d.qk_head(), W(layout_.uk), R(kQLat), R6, d.kv_lora, nullptr, 0, mi, hi,
        static_cast<int>(d.kv_lora), static_cast<int>(d.nope));
    check_launch();
    const auto* cache = reinterpret_cast<const bf*>(memory_.cache);
    ref::scores<<<blocks_for(m * d.heads * context, 256), 256, 0, s>>>(
        R(kQLat), R6, R(kQ), d.q_width(), d.qk_head(), d.nope, cache, context * d.cache_row(), R(kSlot), scores_, mi, hi,
        ci, static_cast<int>(d.kv_lora), static_cast<int>(d.rope), d.softmax_scale());
    check_launch();
    ref::softmax_output<<<dim3(static_cast<unsigned>(d.heads), static_cast<unsigned>(m)), ref::kSoftmaxThreads, 0, s>>>(
        scores_, cache, context * d.cache_row(), R(kSlot), R(kOLat), R6, hi, ci, static_cast<int>(d.kv_lora),
        static_cast<int>(d.rope));
    check_launch();
    ref::head_proj<<<blocks_for(m * d.heads * d.v_dim, 256), 256, 0, s>>>(
        R(kOLat), R6, d.kv_lora, W(layout_.uv), R(kGated), d.gated_width(), d.v_dim, R(kA) + gate_col, d.a_width(), mi,
        hi, static_cast<int>(d.v_dim), static_cast<int>(d.kv_lora));
    check_launch();
    linear(R(kGated), d.gated_width(), W(layout_.o), nullptr, r_out_, d.hidden, m, d.hidden, d.gated_width());
    std::vector<double> out(static_cast<std::size_t>(m * d.hidden));
    SKINNYGEMM_CUDA_CHECK(cudaMemcpyAsync(out.data(), r_out_, out.size() * 8, cudaMemcpyDeviceToHost, s));
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(s));
    return out;
  }

  // The stream-read limit exactly as `skinnygemm bench` measures it (bench_common: the fastest of several read
  // variants), over the probe's 64 MiB chunks back to back.
  double stream_read_tbps(int samples) override {
    const double us = cuda::stream_read_us(main_.s, probe_, kProbeChunk, static_cast<int>(kProbeBytes / kProbeChunk),
                                           kProbeChunk, sink_, info_.sms, samples, /*replays=*/20);
    return static_cast<double>(kProbeChunk) / (us * 1e6);
  }

 private:
  // The reference's intermediates, [max_m, width] each.
  enum RefBuffer { kXn, kA, kQn, kSlot, kQ, kQLat, kOLat, kGated, kRef };
  int64_t ref_width(int i) const {
    const int64_t widths[kRef] = {dims_.hidden, dims_.a_width(), dims_.q_lora, dims_.cache_row(), dims_.q_width(),
                                  dims_.heads * dims_.kv_lora, dims_.heads * dims_.kv_lora, dims_.gated_width()};
    return widths[i];
  }
  // Cache copies that keep the timed runs reading DRAM: one when a single cache already exceeds 4x L2.
  int cache_copies(int64_t m, int64_t context) const {
    return mla_cache_bytes(dims_, m, context) < 4 * info_.l2_bytes ? copies_ : 1;
  }
  int64_t scores_bytes(int64_t m, int64_t context) const { return m * dims_.heads * context * 4; }
  int64_t point_bytes(int64_t m, int64_t context) const {
    return align256(cache_copies(m, context) * mla_cache_bytes(dims_, m, context)) + scores_bytes(m, context);
  }
  void linear(const __nv_bfloat16* x, int64_t ldx, const void* w, __nv_bfloat16* y, double* yd, int64_t ldy, int64_t m,
              int64_t n, int64_t k) {
    cuda::mla_ref::linear<<<blocks_for(m * n, 256), 256, 0, main_.s>>>(x, ldx, static_cast<const __nv_bfloat16*>(w), y,
                                                                       yd, ldy, static_cast<int>(m), static_cast<int>(n),
                                                                       static_cast<int>(k));
    check_launch();
  }
  void fill(void* p, int64_t count, uint32_t seed, float center, float amp) {
    fill_uniform<<<1024, 256, 0, main_.s>>>(static_cast<__nv_bfloat16*>(p), count, seed, center, amp);
    check_launch();
  }

  MlaDims dims_;
  MlaWeights layout_;
  DeviceInfo info_;
  int64_t max_m_ = 0, units_ = 0;
  int copies_ = 0, copies_now_ = 0;
  int64_t m_ = 0, context_ = 0;
  Allocations mem_;  // before the pointers into it; destroyed after the streams have gone
  Stream main_, side_;
  MlaMemory memory_;
  float* o_part_ = nullptr;
  char* ml_ = nullptr;
  double* r_out_ = nullptr;
  char* r_[kRef] = {};
  char* probe_ = nullptr;
  uint32_t* sink_ = nullptr;
  char* big_ = nullptr;  // the caches, then the reference's scores
  int64_t big_bytes_ = 0;
  float* scores_ = nullptr;
};

}  // namespace

std::unique_ptr<MlaDevice> make_cuda_mla_device(const MlaDims& dims, int64_t max_m) {
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= 64, "max_m=" << max_m << " must be in 1..64");
  SKINNYGEMM_CHECK(cuda::available(), "no CUDA device is available for the MLA layer of " << dims.name()
                                                                                          << "; use --backend cpu");
  return std::make_unique<CudaMlaDevice>(dims, max_m);
}

}  // namespace skinnygemm::tune
