// Running the step (lab/step.h) on a backend: the executor that launches a variant's ops through the public
// API, the device interface each backend implements (CPU: step_runner.cpp; CUDA: lab/cuda/step.cu, or
// lab/no_cuda/step_stub.cpp's errors in builds without CUDA), and run_step, the protocol both share (docs/step.md):
// one eager run per (M, variant) with every non-input activation poisoned and sampled outputs checked against a
// reference on the same input, then the whole step timed (GPU: one CUDA graph), then each op name timed alone.
// With a communicator (several GPUs, lab/step_comm.h) every row-parallel op is followed by an all-reduce of its
// output, in the checked run and in the graph, and the communication is also timed alone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "skinnygemm/projection.h"
#include "skinnygemm/skinnygemm.h"
#include "lab/step.h"
#include "lab/step_comm.h"

namespace skinnygemm::tune {

class StepDevice;

// One backend's copy of the step: the weight arena (blocks at StepBlock::offset) and one [max_m, width]
// allocation per activation buffer, on the host (CPU) or the current device (CUDA).
struct StepMemory {
  Backend backend = Backend::Cpu;
  char* arena = nullptr;
  std::vector<char*> buffers;

  const void* weights(const StepModel& model, const StepSegment& segment) const;
  char* at(const StepModel& model, const StepSlice& slice) const;  // row 0, column slice.col
};

// Launches a variant's ops: cublaslt forces config "cublaslt", skinny selects, and fused ops run through a
// FusedProjection built here once (zero-copy weights, outputs adjacent: written in place), so that run()
// allocates nothing and can be captured into a graph; cublaslt_fused runs each fusion as one GEMM forced to
// "cublaslt" over its whole block (fused_as_one_gemm), since FusedProjection would select our kernels. With
// comm, each op of all_reduce_points is followed by an in-place all-reduce of its output rows.
class StepExecutor {
 public:
  StepExecutor(const StepModel& model, const StepMemory& memory, StepVariant variant, int64_t max_m,
               StepComm* comm = nullptr);
  ~StepExecutor();
  StepExecutor(StepExecutor&&) noexcept;
  const std::vector<StepOp>& ops() const { return ops_; }
  StepVariant variant() const { return variant_; }
  // Op i for m tokens on stream. weights (single-segment ops only) replaces the op's weights: the sinks
  // rotate over copies so that a small group still reads them from DRAM.
  void run(std::size_t i, int64_t m, void* stream, const void* weights = nullptr);
  // The all-reduce that follows op i (nothing when op i has none or no comm is attached).
  void reduce_after(std::size_t i, int64_t m, void* stream);
  void run_all(int64_t m, void* stream);     // the step: every op, each followed by its all-reduce
  void run_gemms(int64_t m, void* stream);   // the step without its all-reduces
  void run_comm(int64_t m, void* stream);    // only the all-reduces, back to back
  int all_reduces() const;                   // per step (0 without comm)
  // Every op of shape n x k runs config from now on (the step search's trials, lab/step_search.h): an unfused op
  // of that shape, and a fusion whose merged GEMM is n x k (its fused kernel, through FusedProjection's options);
  // an empty config removes the override.
  void force_config(int64_t n, int64_t k, const std::string& config);
  // The config run() forces for a GEMM of problem p (an unfused op, or a fusion of cublaslt_fused): the override,
  // else the variant's (cublaslt for cublaslt and cublaslt_fused, cublaslt_torch, the tma first cut), else ""
  // (selection).
  std::string forced_config(const Problem& p) const;

