// Fused projections: several weights that share one input x (same K and dtype) run as one problem with
// N = sum of the segments' rows, each segment's rows going to that segment's own destination.
//
//   skinnygemm::Segment qkv_a{w, 2112, 0, y_qkv_a, 0, 1, "qkv_a", 7168, skinnygemm::DType::BF16};
//   skinnygemm::Segment g{w + 2112 * 7168, 1536, 0, y_g, 0, 1, "g", 7168, skinnygemm::DType::BF16};
//   skinnygemm::FusedProjection proj({qkv_a, g}, skinnygemm::Backend::Cuda);  // adjacent rows: zero-copy
//   skinnygemm::RunOptions o; o.gemm.stream = stream;
//   skinnygemm::RunResult r = proj.run(x, 7168, m, o);                          // r.rung, r.reason
//
// The ladder, best first (docs/fused.md): the fused kernel (CUDA: one skinny-kernel launch whose epilogue
// writes each segment's rows to its destination, when selection picks a skinny kernel for the merged problem),
// the fused GEMM (one gemm over the merged weights, in place or into a scratch output then one strided copy per
// segment), separate (one gemm per segment). run() takes the best rung that can run and says which and why;
// SKINNYGEMM_LOG=1 prints it once per (projection, M). The rung for each M up to max_m is decided at
// construction; run() with default options (no forced rung or config, the default table, packed 16-byte aligned
// x) records its launches the first time at an M and replays them after: no selection, strings or allocation.
//
// A projection is bound to one backend and owns its packed weights and scratch output, so it runs one call
// at a time (as a layer of an engine does, on one stream); nothing is allocated after construction, which
// makes run() and run_split() safe to capture in a CUDA graph.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "skinnygemm/skinnygemm.h"

namespace skinnygemm {

enum class Rung { FusedKernel, FusedGemm, Separate };
const char* rung_name(Rung rung);  // "fused kernel", "fused GEMM", "separate"

struct Segment {
  const void* w = nullptr;  // [n, k] weights, row stride ldw
  int64_t n = 0;            // rows (output features)
  int64_t ldw = 0;          // 0 = k
  void* y = nullptr;        // [m, n] destination, row stride ldy; null in every segment = contiguous output only
  int64_t ldy = 0;          // 0 = n
  int64_t pad_to = 1;       // pad the rows to a multiple of this, 1..65536 (140 -> 144): zero rows the projection owns
  std::string name;         // for errors and logs; empty = "#<index>"
  int64_t k = 0;            // must be the same in every segment (they share x)
  DType dtype = DType::BF16;  // must be the same in every segment
};

// Where a segment's outputs sit in the contiguous output: columns [offset, offset + n) of each row.
struct SegmentView {
  std::string name;
  int64_t offset = 0;
  int64_t n = 0;
};

struct RungStatus {
  Rung rung = Rung::Separate;
  bool available = false;
  std::string reason;  // why it can or cannot run
};

struct Eligibility {
  Rung rung = Rung::Separate;       // the rung run() takes for this M
  std::string reason;               // why
  std::vector<RungStatus> ladder;   // every rung, best first
  int weight_alignment = 0;         // bytes (operand_alignment of the merged weights); 16-byte kernels need 16
};

struct RunOptions {
  Options gemm;               // backend (must be the projection's or Auto), stream, table; config forces every gemm
  std::optional<Rung> rung;   // force a rung; an unavailable one is an Error naming why
};

// The gemm calls of a run in launch order, shared: a run that repeats a recorded one returns the same list,
// which copies a pointer instead of the choices.
class ChoiceList {
 public:
  ChoiceList() = default;
  explicit ChoiceList(std::vector<Choice> choices);
  std::size_t size() const { return list_ ? list_->size() : 0; }
  bool empty() const { return size() == 0; }
  const Choice& operator[](std::size_t i) const { return (*list_)[i]; }
  const Choice& front() const { return list_->front(); }
  const Choice& back() const { return list_->back(); }
  const Choice* begin() const { return list_ ? list_->data() : nullptr; }
  const Choice* end() const { return list_ ? list_->data() + list_->size() : nullptr; }

 private:
  std::shared_ptr<const std::vector<Choice>> list_;
};

struct RunResult {
  Rung rung = Rung::Separate;  // for run_split: what the main stream ran
  Reason reason;
  ChoiceList choices;          // the gemm calls in launch order
};

// How an engine runs a fused projection whose segments feed different consumers (MLA: qkv_a feeds the
// attention, the gate g only its output): one fused GEMM (run), the chosen segments on a side stream that
// overlaps the attention (run_split_deferred + join_side), or one gemm per segment (run with Rung::Separate).
enum class FusedMode { Fused, SideStream, Separate };
const char* fused_mode_name(FusedMode mode);          // "fused", "side_stream", "separate"
FusedMode parse_fused_mode(const std::string& name);  // Error listing the three names

// Which mode won per (tokens M, attention context) on one device, measured by `skinnygemm mla` and stored as
// data (policies/<model>_<layer>_<gpu>.json, docs/mla.md). Between grid points the nearest one counts, in
// log2 distance on each axis (both axes were sampled geometrically), a tie going to the larger point; outside
// the grid the nearest end counts.
struct FusedPolicy {
  std::string name;       // what it is for: "kimi_k3.mla.tp8"
  std::string device;     // the measuring GPU's name ("NVIDIA H200"); empty in the built-in default
  std::string signature;  // DeviceInfo::signature() of that GPU ("NVIDIA H200/132sm"); empty in the default
  std::string source;     // the file it was read from, or "default"
  std::vector<int64_t> ms, contexts;  // the grid axes, ascending
  std::vector<FusedMode> modes;       // ms.size() x contexts.size(), index mi * contexts.size() + ci
  std::vector<double> margins;        // same shape: runner-up us / pick us - 1 (0 where not measured)

