// The fused-projection benchmark (docs/fused.md, issue 5): per fusion of a model file and per M, one
// FusedProjection::run with per-segment destinations against the same segments as separate skinnygemm::gemm
// calls back to back (one graph, same run), each segment alone, the merged GEMM into one contiguous output,
// cuBLASLt over the merged weights and the stream-read limit of the merged bytes. Outputs are checked first
// (fused and every other merged result against the separate calls, rtol 1e-2 / atol 1e-3); a point that fails
// is reported and not timed. Rows of kind "fused" in the shared result schema (docs/measuring.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "skinnygemm/skinnygemm.h"
#include "lab/bench.h"

namespace skinnygemm::tune {

struct FusedSegmentSpec {
  std::string name;    // the model's projection ("mla.fused_qkv_a")
  int64_t n = 0;       // rows that carry data (140 for KDA [f_a|b] at TP8)
  int64_t pad_to = 1;  // rows padded to a multiple of this in the merged weights (8: 140 -> 144)

  int64_t padded() const { return (n + pad_to - 1) / pad_to * pad_to; }
};

struct FusedSpec {
  std::string name;  // the model's fusion ("mla.qkv_a_g")
  int64_t k = 0;
  DType dtype = DType::BF16;
  std::vector<FusedSegmentSpec> segments;

  int64_t rows() const;      // the caller's weight rows: sum of n
  int64_t merged_n() const;  // the fused GEMM's N: sum of the padded rows
};

// The fusions of data_dir()/models/<model>.json at tp, in file order; names selects some (an unknown name is an
// Error listing the model's fusions), empty = all. Segments take the parts' unpadded rows and pad_to from the
// file. scale in (0, 1] shrinks K and unpadded segments to multiples of 8 (at least 8) and padded segments to
// round(n * scale) rows (at least 1, padding kept), for tests on the CPU backend.
std::vector<FusedSpec> model_fusions(const std::string& model, int tp, const std::vector<std::string>& names = {},
                                     double scale = 1.0, DType dtype = DType::BF16);

struct FusedSegmentResult {
  std::string name;
  int64_t n = 0, pad_to = 1;
  double us = 0, spread = 0;  // this segment's gemm alone, in a graph of its launches
  std::string config, source;  // what selection picked for it
  // The copies are sized for the whole fusion: this segment's slices of them together are < 4x L2, so its time
  // alone is partly from L2 (warm). The fused, separate and contiguous times are not affected.
  bool l2_warm = false;
};

struct FusedRow {
  std::string name;  // the fusion
  DType dtype = DType::BF16;
  int64_t n = 0, k = 0, m = 0;  // n: merged rows, padding included
  std::vector<FusedSegmentResult> segments;
  std::string rung, reason;        // what FusedProjection::run took, and why
  std::vector<std::string> configs;  // the gemm configs run() launched, in order
  double us = 0, spread = 0, tbps = 0;       // run(): one call with per-segment destinations
  double separate_us = 0, separate_spread = 0;  // every segment's gemm back to back, one graph
  double contiguous_us = 0;  // run_contiguous: the merged GEMM into one output, no copies
  // GPU, where run() did not take the fused kernel (selection picked cuBLASLt for the merged shape): run() with
  // rung 1 forced and the heuristic's kernel for the merged problem (empty / 0 when not measured).
  std::string kernel_config;
  double kernel_us = 0;
  // GPU only (0 when not measured)
  double stream_read_us = 0, efficiency = 0;  // the merged problem's bytes; stream_read_us / us
  double cublaslt_us = 0, cublaslt_best_us = 0;
  std::string cublaslt_best_config;
  // The check: largest |y - y_separate| / (atol + rtol |y_separate|) over every output compared (<= 1 passes).
  double check_ratio = 0;
  int64_t checked = 0;  // outputs compared
  std::string error;    // why the check failed or the point could not run (then nothing was timed); empty: passed

  double ratio() const { return separate_us > 0 ? us / separate_us : 0; }  // fused / separate
};

struct FusedBenchOptions {
  Backend backend = Backend::Auto;
  std::vector<int64_t> ms{1};    // tokens, each 1..64
  int samples = 5;               // timed samples (median reported)
  int replays = 20;              // graph replays (GPU) or passes (CPU) per sample
  const Table* table = nullptr;  // nullptr = the shipped table for the device
  bool baselines = true;         // GPU: cuBLASLt default + best-of-heuristics, stream-read limit
  std::function<void(const std::string&)> progress;  // one line per point (the CLI prints it on stderr)
  std::function<void(const FusedRow&)> on_row;         // each row as soon as it is measured
};

// The check's tolerance (the issue's, and tests/gpu/test_projection.cpp's).
constexpr double kFusedRtol = 1e-2;
constexpr double kFusedAtol = 1e-3;

// Runs every fusion at every M on the backend's device; rows in (fusion, M) order. A point whose check fails, or
// that throws (a CUDA error, an allocation), is a row with error set, and the others are still measured. Bad
// options are an Error naming the value, before anything runs.
std::vector<FusedRow> run_fused_bench(const std::vector<FusedSpec>& fusions, const FusedBenchOptions& options);

// {"meta": ..., "stream_read_tbps": x, "rows": [...]}: rows of kind "fused"; rows with an error are left out.
std::string fused_results_json(const BenchMeta& meta, const std::vector<FusedRow>& rows);

}  // namespace skinnygemm::tune
