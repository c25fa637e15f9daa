#include "skinnygemm/select.h"

#include <cstdlib>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "runtime/backends.h"
#include "runtime/cost_model.h"
#include "kernels/family.h"
#include "runtime/plan_impl.h"
#include "runtime/warn_once.h"
#include "skinnygemm/table.h"

namespace skinnygemm {

Reason::Reason(std::string text) : text_(std::make_shared<const std::string>(std::move(text))) {}
Reason::Reason(const char* text) : Reason(std::string(text ? text : "")) {}

const std::string& Reason::str() const {
  static const std::string none;
  return text_ ? *text_ : none;
}

std::ostream& operator<<(std::ostream& os, const Reason& reason) { return os << reason.str(); }
std::string operator+(const std::string& a, const Reason& b) { return a + b.str(); }
std::string operator+(const Reason& a, const std::string& b) { return a.str() + b; }

const char* source_name(Source source) {
  switch (source) {
    case Source::Table: return "table";
    case Source::Heuristic: return "heuristic";
    case Source::Fallback: return "fallback";
    case Source::Forced: return "forced";
  }
  return "?";
}

bool logging_enabled() {
  const char* v = std::getenv("SKINNYGEMM_LOG");
  return v && *v && std::string(v) != "0";
}

bool supports(const Config& c, const Problem& p, const DeviceInfo& dev, int alignment, std::string* why_not) {
  if (!dtype_supported(p.dtype)) return fail(why_not, std::string("dtype ") + dtype_name(p.dtype) + " is not supported");
  return family(c.family).supports(c, p, dev, alignment, why_not);
}

double predicted_us(const Config& c, const Problem& p, const DeviceInfo& dev) { return estimate(c, p, dev).us; }

Config forced_config(const std::string& name, const Problem& p, const DeviceInfo& dev) {
  Family id{};
  if (const FamilyDescriptor* f = find_family(name, &id); f && f->first_cut) return f->first_cut(p, dev);
  return Config::parse(name);
}

namespace {

// A family's structural pick (FamilyDescriptor::structural_pick), the first in registry order that is runnable.
bool structural_choice(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                       Choice* out) {
  if (dev.is_cpu) return false;
  for (const FamilyDescriptor* f : families()) {
    Config pick;
    std::string why;
    if (!f->structural_pick || !f->structural_pick(p, dev, &pick, &why) || !runnable(pick)) continue;
    out->config = pick;
    out->source = Source::Heuristic;
    out->reason = "heuristic: " + why;
    return true;
  }
  return false;
}

// The best scored kernel among the runnable configs, its prediction the reason.
bool best_kernel_choice(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                        Choice* out) {
  double us = 0;
  if (!best_scored_config(p, dev, runnable, &out->config, &us)) return false;
  out->source = Source::Heuristic;
  out->reason = "heuristic: " + estimate(out->config, p, dev).str();
  return true;
}

}  // namespace

bool heuristic_kernel(const Problem& p, const DeviceInfo& dev, int alignment, Choice* out) {
  // Kernels only: a structural rule may pick cuBLASLt itself (tma_family.h, session 34's rule B).
  const auto runnable = [&](const Config& c) { return family(c.family).kernel && supports(c, p, dev, alignment); };
  return structural_choice(p, dev, runnable, out) || best_kernel_choice(p, dev, runnable, out);
}

namespace {

// Where the heuristic's pick is cuBLASLt's default at M <= 64 on a GPU: cublaslt_unsplit, which runs the default unless
// that splits K and another of cuBLASLt's own answers does not (backends/cuda/cublaslt_unsplit.h: within 5% of the best
// at 945 of 1161 recorded points against the default's 856). Above 64 tokens nothing was measured. The scored models
// alone (scored_heuristic_choice_among) keep naming the default, which is what they model.
void unsplit_instead(const Problem& p, Choice* out) {
  if (p.m > 64 || out->config.family != Family::Cublaslt || out->config.lt_identity.named() || out->config.algo != -1)
    return;
  out->config.algo = kCublasltUnsplit;
  out->reason = out->reason + "; as cublaslt_unsplit: cuBLASLt's default unless it splits K and another of its answers "
                              "(>= 48 rows, >= M / 2 tokens) does not";
}

// The heuristic's pick among the runnable configs; `structural`: a family's structural rules first (false: the scored
// models alone, whatever those rules would pick, cuBLASLt included).
bool heuristic_pick(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                    bool structural, Choice* out) {
  // An empty problem launches nothing: no kernel is scored for it (the GPU models divide by N and K), the fallback
  // names what would run.
  if (!dev.is_cpu && (p.m < 1 || p.n < 1 || p.k < 1)) return false;
  // A family's structural rules decide against cuBLASLt themselves (tma_family.h: measured where they apply).
  if (structural && structural_choice(p, dev, runnable, out)) return true;
  if (!best_kernel_choice(p, dev, runnable, out)) {
    // On a GPU where some kernel could run but none is scored (e.g. K too short for every scored split),
    // cuBLASLt is the heuristic's pick; where no kernel can run at all, selection falls back.
    if (dev.is_cpu) return false;
    bool any_runnable = false;
    for (const Config& c : all_listed_configs())
      if (family(c.family).gpu && family(c.family).kernel && runnable(c)) {
        any_runnable = true;
        break;
      }
    if (!any_runnable) return false;
    out->config = Config::parse("cublaslt");
    out->source = Source::Heuristic;
    out->reason = "heuristic: cuBLASLt (no scored kernel config supports " + p.str() + ")";
    return true;
  }
  // On a GPU the kernel must also beat cuBLASLt's predicted time by the margin; otherwise cuBLASLt is the pick.
  if (!dev.is_cpu) {
    const double best = predicted_us(out->config, p, dev);
    const Config lt = Config::parse("cublaslt");
    const double lt_us = predicted_us(lt, p, dev);
    if (best > kHeuristicKernelMargin * lt_us) {
      std::ostringstream os;
      os.precision(3);
      os << "heuristic: cuBLASLt predicted " << lt_us << " us; the best kernel " << out->config.name() << " ("
         << best << " us) is not below " << kHeuristicKernelMargin << "x that";
      out->config = lt;
      out->reason = os.str();
    }
  }
  return true;
}

}  // namespace

bool heuristic_choice_among(const Problem& p, const DeviceInfo& dev,
                            const std::function<bool(const Config&)>& runnable, Choice* out) {
  if (!heuristic_pick(p, dev, runnable, /*structural=*/true, out)) return false;
  unsplit_instead(p, out);
  return true;
}

bool scored_heuristic_choice_among(const Problem& p, const DeviceInfo& dev,
                                   const std::function<bool(const Config&)>& runnable, Choice* out) {
  return heuristic_pick(
      p, dev, [&](const Config& c) { return !family(c.family).structural_pick && runnable(c); },
      /*structural=*/false, out);
}

bool heuristic_choice(const Problem& p, const DeviceInfo& dev, int alignment, Choice* out) {
  return heuristic_choice_among(p, dev, [&](const Config& c) { return supports(c, p, dev, alignment); }, out);
}

bool bucket_yields_to_structural_pick(const Problem& p, const DeviceInfo& dev,
                                      const std::function<bool(const Config&)>& runnable, Choice* out) {
  return structural_choice(p, dev, runnable, out);
}

namespace {

// What a choice depends on, as plain values (no string is built per lookup): the device as a table matches it
// (its name by hash, SM count, compute capability), the table's revision, the problem and the alignment.
struct SelectionKey {
  bool cpu;
  int sms, cc;
  std::size_t device_name;
  uint64_t table_id;
  int64_t m, n, k, ldx, ldw, ldy;
  DType dtype;
  int alignment;
  bool operator==(const SelectionKey& o) const {
    return cpu == o.cpu && sms == o.sms && cc == o.cc && device_name == o.device_name && table_id == o.table_id &&
           m == o.m && n == o.n && k == o.k && ldx == o.ldx && ldw == o.ldw && ldy == o.ldy && dtype == o.dtype &&
           alignment == o.alignment;
  }
};

struct SelectionKeyHash {
  std::size_t operator()(const SelectionKey& k) const {
    std::size_t h = k.device_name;
    auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (int64_t v : {k.m, k.n, k.k, k.ldx, k.ldw, k.ldy}) mix(static_cast<uint64_t>(v));
    mix(k.table_id);
    mix((static_cast<uint64_t>(k.sms) << 32) | (static_cast<uint64_t>(k.cc) << 16) |
        (static_cast<uint64_t>(k.alignment) << 8) | (static_cast<uint64_t>(k.dtype) << 1) | (k.cpu ? 1u : 0u));
    return h;
  }
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<SelectionKey, Choice, SelectionKeyHash> choices;
  std::set<std::string> warned;
};
Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

void warn_once(const std::string& key, const std::string& message) {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.warned.insert(key).second) return;
  }
  std::cerr << "skinnygemm: warning: " << message << "\n";
}

