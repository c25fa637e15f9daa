// Model shape sets (data_dir()/models/<name>.json) and the shape / M-range specs every CLI command takes.
// Host-only; the namespace keeps these records apart from the engine-facing projection objects.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace skinnygemm::models {

// One weight [n, k] local to a rank at one TP degree, or a fusion of several weights sharing one input
// (n = the sum of the parts' n).
struct Projection {
  std::string name;      // "mla.q_b_proj"; empty for an explicit NxK shape
  int64_t n = 0;
  int64_t k = 0;
  int count = 1;         // launches per decode step (mtp: per draft step)
  std::string kind;      // mla, kda, moe, dense, head, mtp
  std::string parallel;  // col, row, repl, mixed
  std::vector<std::string> fused_parts;  // the segments' names; empty unless a fusion
  std::vector<int64_t> segments;         // the segments' n, in order; empty unless a fusion
  std::string part_of;   // the fusion this is a segment of, when it has no weight of its own by default
  int64_t unpadded = 0;  // rows that carry data: n, or fewer when n is padded with zero rows (KDA [f_a|b]: 140 of 144)
  int64_t pad_to = 1;    // n = ceil(unpadded / pad_to) * pad_to
  bool in_step = true;   // counted in the per-step totals (false for fusions, split segments, MTP)
  std::string note;

  bool fused() const { return !fused_parts.empty(); }
  std::string shape() const;  // "NxK"
};

struct ModelInfo {
  std::string name;
  std::string description;
  std::string source;        // where the shapes come from
  std::string not_included;  // what the file deliberately leaves out, and why
  std::string dtype;         // the weights' dtype in the released checkpoint
  std::vector<int> tps;      // TP degrees with shapes
  std::vector<std::pair<std::string, std::string>> config;  // model config values, in file order
};

// A whole-number config value of the model; throws Error naming the model, the key and `needed_by` when the key
// is missing or its value is not a whole number.
int64_t config_int(const ModelInfo& info, const std::string& key, const std::string& needed_by);

// Names of the model files under data_dir()/models (without .json), sorted.
std::vector<std::string> available_models();
std::string model_path(const std::string& model);

// Throw Error naming the model file and the bad field; an unknown model lists the available ones,
// an unknown tp the available TP degrees.
ModelInfo model_info(const std::string& model);
// Projections in file order, then (with include_fusions) the fusions in file order.
std::vector<Projection> model_projections(const std::string& model, int tp, bool include_fusions);

// --shapes: a comma list of items, each one of
//   model:<name>:tp<N>          every projection and fusion at that TP
//   model:<name>:tp<N>:fusions  only the fusions
//   NxK                         an explicit shape (name empty, count 1)
// deduplicated by (n, k), the first (and its name) kept.
std::vector<Projection> parse_shapes(const std::string& spec);

// --m: "1:64" (inclusive), "1:64:2" (with a step), "1,2,4,8" (a list), "3". Every M must be >= 1.
std::vector<int64_t> parse_m_range(const std::string& spec);

}  // namespace skinnygemm::models
