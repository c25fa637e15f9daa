// GPU building blocks of the measurement protocol (docs/measuring.md), shared by measure.cu (one
// problem) and fused_bench.cu (fused projections against their separate calls), so that both time the same way:
// random operands, enough weight copies to keep the L2 cold, one CUDA graph of one pass over the copies, and the
// stream-read limit as the fastest of several probe variants.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "skinnygemm/dtype.h"

namespace skinnygemm::cuda {

// The benchmarks' one stream for the whole process: cuBLASLt keeps a workspace per stream, so a new stream per
// problem would leak 32 MB each time (a tuning run switches problems hundreds of times).
cudaStream_t bench_stream();

// count values of dtype (BF16 or FP16) uniform in [-1, 1) from a hash of the index and seed, on stream (never
// zeros or constants: they hide unwritten outputs and run fast). The values do not depend on blocks.
void fill_random(void* out, long long count, uint32_t seed, DType dtype, cudaStream_t stream, unsigned blocks = 1024);

// How many copies of copy_bytes of weights to rotate over so that together they are >= 4x L2 (and >= 2, <= 1024):
// each launch then reads its weights from DRAM, as in a decode step.
int cold_copies(int64_t copy_bytes, int64_t l2_bytes);

struct GraphTiming {
  double median_us = 0;  // per pass of launch_copy (per copy)
  double spread = 0;     // (max - min) / median over the samples
};

// Captures passes x (launch_copy(r) for r = 0 .. copies-1) into one graph on stream, with enough passes for at
// least kMinGraphLaunches launches, replays it 3 times to warm up, then takes `samples` samples of
// ceil(replays / passes) (>= 2) replays each; per-launch time = sample time / replays / passes / copies. A launch
// that throws ends the capture first, so that the stream stays usable.
constexpr int kMinGraphLaunches = 48;
GraphTiming time_graph(cudaStream_t stream, int copies, int samples, int replays,
                       const std::function<void(int)>& launch_copy);

// The stream-read limit of `bytes` (floored to 16-byte vectors) read from base + r * copy_stride for each copy r,
// launched and timed like a GEMM: the fastest median over the probe variants (4 or 8 loads in flight per thread,
// 1, 2 or 4 blocks per SM), in microseconds per read. The memory must hold (copies - 1) * copy_stride + bytes.
double stream_read_us(cudaStream_t stream, const void* base, int64_t copy_stride, int copies, int64_t bytes,
                      uint32_t* sink, int sms, int samples, int replays);

// One ring configuration of the dependent-chain probe (chain_floor.cuh): CTAs per SM, slots, bytes per slot.
struct ChainRing {
  int ctas_per_sm = 2, slots = 6, slot_bytes = 16384;
  bool streamed = false;  // even split, slots freed unfolded, footprint padded (chain_floor.cuh)
  std::string name() const;  // "c2_6x16KB", "c2_4x16KB_streamed"
  // Dynamic shared memory of a launch, given the SM's shared memory and the driver's reserve per CTA (device facts
  // that chain_state() reads once).
  int smem_bytes(int smem_per_sm, int reserved_per_cta) const;
};
// The configurations the probe is timed with (rings of 48-96 KB, 1-4 CTAs per SM; folding and streamed).
const std::vector<ChainRing>& chain_rings();
// The probe's words and its kernel's shared-memory attribute: call once before capturing launch_chain into a graph.
void prepare_chain();
// One launch of the chain probe on stream (PDL as every launch): ring r streams bytes (floored to 16) from w and
// reads the words the launch before it wrote (index: this launch's place in its chain, whose parity picks them).
void launch_chain(cudaStream_t stream, const ChainRing& r, const void* w, int64_t bytes, int sms, int index);

// The dependent-chain floor of `bytes` read like stream_read_us (chain_floor.cuh: every kernel must read a word
// the previous one wrote, its ring filled before griddepcontrol.wait): the fastest of the ring configurations,
// in microseconds per read. Measured once per (base, copy_stride, copies, bytes) in a process.
double chain_floor_us(cudaStream_t stream, const void* base, int64_t copy_stride, int copies, int64_t bytes, int sms,
                      int samples, int replays);

}  // namespace skinnygemm::cuda