namespace {

Choice fallback_choice(const DeviceInfo& dev, const std::string& why) {
  Choice ch;
  ch.source = Source::Fallback;
  if (dev.is_cpu) {
    ch.config = Config::parse("cpu_r4");
  } else {
    ch.config = Config::parse("cublaslt");
  }
  ch.reason = "fallback: " + why;
  return ch;
}

Choice select_uncached(const Problem& p, const DeviceInfo& dev, const Table* table, int alignment) {
  std::string table_note;
  if (table && table->mismatch(dev, alignment).empty()) {
    int64_t bucket = p.m;
    std::optional<TableEntry> e = table->find_bucket(p.dtype, p.n, p.k, p.m, &bucket);
    Choice structural;
    if (e && bucket != p.m &&
        bucket_yields_to_structural_pick(p, dev, [&](const Config& c) { return supports(c, p, dev, alignment); },
                                         &structural)) {
      structural.reason = "table " + table->path + " has no entry at M=" + std::to_string(p.m) +
                          " (its next, M=" + std::to_string(bucket) + ", is not used where structural rules apply); " +
                          structural.reason.str();
      return structural;
    }
    if (e && e->heuristic_kept) {
      // tune --refine measured the heuristic's pick best at the marker's M: the heuristic decides here, as without
      // a table, instead of a larger M's entry standing for this point.
      std::ostringstream os;
      os << "table " << table->path << ": heuristic kept (measured best at M=" << bucket << ", " << e->us << " us";
      if (e->cublaslt_us > 0) os << " vs cuBLASLt " << e->cublaslt_us << " us";
      os << "); ";
      table_note = os.str();
    } else if (e) {
      std::string why_not;
      const FamilyDescriptor& f = family(e->config.family);
      if (f.storable && !f.storable(e->config, &why_not)) {
        // The entry was measured, but its name may mean other code here. The fallback (cuBLASLt's default on a
        // GPU) is what every entry was measured against, so running it loses at most what the entry gained.
        const std::string entry = "table entry " + e->config.name() + " (" + dtype_name(p.dtype) + " n=" +
                                  std::to_string(p.n) + " k=" + std::to_string(p.k) + " m=" + std::to_string(bucket) +
                                  ")";
        warn_once(table->path + "|not storable|" + family_name(e->config.family),
                  "skipping " + entry + " of table " + table->path +
                      " and every entry like it (the fallback runs instead): " + why_not);
        return fallback_choice(dev, entry + " skipped: " + why_not);
      }
      if (supports(e->config, p, dev, alignment, &why_not)) {
        std::ostringstream os;
        os << "table " << table->path;
        if (bucket != p.m) os << " (bucket M=" << bucket << ")";
        os << ": " << e->us << " us";
        if (e->cublaslt_us > 0) os << " vs cuBLASLt " << e->cublaslt_us << " us";
        return Choice{e->config, Source::Table, os.str()};
      }
      table_note = "table entry " + e->config.name() + " does not apply (" + why_not + "); ";
    }
  }
  Choice ch;
  if (heuristic_choice(p, dev, alignment, &ch)) {
    ch.reason = table_note + ch.reason;
    return ch;
  }
  return fallback_choice(dev, table_note + "no kernel config supports " + p.str() + " with " +
                                  std::to_string(alignment) + "-byte aligned operands");
}

}  // namespace

