// The host side of the step across GPUs (docs/step.md, "Several GPUs"): what `skinnygemm step --ranks N` checks
// before it starts one process per GPU, and how the parent merges the processes' result files. No GPU or NCCL
// here, so that the CPU tests cover it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace skinnygemm::tune {

// One process per GPU of one host: an upper bound that catches typos before N processes start.
constexpr int kMaxStepRanks = 64;

// The command line's rank options. The user gives --ranks; the parent gives each child --rank, --nccl-id and
// --json (its result file).
struct StepRankArgs {
  int ranks = 1;
  int rank = -1;        // -1: not a child
  std::string nccl_id;  // file with the parent's ncclUniqueId (hex)
  std::string json;
  std::string backend = "auto";
};

// An Error naming the bad value and what was expected: --ranks outside 1..kMaxStepRanks, --rank outside
// 0..ranks-1 or without --ranks > 1, --nccl-id / --rank without each other, a child without --json, and
// --ranks > 1 on the cpu backend.
void check_rank_args(const StepRankArgs& args);

// Before any process starts: an Error saying "built without NCCL" when it was, or naming both numbers when
// fewer GPUs are visible than ranks asked for.
void check_ranks_runnable(int ranks, bool nccl_built, int visible_gpus);

// The parent's result rows from the ranks' documents (docs[r] from rank r: {"stream_read_tbps", "rows"}, rows
// of kind "step" with "rank" = r): every rank's rows ("scope": "rank"), then per (variant, M) of rank 0 one row
// "scope": "overall" with the slowest rank's time (a step across ranks is as slow as its slowest rank, the
// all-reduces make every rank wait for it), "rank_us" (each rank's), the largest comm_us and its share, the
// speedup against the overall cublaslt row of the same PDL setting and M, and the errors of every rank that
// failed. An Error when a document is missing a rank or a row.
nlohmann::ordered_json merge_rank_rows(const std::vector<nlohmann::ordered_json>& docs);

}  // namespace skinnygemm::tune
