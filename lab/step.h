// The whole-decode-step model (docs/step.md): every dense projection one Kimi-K3 decode step runs on one rank,
// in model order, each reading an activation written by an earlier GEMM where the model does. Host-only: the
// shapes come from the model file, the layer structure (which projection reads which output) from here.
//
// Layout, fixed for all variants so that they read and write the same places:
// - weight blocks: one per weight or per group of weights a fusion merges (their rows adjacent, so the fused
//   variant runs them zero-copy), packed into one arena at 256-byte aligned offsets;
// - activation buffers [max_m, width] (row stride = width); a fusion's outputs are adjacent columns of one
//   buffer, so the fused GEMM writes them in place.
// Attention, norms, activations, residual adds, routed experts and the MLA absorb BMMs are not in the step;
// where one of them would sit between two GEMMs, the later GEMM reads the earlier GEMM's output of the same
// width instead (docs/step.md lists each stand-in).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "skinnygemm/dtype.h"

namespace skinnygemm::tune {

// cublaslt: every GEMM forced to cuBLASLt's default algorithm with FP32 split-K reductions (our fallback's
// configuration). cublaslt_torch: cuBLASLt as torch configures it for F.linear (every reduction scheme allowed),
// i.e. what an engine runs today.
// skinny: every in-step projection through skinnygemm's selection. skinny_fused: the Kimi-K3 fusions
// (qkv_a+g, QKVG+[f_a|b], and the MoE front: router+latent down+shared gate_up, or router+latent down with
// MoeFront::Ep) through FusedProjection, the rest as in skinny.
// cublaslt_fused: skinny_fused's ops with every GEMM on cuBLASLt's default, each fusion as one GEMM over its
// block (fused_as_one_gemm), so that the step separates what fusion gains from what our kernels gain.
// tma: every projection on the TMA family's first-cut config (kernels/tma/tma_family.h) where it applies,
// selection elsewhere; unfused (the family's fused rung is not in FusedProjection's ladder yet).
enum class StepVariant { Cublaslt, Skinny, SkinnyFused, Tma, CublasltTorch, CublasltFused };

// "cublaslt", "skinny", "skinny_fused", ...; with pdl = false the name gets "_nopdl".
std::string variant_name(StepVariant variant, bool pdl = true);
bool runs_fused_ops(StepVariant variant);  // skinny_fused and cublaslt_fused: StepModel::ops_fused
// A comma list of base names (no _nopdl); an unknown name is an Error listing the choices.
std::vector<StepVariant> parse_variants(const std::string& list);

// How the MoE front is fused in the fused variants (the model file's two MoE fusions; the unfused ops are the same):
// NonEp (the default): router + latent down + shared gate_up in one GEMM, the tensor-parallel path (ROCm/aiter #4834),
// which is what one rank's step without an expert all-to-all runs: one launch fewer per MoE layer (92 at Kimi-K3). Its
// three outputs are adjacent columns of moe.a, so cublaslt_fused runs it as one GEMM too.
// Ep: router + latent down in one GEMM, the shared experts' gate_up alone (the expert-parallel path, where the shared
// experts may overlap the dispatch); the step before session 18.
enum class MoeFront { Ep, NonEp };
std::string moe_front_name(MoeFront front);     // "ep", "non-ep"
MoeFront parse_moe_front(const std::string& name);  // an unknown name is an Error naming the two

struct StepBuffer {
  std::string name;   // "hidden", "mla.a", ...
  int64_t width = 0;  // columns (row stride)
  bool input = false; // written before the step (the embedding output); every other column by a GEMM
};

// Columns [col, col + n) of buffer `buffer`, rows 0..M-1.
struct StepSlice {
  int buffer = -1;
  int64_t col = 0;
  int64_t n = 0;
};

// Weight storage [rows, k]; the segments that use it name the rows they read.
struct StepBlock {
  std::string name;  // "mla.qkv_a_g@4": the weight (or the fusion) and the layer
  int layer = 0;
  int64_t rows = 0, k = 0;
  int64_t offset = 0;  // bytes into the weight arena
};

struct StepSegment {
  std::string name;  // the projection of the model file ("mla.g_proj")
  int64_t n = 0, k = 0;
  int block = -1;    // weights: rows [row, row + n) of the block
  int64_t row = 0;
  StepSlice y;       // n columns
  std::string parallel;  // the model file's "parallel": col, row, repl or mixed (a row-parallel output is a
                         // partial sum that the ranks all-reduce, see all_reduce_points)
};

// One launch unit: a single GEMM, or a fusion (several segments sharing x, adjacent rows and outputs).
struct StepOp {
  std::string name;  // the projection or fusion name ("mla.qkv_a_g"); ops of one name form a time sink
  std::string kind;  // mla, kda, moe, dense, head
  int layer = 0;     // 1-based; lm_head is layer layers + 1
  StepSlice x;       // k columns, shared by every segment
  std::vector<StepSegment> segments;

