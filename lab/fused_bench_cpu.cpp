// The fused-projection benchmark's CPU device: host memory, seeded random operands, one weight copy (a CPU run
// is not about cold caches), passes run in order on the calling thread and timed with a steady clock. Used by the
// tests and `skinnygemm fused --backend cpu`; the GPU device (lab/cuda/fused_bench.cu) runs the same protocol.
#include <algorithm>
#include <cstring>
#include <random>

#include "runtime/half.h"
#include "lab/timing.h"
#include "lab/fused_bench_device.h"

namespace skinnygemm::tune {

namespace {

class CpuFusedDevice final : public FusedBenchDevice {
 public:
  CpuFusedDevice(const FusedSpec& spec, int64_t max_m)
      : name_(device_info(Backend::Cpu).name),
        x_(static_cast<std::size_t>(max_m * spec.k)),
        w_(static_cast<std::size_t>(spec.rows() * spec.k)),
        merged_(static_cast<std::size_t>(max_m * spec.merged_n())) {
    std::mt19937 rng(0xF05EDu);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (uint16_t& v : w_) v = float_to_half(spec.dtype, dist(rng));
    for (uint16_t& v : x_) v = float_to_half(spec.dtype, dist(rng));
    for (const FusedSegmentSpec& s : spec.segments) out_.emplace_back(static_cast<std::size_t>(max_m * s.n));
  }

  std::string name() const override { return name_; }
  Backend backend() const override { return Backend::Cpu; }
  void* stream() const override { return nullptr; }
  int copies() const override { return 1; }
  int64_t l2_bytes() const override { return 0; }
  const void* x() const override { return x_.data(); }
  const void* weights(int) const override { return w_.data(); }
  void* output(int, std::size_t segment) const override { return out_.at(segment).data(); }
  void* merged_output(int) const override { return merged_.data(); }

  void poison() override {
    for (auto& o : out_) std::fill(o.begin(), o.end(), 0xFFFF);
    std::fill(merged_.begin(), merged_.end(), 0xFFFF);
  }

  std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) override {
    std::vector<uint16_t> host(static_cast<std::size_t>(m * n));
    for (int64_t t = 0; t < m; ++t)
      std::memcpy(host.data() + t * n, static_cast<const uint16_t*>(ptr) + t * ld, static_cast<std::size_t>(n) * 2);
    return host;
  }

  FusedTiming time(const std::function<void(int)>& launch_copy, int samples, int replays) override {
    const SampleSummary s = time_host_calls(samples, replays, [&] { launch_copy(0); });
    return {s.median, s.spread};
  }

  double stream_read_us(int64_t, int, int) override { return 0; }
  int cublaslt_algos(const Problem&, const void*, const void*, const void*) override { return 0; }

 private:
  std::string name_;
  std::vector<uint16_t> x_, w_;
  // Outputs are written through the pointers the const accessors hand out (as device memory would be).
  mutable std::vector<uint16_t> merged_;
  mutable std::vector<std::vector<uint16_t>> out_;
};

}  // namespace

std::unique_ptr<FusedBenchDevice> make_cpu_fused_device(const FusedSpec& spec, int64_t max_m) {
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= 64, "max_m=" << max_m << " must be in 1..64");
  return std::make_unique<CpuFusedDevice>(spec, max_m);
}

}  // namespace skinnygemm::tune
