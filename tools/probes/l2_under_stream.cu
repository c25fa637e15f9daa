// L2 round trip under the stream (docs/kernels.md "Session 20"): how long a CTA waits for loads that hit the L2
// while every SM streams weights through a ring of bulk copies, as the lead split's reducer does when it gathers the
// other parts' sums. Session 20 estimated ~1.2 us at M = 1 from step differences (a gather started one stage later
// came ~0.2 us later, and the gather after the last copy came back 0.2 us after the last multiply); this measures it.
//
// One launch per row below: `ctas_per_sm` CTAs per SM, each with a producer warp that streams its share of a cold
// buffer through an S-slot ring of 16 KB bulk copies (evict-first, as the TMA family's weights) and a consumer warp
// that frees the slots; a third warp of each CTA (the prober) loads `loads` 16-byte words per lane from a 4 KB area
// of its own that an earlier kernel wrote (so it sits in the L2), waits for them, and stamps the round trip with
// %globaltimer and the SM clock, one sample every ~0.5 us until its CTA's last slot has landed (ld.relaxed.gpu.v4, as
// the gather's polls). Printed per row: the round trip's median, p90 and max over all probers' samples taken while the
// stream ran (ns), its median in SM clocks and in ns at the device's clock rate (cross-checks the timer's resolution),
// and the stream's rate over its own span (TB/s). "idle" rows stream nothing (the round trip of an unloaded L2).
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude tools/probes/l2_under_stream.cu
//   (or: PROBES=l2_under_stream scripts/gpu-check build probe)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "kernels/common/mbarrier.cuh"
#include "kernels/tma/tma_gemm.cuh"  // global_ns, ld_relaxed_v4 and evict_first_policy, as the gather uses them
#include "probe_harness.h"

using namespace skinnygemm::cuda;
using skinnygemm::tma::evict_first_policy;
using skinnygemm::tma::global_ns;
using skinnygemm::tma::ld_relaxed_v4;

namespace {

constexpr int kSlotBytes = 16384;  // one stage of a 64-row, 2-box tile: 64 x 256 bytes
constexpr int kMaxSlots = 6;
constexpr int kSamples = 64;       // round trips per prober
constexpr int kThreads = 96;       // producer, consumer, prober
constexpr int kAreaFloat4 = 256;   // 4 KB per prober

__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          shared_addr(dst)),
      "l"(src), "r"(bytes), "r"(shared_addr(bar)), "l"(policy)
      : "memory");
}

__global__ void fill(float4* area, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    area[i] = make_float4(1.f, 2.f, 3.f, static_cast<float>(i));
}