  bool fused() const { return segments.size() > 1; }
  int64_t k() const { return x.n; }
  int64_t n() const;             // the segments' rows together
  int64_t weight_bytes(std::size_t elem) const;
  int64_t bytes(int64_t m, std::size_t elem) const;  // weights + x read + y written
};

struct StepModel {
  std::string model;
  int tp = 0;
  double scale = 1.0;
  int layers = 0;
  MoeFront moe_front = MoeFront::NonEp;
  DType dtype = DType::BF16;
  int64_t hidden = 0;
  std::vector<StepBuffer> buffers;
  std::vector<StepBlock> blocks;
  int64_t arena_bytes = 0;  // all weight blocks
  std::vector<StepOp> ops_unfused, ops_fused;  // what ops() returns (both verified when built)

  // The variant's ops in model order: skinny_fused and cublaslt_fused run ops_fused (runs_fused_ops), the others
  // ops_unfused.
  std::vector<StepOp> ops(StepVariant variant) const;
  int64_t activation_bytes(int64_t max_m) const;  // every buffer for max_m rows
  int buffer_index(const std::string& name) const;
  std::size_t elem() const { return dtype_size(dtype); }
};

// Builds the step from data_dir()/models/<model>.json at one TP degree. scale in (0, 1]: every width times
// scale rounded to a multiple of 8 (at least 8; 16-byte rows stay aligned), and max(6, round(layers * scale))
// layers (so both MLA positions, every 4th and the last layer, appear at least twice). At scale 1 the layer
// pattern is checked against the file's per-kind layer counts and every projection's count.
StepModel build_step_model(const std::string& model, int tp, double scale = 1.0, MoeFront moe_front = MoeFront::NonEp);

// Throws Error naming the op, its layer, the buffer and the first column when an op reads a column that no
// earlier op (or the step's input) wrote, or reads / writes outside its buffer.
void verify_order(const StepModel& model, const std::vector<StepOp>& ops);

int64_t step_bytes(const std::vector<StepOp>& ops, int64_t m, std::size_t elem);

// A fusion as the one GEMM that covers it (the cublaslt_fused variant): rows [row, row + N) of its block and
// output columns [col, col + N) of its buffer, N the parts' rows together, named after the op. An Error naming
// the op and the part when its parts are not adjacent rows of one block and adjacent columns of one buffer.
StepSegment fused_as_one_gemm(const StepModel& model, const StepOp& op);

// Where the ranks of a tensor-parallel step all-reduce (docs/step.md, "Several GPUs"): the indices of the ops
// with a row-parallel segment (o_proj of MLA and KDA, shared.down, dense.down), in order. Each one's output is
// a partial sum over the rank's K shard that every rank needs whole before the next op reads it. An Error
// when such an op is a fusion or does not write whole rows of its buffer (the all-reduce sums [M, width] in
// place, so the rows must be contiguous).
std::vector<std::size_t> all_reduce_points(const StepModel& model, const std::vector<StepOp>& ops);
// Blocks whose weights are row-parallel (their products are summed over the ranks), by block index.
std::vector<bool> row_parallel_blocks(const StepModel& model);
std::map<std::string, int> op_counts(const std::vector<StepOp>& ops);  // launches per op name

// Bytes a run of the step needs beyond the weights and activations: the stream-read probe's buffer (1 GiB),
// the sinks' rotating weight copies (<= 4 x L2), cuBLASLt workspaces, graphs and the check's reference output.
constexpr int64_t kStepReserveBytes = int64_t{3} << 30;

struct MemoryFit {
  bool fits = false;
  int tp = 0;
  int64_t needed = 0, weights = 0, free = 0;
  int smallest_tp = 0;  // the smallest TP degree of the model that fits (0: none)
  std::string message;  // the numbers, and the smallest TP that fits when this one does not
};
// Decides from free_bytes (device memory, or host memory for the CPU backend) whether the step at tp fits.
MemoryFit memory_fit(const std::string& model, int tp, double scale, int64_t free_bytes);

}  // namespace skinnygemm::tune
