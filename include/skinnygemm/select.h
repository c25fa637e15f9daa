// Selection: a measured table entry, else the cost-model heuristic over configs whose supports() holds,
// else the fallback (cuBLASLt on a GPU, the CPU backend's default on the CPU). A table's heuristic marker
// (TableEntry::heuristic_kept) for the point or its bucket means the heuristic, its reason saying so. Cached per
// problem.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {

class Table;

enum class Source { Table, Heuristic, Fallback, Forced };
const char* source_name(Source source);

// Why a config was chosen: text written once when the choice is made and shared by every copy, so that a Choice
// returned per call copies a pointer, not the text.
class Reason {
 public:
  Reason() = default;
  Reason(std::string text);  // NOLINT: implicit, so that a reason is assigned from a string
  Reason(const char* text);  // NOLINT
  const std::string& str() const;  // "" when none
  operator const std::string&() const { return str(); }  // NOLINT
  const char* c_str() const { return str().c_str(); }
  bool empty() const { return str().empty(); }
  std::size_t find(const std::string& text, std::size_t pos = 0) const { return str().find(text, pos); }

 private:
  std::shared_ptr<const std::string> text_;
};
std::ostream& operator<<(std::ostream& os, const Reason& reason);
std::string operator+(const std::string& a, const Reason& b);
std::string operator+(const Reason& a, const std::string& b);

struct Choice {
  Config config;
  Source source = Source::Fallback;
  Reason reason;  // why this config ("table hit", "heuristic: 0.93 of limit, 264 CTAs ...")
};

// Whether config can run problem on device with operands of the given alignment (bytes, see
// operand_alignment). When it cannot, why_not (if given) says why.
bool supports(const Config& config, const Problem& problem, const DeviceInfo& device, int alignment,
              std::string* why_not = nullptr);

// Thread-safe; results are cached per (device, table id, problem, alignment): see Table::id for tables edited in place.
// table may be null (heuristic, then fallback). SKINNYGEMM_LOG=1 prints each new choice once.
Choice select(const Problem& problem, const DeviceInfo& device, const Table* table, int alignment = 16);

// A forced config name (Options::config, --config): a full name (Config::parse), or a family's name alone
// ("tma") for that family's structural first-cut config of the problem on the device.
Config forced_config(const std::string& name, const Problem& problem, const DeviceInfo& device);

// The heuristic alone (no table, no cache): the best-scoring supported config, if any, with its score
// in the reason. Returns false when no kernel config supports the problem.
bool heuristic_choice(const Problem& problem, const DeviceInfo& device, int alignment, Choice* out);
// The heuristic's best-scoring supported kernel config (never cuBLASLt), if any: what heuristic_choice compares
// with cuBLASLt's prediction, for callers that need a kernel (e.g. to force a fused projection's kernel rung).
bool heuristic_kernel(const Problem& problem, const DeviceInfo& device, int alignment, Choice* out);

// Predicted time (microseconds) of config on problem by the cost model; used by the heuristic and shown
// by SKINNYGEMM_LOG. Only for kernel families (bulk, tma, cpu).
double predicted_us(const Config& config, const Problem& problem, const DeviceInfo& device);

void clear_selection_cache();

}  // namespace skinnygemm
