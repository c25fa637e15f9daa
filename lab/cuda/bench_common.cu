// The shared GPU building blocks of the measurement protocol (bench_common.cuh), moved here unchanged from
// measure.cu so that fused_bench.cu times the same way.
#include "lab/cuda/bench_common.cuh"

#include <map>
#include <tuple>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <vector>

#include "backends/cuda/check.cuh"
#include "backends/cuda/launch.cuh"
#include "lab/cuda/chain_floor.cuh"
#include "lab/cuda/owned.cuh"
#include "lab/cuda/stream_read.cuh"
#include "lab/stats.h"

namespace skinnygemm::cuda {

namespace {

__global__ void fill_random_kernel(uint16_t* out, long long count, uint32_t seed, bool bf16) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA77u;
    h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h *= 0x297A2D39u; h ^= h >> 15;
    const float v = (static_cast<float>(h >> 8) / 8388608.0f) - 1.0f;
    out[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v)) : __half_as_ushort(__float2half_rn(v));
  }
}

template <int kInflight>
GraphTiming time_probe(cudaStream_t stream, const char* base, int64_t copy_stride, int copies, int64_t bytes,
                       uint32_t* sink, int blocks_per_sm, int sms, int samples, int replays) {
  const long long vectors = bytes / 16;
  const unsigned grid = static_cast<unsigned>(blocks_per_sm * sms);
  return time_graph(stream, copies, samples, replays, [&](int r) {
    LaunchShape shape;
    shape.grid = dim3(grid);
    shape.block = dim3(512);
    launch(stream_read_kernel<kInflight>, shape, stream, reinterpret_cast<const uint4*>(base + r * copy_stride),
           vectors, sink);
  });
}

}  // namespace

cudaStream_t bench_stream() {
  static cudaStream_t s = [] {
    cudaStream_t created = nullptr;
    SKINNYGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
    return created;
  }();
  return s;
}

void fill_random(void* out, long long count, uint32_t seed, DType dtype, cudaStream_t stream, unsigned blocks) {
  fill_random_kernel<<<blocks, 256, 0, stream>>>(static_cast<uint16_t*>(out), count, seed, dtype == DType::BF16);
}

int cold_copies(int64_t copy_bytes, int64_t l2_bytes) {
  return static_cast<int>(std::clamp<int64_t>((4 * l2_bytes + copy_bytes - 1) / copy_bytes, 2, 1024));
}

GraphTiming time_graph(cudaStream_t stream, int copies, int samples, int replays,
                       const std::function<void(int)>& launch_copy) {
  Graph o;  // owns what this function creates, so that an exception on any line leaves nothing behind
  // At least kMinGraphLaunches launches per graph: the gap at a graph's boundary (its first launch cannot overlap
  // the last one of the replay before) is then a small share of each launch, as in a decode step's chain of
  // hundreds. With one pass over 5 copies, that gap added ~0.8 us to a 52 MB chain probe (12.76 us against the
  // reference probe's 11.97 at 48 launches per graph, 0430cde). Replays shrink so that a sample launches as often.
  const int passes = (kMinGraphLaunches + copies - 1) / copies;
  replays = std::max(2, (replays + passes - 1) / passes);
  SKINNYGEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int pass = 0; pass < passes; ++pass)
      for (int r = 0; r < copies; ++r) launch_copy(r);
  } catch (...) {
    // A launch that throws mid-capture would leave the stream capturing for every later benchmark.
    cudaGraph_t aborted = nullptr;
    cudaStreamEndCapture(stream, &aborted);
    if (aborted) cudaGraphDestroy(aborted);
    cudaGetLastError();
    throw;
  }
  o.end_capture(stream);
  o.replay_ms(stream, 3);  // warm-up
  const SampleSummary s = o.sample_us(stream, samples, replays, static_cast<double>(passes) * copies);
  return {s.median, s.spread};
}

double stream_read_us(cudaStream_t stream, const void* base, int64_t copy_stride, int copies, int64_t bytes,
                      uint32_t* sink, int sms, int samples, int replays) {
  const char* b = static_cast<const char*>(base);
  double best = 1e30;
  for (int bps : {1, 2, 4}) {
    const GraphTiming four = time_probe<4>(stream, b, copy_stride, copies, bytes, sink, bps, sms, samples, replays);
    const GraphTiming eight = time_probe<8>(stream, b, copy_stride, copies, bytes, sink, bps, sms, samples, replays);
    best = std::min({best, four.median_us, eight.median_us});
  }
  return best;
}

const std::vector<ChainRing>& chain_rings() {
  // The reference probe's configurations (rings of 48-96 KB; 1-4 CTAs per SM): its best was 2 CTAs per SM with
  // 6 x 16 KB from 22 MB up on the H200, smaller slots below.
  // Session 31: the TMA family's own ring (2 CTAs per SM, 4-6 slots of 16 KB) streamed (chain_floor.cuh).
  static const std::vector<ChainRing> rings = {{1, 6, 16384},       {2, 6, 16384},       {1, 12, 8192},
                                               {2, 12, 8192},       {3, 8, 8192},        {2, 24, 4096},
                                               {3, 16, 4096},       {4, 12, 4096},       {2, 4, 16384, true},
                                               {2, 6, 16384, true}};
  return rings;
}

