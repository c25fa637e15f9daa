// Running the MLA layer (lab/mla.h) on a backend: the executor that enqueues one variant's layer (GEMMs through
// the public API, the rest through the device's operations), the device interface each backend implements (CPU:
// mla_cpu.cpp; CUDA: lab/cuda/mla.cu, or lab/no_cuda/mla_stub.cpp's error in builds without CUDA), and run_mla, the protocol
// both share (docs/mla.md): per (context, M) one reference of the layer, then per variant one eager run on
// poisoned activations checked against it (a wrong variant is reported and not timed), then the layer timed
// over rotating weight copies (GPU: one CUDA graph), then the attention alone for its bandwidth.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "skinnygemm/projection.h"
#include "skinnygemm/skinnygemm.h"
#include "lab/mla.h"

namespace skinnygemm::tune {

// One backend's copy of the layer: `copies` weight copies (rotated so that the timed runs read them from DRAM),
// one set of activation buffers, and the current point's KV caches (cache_copies of them, back to back).
struct MlaMemory {
  Backend backend = Backend::Cpu;
  std::vector<char*> weights;  // per copy: the layout of mla_weight_layout()
  std::array<char*, kMlaBufferCount> buffers{};
  char* cache = nullptr;       // copy c of the prepared point at cache + c * mla_cache_bytes(m, context)
};

struct MlaTiming {
  double median_us = 0, spread = 0;  // per call of the enqueued work; spread = (max - min) / median
};

class MlaDevice {
 public:
  virtual ~MlaDevice() = default;
  virtual std::string name() const = 0;       // "NVIDIA H200" / "cpu"
  virtual DeviceInfo info() const = 0;
  virtual const MlaMemory& memory() const = 0;
  virtual void* stream() const = 0;           // the layer's stream (null on the CPU)
  virtual void* side_stream() const = 0;      // the gate's side stream (null on the CPU)
  virtual bool pdl() const = 0;
  virtual int weight_copies() const = 0;

  // Empty when the point's cache (and the reference's scratch) fit, else why not, with the numbers.
  virtual std::string fits(int64_t m, int64_t context) const = 0;
  // Allocates (when it grows) and fills the caches of m sequences of `context` tokens with random entries;
  // returns how many copies there are (enough that the timed runs read them from DRAM, or 1).
  virtual int prepare(int64_t m, int64_t context, uint32_t seed) = 0;
  // x random (seeded), every other activation and the cache slot the layer appends (context - 1) poisoned (NaN).
  virtual void reset_activations(uint32_t seed) = 0;

  // The layer's operations between the GEMMs, enqueued on stream.
  virtual void rmsnorm(const MlaNormArgs& args, void* stream) = 0;
  virtual void head_proj(const MlaHeadProjArgs& args, void* stream) = 0;
  virtual void attention(const MlaAttentionArgs& args, void* stream) = 0;
  virtual MlaSplit attention_split(int64_t m, int64_t context) const = 0;

  // Median over samples of enqueue's time (GPU: captured once into a graph, warmed up, replayed).
  virtual MlaTiming time(const std::function<void()>& enqueue, int samples) = 0;
  // m x n elements at ptr (row stride ld) on the host, after everything queued so far.
  virtual std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) = 0;
  // The layer's output [m, hidden] for the current x, weight copy 0 and cache copy 0 (all but the appended slot),
  // computed by an independent reference (GPU: plain FP64-accumulating kernels; CPU: mla_reference_layer).
  virtual std::vector<double> reference(int64_t m, int64_t context) = 0;
  // Stream-read bandwidth in TB/s measured now (0: no probe on this backend).
  virtual double stream_read_tbps(int samples) = 0;
};

std::unique_ptr<MlaDevice> make_cpu_mla_device(const MlaDims& dims, int64_t max_m);
// Allocates the weight copies, activations and probe after checking the device's free memory (an Error with the
// numbers when even that does not fit); caches are allocated per point by prepare().
std::unique_ptr<MlaDevice> make_cuda_mla_device(const MlaDims& dims, int64_t max_m);

// Enqueues one variant's layer for weight copy `copy` on the device's streams. Fused variants own a
// FusedProjection over that copy's adjacent qkv_a|g rows, writing in place into the `a` buffer (no scratch, no
// copies), built once here so that runs allocate nothing and can be captured.
class MlaExecutor {
 public:
  MlaExecutor(const MlaDims& dims, MlaDevice& device, MlaVariant variant, int copy, int64_t max_m);
  ~MlaExecutor();
  MlaExecutor(MlaExecutor&&) noexcept;
  MlaVariant variant() const { return variant_; }
  // The whole layer for m tokens over cache copy cache_copy of the prepared (m, context) point.
  void run(int64_t m, int64_t context, int cache_copy);
  // The attention arguments run() uses (the benchmark also times the attention alone).
  MlaAttentionArgs attention_args(int64_t m, int64_t context, int cache_copy) const;

