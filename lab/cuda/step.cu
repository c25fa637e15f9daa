// The step's GPU device (lab/step_runner.h): every weight of one rank's decode step in one device arena with
// random values, the activation buffers, CUDA-graph timing, cuBLASLt as the checks' reference, and the
// stream-read probe of lab/cuda/bench_common.cuh for the floor. The protocol itself (check, time, sinks) is
// run_step in lab/step_runner.cpp, shared with the CPU device.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "runtime/backends.h"
#include "kernels/tma/tma_family.h"
#include "lab/stats.h"
#include "backends/cuda/check.cuh"
#include "lab/cuda/bench_common.cuh"
#include "backends/cuda/launch.cuh"
#include "lab/cuda/owned.cuh"
#include "lab/step_runner.h"

namespace skinnygemm::tune {

namespace {

using cuda::Allocations;
using cuda::Graph;
using cuda::Stream;

// The probe reads 16 chunks of 64 MiB back to back: the size of the step's large GEMMs (latent down/up
// 51 MB, KDA in_proj 90 MB at TP8), and 1 GiB in all, far past the L2.
constexpr int64_t kProbeChunk = int64_t{64} << 20;
constexpr int64_t kProbeBytes = 16 * kProbeChunk;
constexpr double kSampleMs = 20;  // replays per sample: enough for >= 20 ms of work

// Uniform values in [-amp, amp) from a hash of the index (never zeros or constants).
__global__ void fill_uniform(uint16_t* out, long long count, uint32_t seed, float amp, bool bf16) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA77u;
    h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h *= 0x297A2D39u; h ^= h >> 15;
    const float v = amp * ((static_cast<float>(h >> 8) / 8388608.0f) - 1.0f);
    out[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v)) : __half_as_ushort(__float2half_rn(v));
  }
}