 private:
  const StepModel* model_;
  StepMemory memory_;
  StepVariant variant_;
  int64_t max_m_;
  std::vector<StepOp> ops_;
  std::vector<std::unique_ptr<FusedProjection>> fused_;  // per op; null unless the op is a fusion (not cublaslt_fused)
  std::vector<StepSegment> gemm_;  // per op: what its gemm() call covers where it has no FusedProjection
  StepComm* comm_ = nullptr;
  std::vector<bool> reduce_;  // per op: an all-reduce follows (only with comm)
  int sms_ = 0;  // the GPU's multiprocessors, for the tma variant's first-cut configs
  // The tma variant's lead split (SKINNYGEMM_STEP_TMA_LEAD: a probe knob, docs/step.md; negative: none).
  int tma_lead_ = -1;
  std::map<std::pair<int64_t, int64_t>, std::string> overrides_;  // (n, k) -> config (force_config)
};

// The op's segments against dev.reference() on the op's input as it stands now: the largest relative error. Throws
// Error, prefixed by what ("skinny m=4"), naming the op, its layer and the segment that is not finite or above the
// tolerance (a few output ulps of relative Frobenius error: 8e-3 in bf16, 2e-3 in fp16).
double check_op(StepDevice& dev, const StepModel& model, const StepOp& op, int64_t m, const std::string& what);

// Op indices ops[idx] (one name, or one shape) timed alone in a graph of their launches, rotating over weight
// copies when those launches read less than the device's cold_bytes (so that they still come from DRAM):
// us per launch. Fusions never rotate: their weights are bound at construction.
double time_ops_alone(StepExecutor& ex, StepDevice& dev, const std::vector<std::size_t>& idx, int64_t m, int samples,
                      std::size_t elem);

struct StepTiming {
  double median_us = 0, spread = 0;  // per call of the enqueued work; spread = (max - min) / median
};

// The TMA launches of one step's graph, timed from inside (StepDevice::trace_tma, `step --trace-tma`): per launch
// in launch order its CTAs' entry, the end of their griddepcontrol.wait and exit, in us from the earliest entry
// of the replay that wrote them, and their SMs. Launches of other families (and cuBLASLt) are not in it.
struct TmaTraceLaunch {
  int64_t n = 0, k = 0, m = 0;
  std::string config;
  std::vector<double> entry_us, waited_us, exit_us;
  std::vector<double> first_stage_us, multiplied_us;  // the CTA's first stage landed (x too), its last one multiplied
  std::vector<double> gathered_us;  // a lead-split reducer's other parts' sums in (-1: not a reducer of a token tile <= 16)
  std::vector<int> sm;
};
struct TmaTrace {
  double replay_us = 0;  // the traced graph's time per replay (the timestamps' own cost shows against the step's)
  std::vector<TmaTraceLaunch> launches;
};

// The dependent-chain floor of a step's launches (`step --chain-floor`, docs/step.md "Session 17"): the same launches
// in the same order, each replaced by the chain probe (lab/cuda/chain_floor.cuh) streaming that launch's weights from
// the step's own arena with its ring filled before griddepcontrol.wait, then reading one word per CTA from the words
// the launch before it wrote (where the two grids differ in size, some CTAs read an older word: the order comes from
// griddepcontrol.wait, the word only makes the data dependence real), in one CUDA graph with PDL. It is the floor of the same kind of work as the step: a chain of dependent
// streaming kernels of the step's sizes, with the gaps between them. The ring is a choice: every launch on one of the
// probe's rings, or each launch on the ring its op name ran fastest with alone (a graph of that name's
// launches); the fastest choice is the floor.
struct ChainFloor {
  double us = 0;      // per step (0: not measured)
  std::string rings;  // the fastest choice: "per op" or one ring's name ("c2_6x16KB")
  std::vector<std::pair<std::string, double>> tried;  // every choice and its time, in the order timed
  std::map<std::string, std::string> op_rings;         // op name -> the ring it ran fastest with alone
};

// What one op name's real launches add to the step's dependent chain (`step --chain-attribution`, docs/step.md
// "Session 17"): the chain floor's graph with this op name's launches run by the variant itself (our kernels, or
// cuBLASLt) and every other launch the chain probe, minus that graph with every launch the probe (timed with them). In the step's own order and company, so
// a launch that keeps its successor waiting, or leaves it no room, is charged here. The shares need not add up to the
// step's distance from the chain floor: each share pays both of its launches' boundaries with probes (where a
// launch without PDL, cuBLASLt's, loses the overlap), while two real neighbours in the step share one.
struct ChainShare {
  std::string name;  // the op name (projection or fusion)
  int64_t n = 0, k = 0;
  int count = 0;    // launches per step
  double us = 0;    // per step: the mixed graph minus the chain floor
};

// What a backend supplies to run_step.
class StepDevice {
 public:
  virtual ~StepDevice() = default;
  virtual std::string name() const = 0;  // "NVIDIA H200" / "cpu"
  virtual const StepMemory& memory() const = 0;
  virtual void* stream() const = 0;       // null on the CPU
  virtual bool pdl() const = 0;           // launches use PDL (CPU: false)
  // The input buffers random (seeded), every other buffer poisoned (all-ones bits: NaN in bf16 and fp16).
  virtual void reset_activations(uint32_t seed) = 0;
  // Median over samples of the time of enqueue (GPU: captured once into a graph, warmed up, replayed).
  virtual StepTiming time(const std::function<void()>& enqueue, int samples) = 0;
  // m x n elements at ptr (row stride ld) on the host, after everything queued so far.
  virtual std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) = 0;
  // The problem's output on the same operands from the reference (GPU: cuBLASLt default; CPU: FP64).
  virtual std::vector<double> reference(const Problem& problem, const void* x, const void* w) = 0;
  // Stream-read bandwidth in TB/s measured now (0: no probe on this backend).
  virtual double stream_read_tbps(int samples) = 0;
  // Weight bytes a sink must cycle through to read from DRAM (GPU: 4 x L2; CPU: 0), and random weight
  // copies of at least that size owned by the device (valid until the next call).
  virtual int64_t cold_bytes() const = 0;
  virtual const void* rotation_weights(int64_t bytes) = 0;
  // enqueue captured into a graph with the TMA family's timeline on (tma::set_trace), replayed; the timeline of
  // the last replay. Only the cuda backend has one: the default fails, naming the backend.
  virtual TmaTrace trace_tma(const std::function<void()>& enqueue);
  // The dependent-chain probe (ChainFloor, ChainShare; only the cuda backend has one: the defaults fail, naming the
  // backend). chain_rings: the names of its ring configurations, and everything a launch needs made now, before a
  // capture. launch_chain_op: one probe launch in place of op (its weights, a ring of chain_rings) on stream(); index:
  // its place among the chain's probe launches.
  virtual std::vector<std::string> chain_rings();
  virtual void launch_chain_op(const StepOp& op, const std::string& ring, int index);
  // Ranks replaying a graph that holds collectives must replay it equally often, or the ones with more
  // replays wait forever: with a communicator attached, time() takes the largest replay count over the ranks.
  void attach(StepComm* comm) { comm_ = comm; }