 private:
  MlaDims dims_;
  MlaWeights layout_;
  MlaDevice* dev_;
  MlaVariant variant_;
  int copy_;
  int64_t max_m_;
  std::unique_ptr<FusedProjection> proj_;  // skinny variants: segments qkv_a, g
};

// The layer's output for copy 0 as an FP64 host computation, rounding to BF16 where the layer stores (lab/mla.h).
// weights: one copy (mla_weight_layout), x: [m, hidden], cache: m sequences of `context` rows (seq_stride elements
// apart); the appended slot (context - 1) is computed here, never read.
std::vector<double> mla_reference_layer(const MlaDims& dims, const uint16_t* weights, const uint16_t* x,
                                        const uint16_t* cache, int64_t seq_stride, int64_t m, int64_t context);

struct MlaResult {
  MlaVariant variant = MlaVariant::SkinnyFused;
  std::string name;  // variant name
  int64_t m = 0, context = 0;
  int64_t bytes = 0, cache_bytes = 0;
  double us = 0, spread = 0, tbps = 0;
  double floor_us = 0, efficiency = 0;  // bytes / stream-read bandwidth; floor / us (0: not measured)
  double cublaslt_us = 0, speedup = 0;  // the cublaslt variant at this point (0: not run)
  bool checked = false;
  double max_rel_error = 0;             // relative Frobenius error of the layer output vs the reference
  std::string error;                    // the failed check (then nothing was timed)
  double attention_us = 0, attention_tbps = 0;  // the attention alone at this point: cache bytes / us
  int64_t attention_splits = 0;
  int copies = 0, cache_copies = 0;
};

struct MlaSkipped {
  int64_t m = 0, context = 0;
  std::string reason;
};

// The policy's pick at one grid point: the fastest skinny variant that passed its check.
struct MlaPick {
  int64_t m = 0, context = 0;
  MlaVariant variant = MlaVariant::SkinnyFused;
  double us = 0;
  double margin = 0;       // runner-up (skinny) us / pick us - 1; 0 when the pick was the only one measured
  std::string runner_up;   // empty when none
  double cublaslt_us = 0;  // 0 when cublaslt was not measured
};

struct MlaRunOptions {
  std::string model = "kimi_k3";
  int tp = 8;
  double scale = 1.0;
  std::vector<int64_t> ms{1};
  std::vector<int64_t> contexts{512};
  std::vector<MlaVariant> variants{MlaVariant::Cublaslt, MlaVariant::SkinnySeparate, MlaVariant::SkinnyFused,
                                   MlaVariant::SkinnySideGate};
  Backend backend = Backend::Auto;
  int samples = 5;        // >= 5 on the GPU
  bool attention = true;  // also time the attention alone
  std::function<void(const std::string&)> progress;  // one line per stage (the CLI prints it on stderr)
};

struct MlaReport {
  std::string device;
  DeviceInfo info;
  bool pdl = false;
  double stream_read_tbps = 0;  // the better of a probe before and one after the measurements
  MlaDims dims;
  int64_t weight_bytes = 0;     // one copy, read per layer run
  std::vector<MlaResult> results;  // per context, per M, per variant in the order asked
  std::vector<MlaSkipped> skipped;
  std::vector<MlaPick> picks;      // per measured point, in the results' order
};

// Relative Frobenius error of got (BF16 bits, row stride ld) against want ([m, n]); an Error names the first
// element that is not finite.
double mla_relative_error(const std::vector<uint16_t>& got, const std::vector<double>& want, int64_t m, int64_t n,
                          DType dtype);
constexpr double kMlaTolerance = 1e-2;  // BF16 layer output: a few ulps of a chain of ~8 BF16 roundings

// The picks from a report's results (skinny variants that passed only).
std::vector<MlaPick> mla_picks(const std::vector<MlaResult>& results);

// The policy file of a report (docs/mla.md, read by load_fused_policy): the device, the grid ms x contexts, and
// per grid point the mode of the pick with its margin, µs and cuBLASLt's µs. A point without a pick (skipped, or
// no skinny variant passed) takes the mode of the nearest measured point (sum of the log2 distances on both axes,
// a tie to the larger point) and says so ("measured": false, "from"). An Error when nothing was measured.
// measured: revision, command and date of the run, as in the results' meta block.
std::string mla_policy_json(const MlaReport& report, const std::vector<int64_t>& ms, const std::vector<int64_t>& contexts,
                            const std::string& revision, const std::string& command, const std::string& date);

// Builds the dims and the backend's device and runs the protocol.
MlaReport run_mla(const MlaRunOptions& options);
// The protocol on dims and a device the caller made (tests).
MlaReport run_mla(const MlaRunOptions& options, const MlaDims& dims, MlaDevice& device);

}  // namespace skinnygemm::tune