// bytes_per_cta: this CTA's contiguous share of the buffer (a multiple of kSlotBytes; 0: no stream).
// Per CTA: rtt[kSamples] round trips in %globaltimer ns and cycles[kSamples] in SM clocks (0: no sample), and span[2]
// = the stream's first copy and its last slot landed (%globaltimer ns; 0 in the idle rows).
__global__ void __launch_bounds__(kThreads) stream_and_probe(const char* buffer, long long bytes_per_cta, int slots,
                                                             const float4* areas, int loads, int bulk,
                                                             unsigned long long* rtt,
                                                             unsigned long long* cycles, unsigned long long* span,
                                                             float* sink) {
  extern __shared__ __align__(1024) char smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxSlots;
  volatile int* done = reinterpret_cast<volatile int*>(empty + kMaxSlots);  // the stream's slots have all landed
  volatile float* keep = reinterpret_cast<volatile float*>(done + 1);
  char* ring = smem + 1024;
  uint64_t* probe_bar = reinterpret_cast<uint64_t*>(smem + 512);  // bulk mode: the prober's copy
  float4* probe_buf = reinterpret_cast<float4*>(ring + static_cast<long long>(slots) * kSlotBytes);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long stages = bytes_per_cta / kSlotBytes;
  if (threadIdx.x == 0) {
    for (int s = 0; s < slots; ++s) mbar_init(full + s, 1), mbar_init(empty + s, 1);
    *done = stages == 0 ? 1 : 0;
    mbar_init(probe_bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warp == 0) {  // producer
    if (lane == 0) {
      const uint64_t policy = evict_first_policy();
      const char* src = buffer + blockIdx.x * bytes_per_cta;
      if (stages > 0) span[2 * blockIdx.x] = global_ns();
      for (long long i = 0; i < stages; ++i) {
        const int s = static_cast<int>(i % slots);
        // The consumer's release of stage i - slots completes phase (i - slots) / slots of the slot's empty barrier.
        if (i >= slots) mbar_wait(empty + s, static_cast<unsigned>((i / slots - 1) & 1));
        mbar_expect_tx(full + s, kSlotBytes);
        bulk_load(ring + s * kSlotBytes, src + i * kSlotBytes, kSlotBytes, full + s, policy);
      }
    }
    return;
  }
  if (warp == 1) {  // consumer: frees each slot once it landed
    if (lane == 0)
      for (long long i = 0; i < stages; ++i) {
        const int s = static_cast<int>(i % slots);
        mbar_wait(full + s, static_cast<unsigned>((i / slots) & 1));
        mbar_arrive(empty + s);
      }
    if (lane == 0 && stages > 0) span[2 * blockIdx.x + 1] = global_ns(), *done = 1;
    return;
  }
  // prober
  const float4* area = areas + static_cast<long long>(blockIdx.x) * kAreaFloat4;
  float acc = 0.f;
  // In the stream rows a sample counts only if it ended before the last slot landed (the stream still ran); the loop
  // stops there. The idle rows take all kSamples.
  for (int k = 0; k < kSamples && (stages == 0 || !*done); ++k) {
    const unsigned long long t0 = global_ns();
    const long long c0 = clock64();
    if (bulk) {  // session 26: the same bytes as one bulk copy into shared memory, as a gather by TMA would read them
      const unsigned bytes = 512u * loads;
      if (lane == 0) {
        mbar_expect_tx(probe_bar, bytes);
        bulk_copy(probe_buf, area + (k * 32) % (kAreaFloat4 - 32 * loads + 1), bytes, probe_bar);
      }
      mbar_wait(probe_bar, static_cast<unsigned>(k & 1));
      acc += probe_buf[lane].x;
    } else {
      float4 v[16];
#pragma unroll
      for (int b = 0; b < 16; ++b)
        if (b < loads) v[b] = ld_relaxed_v4(area + (lane + 32 * b + k) % kAreaFloat4);
#pragma unroll
      for (int b = 0; b < 16; ++b)
        if (b < loads) acc += v[b].x + v[b].w;
    }
    // The timers below are read only once this lane's loads are back: a volatile shared store of their sum cannot
    // issue before they are, and the fence keeps the timer reads after it.
    *keep = acc;
    __threadfence_block();
    __syncwarp();
    const long long c1 = clock64();
    const unsigned long long t1 = global_ns();
    if (lane == 0 && (stages == 0 || !*done)) {
      rtt[static_cast<long long>(blockIdx.x) * kSamples + k] = t1 - t0;
      cycles[static_cast<long long>(blockIdx.x) * kSamples + k] = static_cast<unsigned long long>(c1 - c0);
    }
    const unsigned long long until = t1 + 500;  // one sample every ~0.5 us while the stream runs
    while (global_ns() < until) __nanosleep(64);
  }
  if (acc == 12345.f) *sink = acc;  // keeps the loads
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long total = 512ll << 20;  // 512 MB: far past the 60 MB L2, and long enough (~110 us) for 64 samples
  char* buffer;
  CHECK(cudaMalloc(&buffer, total));
  CHECK(cudaMemset(buffer, 1, total));
  const int max_ctas = 3 * sms;
  float4* areas;
  unsigned long long *rtt, *cycles, *span;
  float* sink;
  char* scratch;  // written between rows so that no row finds the previous row's lines in the L2
  const size_t scratch_bytes = 128ull << 20;
  CHECK(cudaMalloc(&scratch, scratch_bytes));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  CHECK(cudaMalloc(&areas, sizeof(float4) * kAreaFloat4 * max_ctas));
  CHECK(cudaMalloc(&rtt, sizeof(unsigned long long) * kSamples * max_ctas));
  CHECK(cudaMalloc(&cycles, sizeof(unsigned long long) * kSamples * max_ctas));
  CHECK(cudaMalloc(&span, sizeof(unsigned long long) * 2 * max_ctas));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  CHECK(cudaFuncSetAttribute(stream_and_probe, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             1024 + kMaxSlots * kSlotBytes + 4096));
  std::printf("prober,mode,ctas_per_sm,slots,loads_per_lane,samples,rtt_median_ns,rtt_p90_ns,rtt_max_ns,rtt_median_cycles,"
              "rtt_median_ns_by_clock,stream_tbps\n");
  struct Row {
    bool stream;
    int ctas_per_sm, slots, loads, bulk;
  };
  std::vector<Row> rows;
  for (int bulk : {0, 1})
    for (int loads : {1, 2, 8})
      for (bool stream : {false, true})
        for (int ctas_per_sm : {1, 2})
          for (int slots : {4, 6}) {
            if (!stream && slots == 6) continue;
            rows.push_back({stream, ctas_per_sm, slots, loads, bulk});
          }
  for (const Row& r : rows) {
    const int ctas = r.ctas_per_sm * sms;
    const long long per_cta = r.stream ? total / ctas / kSlotBytes * kSlotBytes : 0;
    const size_t smem = 1024 + static_cast<size_t>(r.slots) * kSlotBytes + 4096;
    CHECK(cudaMemset(scratch, 0, scratch_bytes));
    fill<<<sms, 256>>>(areas, kAreaFloat4 * ctas);  // the probers' words, now in the L2
    CHECK(cudaMemset(rtt, 0, sizeof(unsigned long long) * kSamples * ctas));
    CHECK(cudaMemset(cycles, 0, sizeof(unsigned long long) * kSamples * ctas));
    CHECK(cudaMemset(span, 0, sizeof(unsigned long long) * 2 * ctas));
    int resident = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, stream_and_probe, kThreads, smem));
    if (resident < r.ctas_per_sm) {
      std::fprintf(stderr, "%d CTAs of %zu B do not fit on an SM (%d do)\n", r.ctas_per_sm, smem, resident);
      return 1;
    }
    stream_and_probe<<<ctas, kThreads, smem>>>(buffer, per_cta, r.slots, areas, r.loads, r.bulk, rtt, cycles, span, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const size_t n = static_cast<size_t>(kSamples) * ctas;
    std::vector<unsigned long long> t(n), c(n), sp(2 * static_cast<size_t>(ctas));
    CHECK(cudaMemcpy(t.data(), rtt, sizeof(unsigned long long) * n, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(c.data(), cycles, sizeof(unsigned long long) * n, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(sp.data(), span, sizeof(unsigned long long) * sp.size(), cudaMemcpyDeviceToHost));
    std::vector<unsigned long long> v, vc;
    for (size_t i = 0; i < n; ++i)
      if (t[i] > 0) v.push_back(t[i]), vc.push_back(c[i]);
    if (v.empty()) {
      std::printf("%s,%s,%d,%d,%d,0,,,,,,\n", r.bulk ? "bulk" : "ld", r.stream ? "stream" : "idle", r.ctas_per_sm, r.slots, r.loads);
      continue;
    }
    std::sort(v.begin(), v.end());
    std::sort(vc.begin(), vc.end());
    double tbps = 0.0;
    if (r.stream) {  // the bytes over the stream's own span: the first copy of any CTA to the last slot landed
      unsigned long long first = ~0ull, last = 0;
      for (int i = 0; i < ctas; ++i) first = std::min(first, sp[2 * i]), last = std::max(last, sp[2 * i + 1]);
      tbps = static_cast<double>(per_cta) * ctas / ((last - first) * 1e-9) / 1e12;
    }
    std::printf("%s,%s,%d,%d,%d,%zu,%llu,%llu,%llu,%llu,%.0f,%.2f\n", r.bulk ? "bulk" : "ld", r.stream ? "stream" : "idle", r.ctas_per_sm, r.slots,
                r.loads, v.size(), v[v.size() / 2], v[v.size() * 9 / 10], v.back(), vc[vc.size() / 2],
                vc[vc.size() / 2] * 1e6 / clock_khz, tbps);
  }
  return 0;
}