 protected:
  StepComm* comm_ = nullptr;
};

// This process's place in a tensor-parallel run. Weights are seeded by rank (the ranks hold different shards)
// and row-parallel weights are scaled by 1/sqrt(ranks), so that the all-reduced sum of the ranks' partial
// products keeps its inputs' variance over all the layers, as on one rank.
struct StepRank {
  int rank = 0;
  int ranks = 1;
};

std::unique_ptr<StepDevice> make_cpu_step_device(const StepModel& model, int64_t max_m);
// Checks memory_fit against the device's free memory before allocating (an Error with the numbers).
std::unique_ptr<StepDevice> make_cuda_step_device(const StepModel& model, int64_t max_m, StepRank rank = {});

struct StepSink {
  std::string name;  // op name (projection or fusion)
  int64_t n = 0, k = 0;
  int count = 0;        // launches per step
  double us = 0;        // per launch, timed alone in a graph of its launches
  double total_us = 0;  // us x count
};

struct StepResult {
  StepVariant variant = StepVariant::Skinny;
  std::string name;  // variant name, "_nopdl" when the launches ran without PDL
  bool pdl = false;
  int64_t m = 0;
  int gemms = 0;      // launches (a fusion is one)
  int64_t bytes = 0;  // weights + activations read and written
  double us = 0, spread = 0, tbps = 0;
  double floor_us = 0, efficiency = 0;   // bytes / stream-read bandwidth; floor_us / us (0: not measured)
  double cublaslt_us = 0, speedup = 0;   // the cublaslt variant at this M in this process (0: not run)
  int checked = 0;                       // segment outputs checked against the reference
  std::string error;                     // the failed check (then nothing was timed), empty when it passed
  double max_rel_error = 0;
  std::vector<StepSink> sinks;           // the ten largest total_us, largest first
  double sinks_us = 0;                   // every sink's total_us together
  // With a communicator: all-reduces per step, their time alone (a graph of only the all-reduces), its share
  // of the step (comm_us / us), and the same step without its all-reduces (0: no communicator).
  int all_reduces = 0;
  double comm_us = 0, comm_share = 0, no_comm_us = 0;
  // StepRunOptions::chain_floor: the dependent-chain floor of this variant's launches (the same for every M: the
  // probe streams weights only), chain_floor_us / us, and the ring choice that gave it (0 / empty: not measured).
  double chain_floor_us = 0, chain_efficiency = 0;
  std::string chain_rings;
  std::vector<ChainShare> chain_shares;  // StepRunOptions::chain_attribution: per op name, largest first
  double chain_share_base_us = 0;        // the all-probe graph the shares are measured against, timed with them
  std::shared_ptr<const TmaTrace> tma_trace;  // StepRunOptions::trace_tma: the variant's timeline (null: not traced)
  std::string trace_error;                    // why the timeline could not be taken (the timing above stands)
};