  FusedMode at(std::size_t mi, std::size_t ci) const { return modes.at(mi * contexts.size() + ci); }
};

// Reads a policy file; an Error names the file and the field ("points[3].mode: expected fused, side_stream
// or separate, got \"fast\"").
FusedPolicy load_fused_policy(const std::string& path);
// Used where no file matches the device: Fused for M <= 16, Separate above, at every context (docs/mla.md
// says why: fusing fills the GPU at small M, where each GEMM is one weight stream; at larger M the merged
// 3648-row GEMM is a shape the tables tune less than its parts, and the side stream needs the engine's second
// stream and graph discipline, so it is chosen only from a measurement).
FusedPolicy default_fused_policy();
// The first policy file (name order) in folder (default: data_dir()/policies) whose signature equals the
// device's and whose name equals name; default_fused_policy() (with source "default") when none does.
FusedPolicy find_fused_policy(const DeviceInfo& device, const std::string& name, const std::string& folder = "");

class FusedProjection {
 public:
  // Validates the segments (>= 2; same K and dtype, BF16/FP16; non-null weights; n > 0; destinations all set
  // or all null, not overlapping each other, the weights or themselves for up to max_m rows) and throws Error
  // naming the segment and the values. Adjacent segments (segment i+1's w == segment i's w + n_i * ldw
  // elements, one ldw, no padding) are used in place (zero-copy); otherwise the weights are packed once into
  // memory the projection owns, after which the caller's weights are not read again.
  // backend Auto resolves now: CUDA pointers are device memory of the current device. max_m: 1..2^20. A run of
  // more than max_m rows checks the destinations against each other again for its rows (an Error if they overlap).
  FusedProjection(std::vector<Segment> segments, Backend backend = Backend::Auto, int64_t max_m = 64);
  ~FusedProjection();
  FusedProjection(FusedProjection&&) noexcept;
  FusedProjection& operator=(FusedProjection&&) noexcept;

  std::string name() const;           // the segment names joined by '+'
  Backend backend() const;
  int64_t k() const;
  DType dtype() const;
  int64_t total_n() const;            // merged rows, padding included (the contiguous output's columns)
  bool zero_copy() const;
  int64_t packed_bytes() const;       // bytes of the packed copy (0 when zero-copy)
  int64_t scratch_bytes() const;      // bytes of the scratch output (0 when not needed)
  const void* weights() const;        // the merged weights: total_n() rows, row stride weight_stride()
  int64_t weight_stride() const;
  std::vector<SegmentView> views() const;

  // The rung run() takes for M tokens on device (must be the projection's backend's device), and why.
  Eligibility eligibility(const DeviceInfo& device, int64_t m = 1) const;

  // y_i = x · w_i^T for every segment, into each segment's destination. x: [m, k], row stride ldx (0 = k).
  RunResult run(const void* x, int64_t ldx, int64_t m, const RunOptions& options = {});

  // Every segment into one output y: [m, total_n()], row stride ldy (0 = total_n()); segment i is columns
  // views()[i]. Padding columns are written (zeros) by the fused GEMM and left alone by separate calls.
  RunResult run_contiguous(const void* x, int64_t ldx, int64_t m, void* y, int64_t ldy,
                           const RunOptions& options = {});

  // CUDA: side_segments (indices) run as separate gemms on side_stream, the rest on main_stream (each
  // maximal run of adjacent remaining segments through the ladder: fused when >= 2). side_stream waits for
  // main_stream first (fork) and main_stream waits for side_stream at the end (join), with events created
  // at construction, so this is capture-safe. options.gemm.stream must be null or main_stream.
  // CPU: everything runs in order on the calling thread, and the reason says so.
  RunResult run_split(const void* x, int64_t ldx, int64_t m, void* main_stream, void* side_stream,
                      const std::vector<int>& side_segments, const RunOptions& options = {});

  // run_split without the join, so that the side segments also overlap whatever the caller queues on
  // main_stream next (vLLM #54015 runs the MLA gate g beside qkv_a *and* the attention that follows). The
  // side segments' outputs are ready on main_stream only after join_side(side_stream, main_stream), which
  // must come before anything on main_stream reads them and before a graph capture of main_stream ends (an
  // unjoined side stream fails the capture). One split in flight per projection (the events are its own).
  // CPU: everything runs in order on the calling thread and join_side does nothing.
  RunResult run_split_deferred(const void* x, int64_t ldx, int64_t m, void* main_stream, void* side_stream,
                               const std::vector<int>& side_segments, const RunOptions& options = {});
  void join_side(void* side_stream, void* main_stream);

  // The mode a measured policy picks for m tokens at this attention context (nearest grid point, see
  // FusedPolicy). Throws Error for m < 1 or context < 1.
  static FusedMode choose_mode(const FusedPolicy& policy, int64_t m, int64_t context);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace skinnygemm