std::string ChainRing::name() const {
  return "c" + std::to_string(ctas_per_sm) + "_" + std::to_string(slots) + "x" + std::to_string(slot_bytes / 1024) + "KB" +
         (streamed ? "_streamed" : "");
}

int ChainRing::smem_bytes(int smem_per_sm, int reserved_per_cta) const {
  const int ring = 1024 + slots * slot_bytes;
  if (!streamed) return ring;
  // One byte more than ctas_per_sm + 1 CTAs can each have of the SM's shared memory (after the driver's reserve per
  // CTA): at most ctas_per_sm fit. chain_state() checks the occupancy.
  return std::max(ring, smem_per_sm / (ctas_per_sm + 1) - reserved_per_cta + 1);
}

namespace {
struct ChainState {
  uint32_t* words = nullptr;  // two arrays of kChainMaxCtas, one per parity of the launch index
  int max_smem = 0;
  int smem_per_sm = 0, reserved_per_cta = 0;  // ChainRing::smem_bytes's device facts
};
// One per process, made on the device current at the first call: the step's chain floor runs on one GPU (it is refused
// across ranks), the bench on the one it measures.
const ChainState& chain_state() {
  static const ChainState state = [] {
    ChainState c;
    SKINNYGEMM_CUDA_CHECK(cudaMalloc(&c.words, 2 * kChainMaxCtas * sizeof(uint32_t)));
    SKINNYGEMM_CUDA_CHECK(cudaMemset(c.words, 0, 2 * kChainMaxCtas * sizeof(uint32_t)));
    int dev = 0;
    SKINNYGEMM_CUDA_CHECK(cudaGetDevice(&dev));
    SKINNYGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&c.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    SKINNYGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&c.reserved_per_cta, cudaDevAttrReservedSharedMemoryPerBlock, dev));
    auto smem = [&](const ChainRing& r) { return r.smem_bytes(c.smem_per_sm, c.reserved_per_cta); };
    for (const ChainRing& r : chain_rings()) c.max_smem = std::max(c.max_smem, smem(r));
    SKINNYGEMM_CUDA_CHECK(
        cudaFuncSetAttribute(chain_floor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, c.max_smem));
    for (const ChainRing& r : chain_rings()) {
      if (!r.streamed) continue;
      int resident = 0;
      SKINNYGEMM_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, chain_floor_kernel, kChainThreads, smem(r)));
      SKINNYGEMM_CHECK(resident == r.ctas_per_sm, "chain ring " << r.name() << ": " << resident << " CTAs per SM fit with "
                                                                << smem(r) << " bytes of shared memory; expected "
                                                                << r.ctas_per_sm);
    }
    return c;
  }();
  return state;
}
}  // namespace

void prepare_chain() { chain_state(); }

void launch_chain(cudaStream_t stream, const ChainRing& r, const void* w, int64_t bytes, int sms, int index) {
  const ChainState& c = chain_state();
  uint32_t* words = c.words;
  const int max_smem = c.max_smem;
  const int ctas = r.ctas_per_sm * sms, smem = r.smem_bytes(c.smem_per_sm, c.reserved_per_cta);
  SKINNYGEMM_CHECK(ctas <= kChainMaxCtas && smem <= max_smem && r.slots <= kChainMaxSlots,
                   "chain ring " << r.name() << " on " << sms << " SMs: " << ctas << " CTAs and " << smem
                                 << " bytes; expected at most " << kChainMaxCtas << " CTAs, " << max_smem << " bytes and "
                                 << kChainMaxSlots << " slots");
  LaunchShape shape;
  shape.grid = dim3(static_cast<unsigned>(ctas));
  shape.block = dim3(kChainThreads);
  shape.smem = static_cast<std::size_t>(smem);
  launch(chain_floor_kernel, shape, stream, static_cast<const char*>(w), static_cast<long long>(bytes / 16 * 16),
         r.slots, r.slot_bytes, static_cast<const uint32_t*>(words + (index & 1) * kChainMaxCtas),
         words + ((index + 1) & 1) * kChainMaxCtas, r.streamed ? 1 : 0);
}

double chain_floor_us(cudaStream_t stream, const void* base, int64_t copy_stride, int copies, int64_t bytes, int sms,
                      int samples, int replays) {
  // Launches of one timing call read the same weights the same way: measured once per (bytes, copies) and kept.
  static std::map<std::tuple<const void*, int64_t, int, int64_t>, double> measured;
  const auto key = std::make_tuple(base, copy_stride, copies, bytes);
  if (auto it = measured.find(key); it != measured.end()) return it->second;
  const char* b = static_cast<const char*>(base);
  prepare_chain();  // its allocation and attribute outside the captures below
  double best = 1e30;
  for (const ChainRing& r : chain_rings()) {
    if (r.ctas_per_sm * sms > kChainMaxCtas) continue;
    int launched = 0;
    const GraphTiming t = time_graph(stream, copies, samples, replays,
                                     [&](int c) { launch_chain(stream, r, b + c * copy_stride, bytes, sms, launched++); });
    best = std::min(best, t.median_us);
  }
  return measured[key] = best;
}

}  // namespace skinnygemm::cuda
