// The step's CPU device: host memory, seeded random weights, ops run in order on the calling thread (no
// graphs, no streams), the FP64 reference for the checks. Used by the tests and `skinnygemm step --backend cpu`
// on a scaled-down model; the GPU device (lab/cuda/step.cu) runs the same protocol.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/backends.h"
#include "lab/timing.h"
#include "runtime/half.h"
#include "lab/step_runner.h"

namespace skinnygemm::tune {

namespace {

class CpuStepDevice final : public StepDevice {
 public:
  CpuStepDevice(const StepModel& model, int64_t max_m) : model_(model) {
    // What the host can give (the GPU device checks memory_fit against the device's free memory instead).
    const int64_t needed = model.arena_bytes + model.activation_bytes(max_m);
    const int64_t avail = static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    SKINNYGEMM_CHECK(avail <= 0 || needed <= avail, "the step of " << model.model << " at TP" << model.tp << " scale "
                                                                   << model.scale << " needs " << needed / 1e9
                                                                   << " GB of host memory but " << avail / 1e9
                                                                   << " GB are available; use a smaller --scale");
    arena_.resize(static_cast<std::size_t>(model.arena_bytes / 2));
    memory_.backend = Backend::Cpu;
    memory_.arena = reinterpret_cast<char*>(arena_.data());
    for (const StepBuffer& b : model.buffers) {
      buffers_.emplace_back(static_cast<std::size_t>(max_m * b.width));
      memory_.buffers.push_back(reinterpret_cast<char*>(buffers_.back().data()));
    }
    // Weights uniform in +-sqrt(3/K): each GEMM keeps its input's variance, so 93 layers neither overflow
    // nor vanish, and never zeros (they would hide unwritten outputs).
    std::mt19937 rng(0xC0FFEEu);
    for (const StepBlock& b : model.blocks) {
      const auto amp = static_cast<float>(std::sqrt(3.0 / static_cast<double>(b.k)));
      std::uniform_real_distribution<float> dist(-amp, amp);
      uint16_t* w = arena_.data() + b.offset / 2;
      for (int64_t i = 0; i < b.rows * b.k; ++i) w[i] = float_to_half(model.dtype, dist(rng));
    }
  }

  std::string name() const override { return "cpu"; }
  const StepMemory& memory() const override { return memory_; }
  void* stream() const override { return nullptr; }
  bool pdl() const override { return false; }

  void reset_activations(uint32_t seed) override {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (std::size_t i = 0; i < buffers_.size(); ++i)
      for (uint16_t& v : buffers_[i]) v = model_.buffers[i].input ? float_to_half(model_.dtype, dist(rng)) : 0xFFFF;
  }

  StepTiming time(const std::function<void()>& enqueue, int samples) override {
    enqueue();  // warm-up: selection caches, page faults
    const SampleSummary s = time_host_calls(samples, 1, enqueue);
    return {s.median, s.spread};
  }

  std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) override {
    std::vector<uint16_t> out(static_cast<std::size_t>(m * n));
    const auto* src = static_cast<const uint16_t*>(ptr);
    for (int64_t t = 0; t < m; ++t) std::copy(src + t * ld, src + t * ld + n, out.begin() + t * n);
    return out;
  }

  std::vector<double> reference(const Problem& p, const void* x, const void* w) override {
    std::vector<double> out(static_cast<std::size_t>(p.m * p.n));
    cpu::reference_f64(p, x, w, out.data());
    return out;
  }

  double stream_read_tbps(int) override { return 0; }
  int64_t cold_bytes() const override { return 0; }
  const void* rotation_weights(int64_t bytes) override {
    SKINNYGEMM_FAIL("the cpu step device has no cache to keep cold, so it rotates no weights (asked for " << bytes
                                                                                                        << " bytes)");
  }

 private:
  const StepModel& model_;
  std::vector<uint16_t> arena_;
  std::vector<std::vector<uint16_t>> buffers_;
  StepMemory memory_;
};

}  // namespace

std::unique_ptr<StepDevice> make_cpu_step_device(const StepModel& model, int64_t max_m) {
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= 64, "max_m=" << max_m << " must be in 1..64");
  return std::make_unique<CpuStepDevice>(model, max_m);
}

}  // namespace skinnygemm::tune