struct StepRunOptions {
  std::string model = "kimi_k3";
  int tp = 8;
  double scale = 1.0;
  MoeFront moe_front = MoeFront::NonEp;  // the fused variants' MoE front (lab/step.h)
  std::vector<int64_t> ms{1};
  std::vector<StepVariant> variants{StepVariant::Cublaslt, StepVariant::Skinny, StepVariant::SkinnyFused};
  Backend backend = Backend::Auto;
  int samples = 5;         // >= 5 on the GPU
  bool sinks = true;
  bool check_all = false;  // check every op's outputs, not a sample (layers 1-2, the first MLA layer, the last, lm_head)
  std::function<void(const std::string&)> progress;  // one line per stage (the CLI prints it on stderr)
  StepComm* comm = nullptr;  // several GPUs (cuda only): this process's rank; null: one GPU, no communication
  bool trace_tma = false;    // after timing each case, its TMA launches' timeline (StepDevice::trace_tma)
  bool chain_floor = false;  // cuda only: each variant's launches as a dependent chain of the probe (ChainFloor)
  bool chain_attribution = false;  // and per op name what its real launches add to that chain (ChainShare; implies it)
};

struct StepReport {
  std::string device;
  int rank = 0, ranks = 1;
  bool pdl = false;
  double stream_read_tbps = 0;  // the best of the probes run before and after the measurements
  int64_t weight_bytes = 0;
  std::vector<StepResult> results;  // per M, per variant in the order asked
  // StepRunOptions::chain_floor: per launch list ("unfused", "fused"), its ChainFloor.
  std::map<std::string, ChainFloor> chain_floors;
  std::string chain_error;  // why a chain floor could not be measured (the step's timings stand)
};

// Builds the model, the backend's device and runs the protocol.
StepReport run_step(const StepRunOptions& options);
// The protocol on a model and device the caller made (tests).
StepReport run_step(const StepRunOptions& options, const StepModel& model, StepDevice& device);

}  // namespace skinnygemm::tune