Choice select(const Problem& p, const DeviceInfo& dev, const Table* table, int alignment) {
  const SelectionKey key{dev.is_cpu, dev.sms, dev.cc_major * 10 + dev.cc_minor, std::hash<std::string>{}(dev.name),
                         table ? table->id : 0, p.m, p.n, p.k, p.x_stride(), p.w_stride(), p.y_stride(), p.dtype,
                         alignment};
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.choices.find(key);
    if (it != c.choices.end()) return it->second;
  }
  if (table) {
    const std::string why = table->mismatch(dev, alignment);
    // One warning per (table, mismatched field), however many problems ask.
    if (!why.empty())
      warn_once(table->path + "|" + why.substr(0, why.find(':')), "skipping table " + table->path + ": " + why);
  }
  Choice ch = select_uncached(p, dev, table, alignment);
  std::lock_guard<std::mutex> lock(c.mutex);
  auto inserted = c.choices.emplace(key, ch);
  if (inserted.second && logging_enabled())
    std::cerr << "skinnygemm: " << p.str() << " -> " << ch.config.name() << " [" << source_name(ch.source)
              << "] " << ch.reason << "\n";
  return inserted.first->second;
}

void clear_selection_cache() {
  {
    std::lock_guard<std::mutex> lock(cache().mutex);
    cache().choices.clear();
  }
  clear_plan_cache();
}

}  // namespace skinnygemm
