// What a backend supplies to the fused-projection benchmark (lab/fused_bench.h): the operands of one fusion in
// its memory, timing and read-back. CPU: fused_bench_cpu.cpp; CUDA: lab/cuda/fused_bench.cu (or
// lab/no_cuda/fused_bench_stub.cpp's error in builds without CUDA). The protocol itself is run_fused_bench in fused_bench.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "skinnygemm/skinnygemm.h"
#include "lab/fused_bench.h"

namespace skinnygemm::tune {

struct FusedTiming {
  double median_us = 0;  // per pass of launch_copy (one copy)
  double spread = 0;     // (max - min) / median over the samples
};

class FusedBenchDevice {
 public:
  virtual ~FusedBenchDevice() = default;
  virtual std::string name() const = 0;  // "NVIDIA H200" / the CPU's name
  virtual Backend backend() const = 0;
  virtual void* stream() const = 0;      // null on the CPU
  // Weight copies the timed passes rotate over (GPU: >= 4x L2 together, so that weights come from DRAM; CPU: 1).
  virtual int copies() const = 0;
  virtual int64_t l2_bytes() const = 0;  // the last-level cache that cold copies must exceed (0 on the CPU)
  virtual const void* x() const = 0;                // [max_m, k], random
  virtual const void* weights(int copy) const = 0;  // [rows, k], the segments' rows adjacent in order, random
  virtual void* output(int copy, std::size_t segment) const = 0;  // [max_m, n_i], row stride n_i
  virtual void* merged_output(int copy) const = 0;  // [max_m, merged_n], row stride merged_n
  // Every output of every copy set to all-ones bits (NaN in bf16 and fp16), after everything queued so far.
  virtual void poison() = 0;
  // m x n elements at ptr (row stride ld) on the host, after everything queued so far.
  virtual std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) = 0;
  // launch_copy(r) for every copy r, as one unit (GPU: captured once into a graph, warmed up, replayed `replays`
  // times per sample; CPU: `replays` passes per sample); the median per pass.
  virtual FusedTiming time(const std::function<void(int)>& launch_copy, int samples, int replays) = 0;
  // The stream-read limit of `bytes` read from the weight copies the same way (0: no probe on this backend).
  virtual double stream_read_us(int64_t bytes, int samples, int replays) = 0;
  // cuBLASLt's heuristic algorithms for the problem on these operands (0: no cuBLASLt on this backend).
  virtual int cublaslt_algos(const Problem& problem, const void* x, const void* w, const void* y) = 0;
};

// Devices for spec with outputs of max_m rows (1..64).
std::unique_ptr<FusedBenchDevice> make_cpu_fused_device(const FusedSpec& spec, int64_t max_m);
std::unique_ptr<FusedBenchDevice> make_cuda_fused_device(const FusedSpec& spec, int64_t max_m);

// The protocol for one fusion on a device the caller made for it (with max_m >= every M of options): what
// run_fused_bench does per fusion. The projections it builds live until it returns, before the device goes.
std::vector<FusedRow> bench_fusion(const FusedSpec& spec, FusedBenchDevice& device, const FusedBenchOptions& options);

}  // namespace skinnygemm::tune