class CudaStepDevice final : public StepDevice {
 public:
  CudaStepDevice(const StepModel& model, int64_t max_m, StepRank rank)
      : model_(model), info_(cuda::device_info()), max_m_(max_m) {
    std::size_t free_bytes = 0, total_bytes = 0;
    SKINNYGEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const MemoryFit fit = memory_fit(model.model, model.tp, model.scale, static_cast<int64_t>(free_bytes));
    SKINNYGEMM_CHECK(fit.fits, info_.name << " (" << total_bytes / 1e9 << " GB in all): " << fit.message);
    const int64_t e = static_cast<int64_t>(model.elem());
    memory_.backend = Backend::Cuda;
    memory_.arena = mem_.get(model.arena_bytes, "the step's weights");
    int64_t widest = 0;
    for (const StepBuffer& b : model.buffers) {
      memory_.buffers.push_back(mem_.get(max_m * b.width * e, "an activation buffer"));
      widest = std::max(widest, b.width);
    }
    reference_ = mem_.get(max_m * widest * e, "the checks' reference output");
    probe_ = mem_.get(kProbeBytes, "the stream-read probe");
    sink_ = reinterpret_cast<uint32_t*>(mem_.get(sizeof(uint32_t), "the probe's sink"));
    // Weights uniform in +-sqrt(3/K): each GEMM keeps its input's variance across all 93 layers. Across ranks
    // (StepRank) each rank draws its own values, and a row-parallel weight's partial products, summed over the
    // ranks by the all-reduce, get 1/ranks of the variance each.
    const std::vector<bool> row_parallel = row_parallel_blocks(model);
    for (std::size_t i = 0; i < model.blocks.size(); ++i) {
      const StepBlock& b = model.blocks[i];
      const double fan_in = static_cast<double>(b.k) * (row_parallel[i] ? rank.ranks : 1);
      fill(memory_.arena + b.offset, b.rows * b.k,
           0xA5000000u + static_cast<uint32_t>(i) + 0x10000u * static_cast<uint32_t>(rank.rank),
           static_cast<float>(std::sqrt(3.0 / fan_in)));
    }
    fill(probe_, kProbeBytes / 2, 0x0BEu, 1.0f);
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_.s));
  }

  std::string name() const override { return info_.name; }
  const StepMemory& memory() const override { return memory_; }
  void* stream() const override { return stream_.s; }
  bool pdl() const override { return cuda::pdl_enabled(); }

  void reset_activations(uint32_t seed) override {
    for (std::size_t i = 0; i < model_.buffers.size(); ++i) {
      const int64_t elems = model_.buffers[i].width * max_m_;
      if (model_.buffers[i].input) fill(memory_.buffers[i], elems, seed + static_cast<uint32_t>(i), 1.0f);
      else SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(memory_.buffers[i], 0xFF, elems * model_.elem(), stream_.s));  // NaN
    }
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_.s));
  }

  // SKINNYGEMM_STEP_ABLATE=bits (the lab's ablation, docs/kernels.md "Session 26"): the timing graphs' TMA launches
  // carry TmaParams::ablate (wrong results; the check ran before, eagerly, without it).
  static int ablate_bits() {
    const char* e = std::getenv("SKINNYGEMM_STEP_ABLATE");
    return e && *e ? std::atoi(e) : 0;
  }

  StepTiming time(const std::function<void()>& enqueue, int samples) override {
    Graph g;
    {
      tma::AblateScope ablate(ablate_bits());
      capture(enqueue, g);
    }
    int replays = g.replays_for(stream_.s, kSampleMs);
    if (comm_) replays = static_cast<int>(comm_->max(replays, stream_.s));  // the same on every rank
    const SampleSummary s = g.sample_us(stream_.s, samples, replays);
    return {s.median, s.spread};
  }

  TmaTrace trace_tma(const std::function<void()>& enqueue) override {
    // 7 words per CTA (tma::kTraceWords): 14 Mi words hold 2 Mi CTAs, e.g. 766 launches of 2700 (the step's grids
    // have a few hundred).
    constexpr long long kWords = 14LL << 20;
    if (!trace_) trace_ = reinterpret_cast<unsigned long long*>(mem_.get(kWords * 8, "the TMA timeline"));
    SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(trace_, 0, kWords * 8, stream_.s));
    Graph g;
    struct SinkOff {  // launches after this one, or after an error, are not traced
      ~SinkOff() { tma::set_trace(nullptr, 0); }
    } sink_off;
    tma::set_trace(trace_, kWords);
    capture(enqueue, g);  // the launches take their words as they are captured
    const std::vector<tma::TraceLaunch> launches = tma::take_trace();
    TmaTrace out;
    g.replay_ms(stream_.s, 2);  // warm-up; the last of the replays below writes the timeline that is read
    constexpr int kReplays = 5;
    out.replay_us = 1e3 * g.replay_ms(stream_.s, kReplays) / kReplays;
    long long words = 0;
    for (const tma::TraceLaunch& l : launches)
      words = std::max(words, l.offset + tma::kTraceWords * static_cast<long long>(l.ctas));
    std::vector<unsigned long long> host(static_cast<std::size_t>(words));
    SKINNYGEMM_CUDA_CHECK(cudaMemcpy(host.data(), trace_, host.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long t0 = ~0ULL;
    for (std::size_t i = 0; i < host.size(); i += tma::kTraceWords)
      if (host[i]) t0 = std::min(t0, host[i]);
    auto us = [&](unsigned long long t) { return t ? static_cast<double>(t - t0) * 1e-3 : -1.0; };  // -1: unwritten
    for (const tma::TraceLaunch& l : launches) {
      TmaTraceLaunch t;
      t.n = l.problem.n, t.k = l.problem.k, t.m = l.problem.m, t.config = l.config;
      for (int c = 0; c < l.ctas; ++c) {
        const unsigned long long* w = host.data() + l.offset + tma::kTraceWords * static_cast<long long>(c);
        t.entry_us.push_back(us(w[0])), t.waited_us.push_back(us(w[1])), t.exit_us.push_back(us(w[2]));
        t.first_stage_us.push_back(us(w[4])), t.multiplied_us.push_back(us(w[5])), t.gathered_us.push_back(us(w[6]));
        t.sm.push_back(static_cast<int>(w[3]));
      }
      out.launches.push_back(std::move(t));
    }
    return out;
  }

  std::vector<std::string> chain_rings() override {
    cuda::prepare_chain();  // the probe's words and attribute now, before any capture launches it
    std::vector<std::string> names;
    for (const cuda::ChainRing& r : cuda::chain_rings()) names.push_back(r.name());
    return names;
  }

  void launch_chain_op(const StepOp& op, const std::string& ring, int index) override {
    const std::vector<cuda::ChainRing>& rings = cuda::chain_rings();
    const auto r = std::find_if(rings.begin(), rings.end(), [&](const cuda::ChainRing& c) { return c.name() == ring; });
    SKINNYGEMM_CHECK(r != rings.end(), "no chain ring named '" << ring << "' for " << op.name);
    cuda::launch_chain(stream_.s, *r, op_weights(op), op.weight_bytes(model_.elem()), info_.sms, index);
  }

  std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) override {
    std::vector<uint16_t> out(static_cast<std::size_t>(m * n));
    const auto row = static_cast<std::size_t>(n) * model_.elem(), pitch = static_cast<std::size_t>(ld) * model_.elem();
    SKINNYGEMM_CUDA_CHECK(cudaMemcpy2DAsync(out.data(), row, ptr, pitch, row, static_cast<std::size_t>(m),
                                            cudaMemcpyDeviceToHost, stream_.s));
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_.s));
    return out;
  }

  std::vector<double> reference(const Problem& p, const void* x, const void* w) override {
    Problem q = p;
    q.ldy = q.n;
    Options o;
    o.backend = Backend::Cuda;
    o.stream = stream_.s;
    o.config = "cublaslt";
    gemm(q, x, w, reference_, o);
    const std::vector<uint16_t> bits = read(reference_, q.m, q.n, q.n);
    std::vector<double> out(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i)
      out[i] = p.dtype == DType::BF16 ? __bfloat162float(__ushort_as_bfloat16(bits[i]))
                                      : __half2float(__ushort_as_half(bits[i]));
    return out;
  }

  // The stream-read limit exactly as `skinnygemm bench` measures it (bench_common: the fastest of several read
  // variants), over the probe's 64 MiB chunks back to back.
  double stream_read_tbps(int samples) override {
    const double us = cuda::stream_read_us(stream_.s, probe_, kProbeChunk, static_cast<int>(kProbeBytes / kProbeChunk),
                                           kProbeChunk, sink_, info_.sms, samples, /*replays=*/20);
    return static_cast<double>(kProbeChunk) / (us * 1e6);
  }

  int64_t cold_bytes() const override { return 4 * info_.l2_bytes; }

  const void* rotation_weights(int64_t bytes) override {
    if (bytes > rotation_bytes_) {
      if (rotation_) mem_.release(rotation_);
      rotation_ = nullptr;  // if the next allocation fails, nothing dangles
      rotation_bytes_ = 0;
      rotation_ = mem_.get(bytes, "the sinks' rotating weight copies");
      rotation_bytes_ = bytes;
      fill(rotation_, bytes / 2, 0x707A7Eu, 1.0f / 32);  // timing only: small values keep outputs finite
      SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_.s));
    }
    return rotation_;
  }

 private:
  // An op's weights as its one launch reads them: a fusion's are one span of its block (its parts' rows adjacent).
  const void* op_weights(const StepOp& op) const {
    return memory_.weights(model_, op.fused() ? fused_as_one_gemm(model_, op) : op.segments[0]);
  }

  // enqueue captured on the stream into g, instantiated; on an error the capture is ended so that the stream stays
  // usable.
  void capture(const std::function<void()>& enqueue, Graph& g) {
    SKINNYGEMM_CUDA_CHECK(cudaStreamBeginCapture(stream_.s, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(stream_.s, &g.graph);
      cudaGetLastError();
      throw;
    }
    g.end_capture(stream_.s);
  }

  void fill(void* p, int64_t count, uint32_t seed, float amp) {
    fill_uniform<<<1024, 256, 0, stream_.s>>>(static_cast<uint16_t*>(p), count, seed, amp, model_.dtype == DType::BF16);
    SKINNYGEMM_CUDA_CHECK(cudaGetLastError());
  }

  const StepModel& model_;
  DeviceInfo info_;
  int64_t max_m_ = 0;
  Allocations mem_;  // before the pointers into it; destroyed after the stream has gone
  Stream stream_;
  StepMemory memory_;
  char* reference_ = nullptr;
  char* probe_ = nullptr;
  uint32_t* sink_ = nullptr;
  char* rotation_ = nullptr;
  int64_t rotation_bytes_ = 0;
  unsigned long long* trace_ = nullptr;  // trace_tma's words, allocated at its first call
};

}  // namespace

std::unique_ptr<StepDevice> make_cuda_step_device(const StepModel& model, int64_t max_m, StepRank rank) {
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= 64, "max_m=" << max_m << " must be in 1..64");
  SKINNYGEMM_CHECK(rank.ranks >= 1 && rank.rank >= 0 && rank.rank < rank.ranks,
                   "rank " << rank.rank << " of " << rank.ranks << ": expected 0 <= rank < ranks");
  return std::make_unique<CudaStepDevice>(model, max_m, rank);
}

}  // namespace skinnygemm::tune
