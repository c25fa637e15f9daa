// The measurement protocol of docs/measuring.md for one problem, shared by the CLI (bench, tune, step)
// and the tests. On the CUDA backend: cold weights (rotating copies >= 4x L2), one CUDA graph of R launches,
// >= 5 samples of >= 20 replays, median per call, against the stream-read limit and cuBLASLt measured in
// the same process. On the CPU backend: the same row without the GPU-only columns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "skinnygemm/skinnygemm.h"

namespace skinnygemm::tune {

// How aligned the GPU bench's operands are: cudaMalloc'd buffers and weight and output copies at 256-byte multiples
// (lab/cuda/measure.cu), so what cuBLASLt's heuristic lists for them is its list for 256-byte aligned pointers.
constexpr int kBenchOperandAlignment = 256;

struct BenchOptions {
  Backend backend = Backend::Auto;
  const Table* table = nullptr;  // nullptr = default table for the device
  std::string config;            // force a config; empty = select
  int samples = 5;               // timed samples (median reported)
  int replays = 20;              // graph replays per sample (GPU) / calls per sample (CPU)
  bool baselines = true;         // also time cuBLASLt default + best and the stream-read limit (GPU)
  bool check = true;             // verify the output against the reference before timing
  int lab_ablate = 0;            // the lab's TMA ablation bits on the config's timed launches (`bench` only: wrong results)
};

struct BenchRow {
  std::string kind = "gemm";
  std::string name;  // projection name when it came from a model ("mla.fused_qkv_a"), else empty
  Problem problem;
  std::string config;  // what ran
  std::string source;  // table / heuristic / fallback / forced
  double us = 0;       // median per call
  double spread = 0;   // (max - min) / median over samples
  double tbps = 0;     // total bytes / us
  // GPU only (0 when not measured)
  double stream_read_us = 0;
  double efficiency = 0;  // stream_read_us / us
  double cublaslt_us = 0;
  double cublaslt_best_us = 0;
  std::string cublaslt_best_config;
  double speedup = 0;       // cublaslt_us / us
  double speedup_best = 0;  // cublaslt_best_us / us
  // correctness
  bool checked = false;
  double rel_error = 0;  // ||y - ref|| / ||ref|| against the FP64 reference
  // GPU only, after the fields above so that their aggregate initializers keep their meaning
  double cublaslt_torch_us = 0;    // cuBLASLt as torch's F.linear configures it (reduced-precision reductions allowed)
  double chain_us = 0;             // the dependent-chain floor of the same bytes, measured in this run
  double chain_reference_us = 0;   // what the reference chain probe measured at this size on an H200 (0: not an H200)
};

struct BenchMeta {
  std::string gpu;  // device name ("cpu" on the CPU backend)
  int sms = 0;
  double l2_mib = 0;
  std::string cuda, cublaslt, revision, command, date;
  double stream_read_tbps = 0;  // best streaming-read rate seen in this run (GPU)
};

// Runs one problem through the protocol. Throws Error if the output check fails.
BenchRow bench_problem(const Problem& problem, const BenchOptions& options);

// The reference dependent-chain probe's time at this many bytes on an H200 (interpolated), against which a run's
// own chain probe is checked: more than 3% slower and the bench warns that its probe is weak.
double reference_chain_us(int64_t bytes);

// Throws Error naming the bytes needed and available unless bench_problem(problem, options) fits in the
// backend's memory (host for the CPU; device, plus the host copy of the reference, for CUDA). bench_problem
// checks it too; a command checks every problem with it before the first measurement.
void check_bench_fits(const Problem& problem, const BenchOptions& options);

// The meta block for the backend's device (revision, command and date are filled in by the caller).
BenchMeta bench_meta(Backend backend);

// JSON in the shared result schema: {"meta": {...}, "stream_read_tbps": x, "rows": [...]}.
std::string results_json(const BenchMeta& meta, const std::vector<BenchRow>& rows);
std::string results_csv(const std::vector<BenchRow>& rows);

}  // namespace skinnygemm::tune
