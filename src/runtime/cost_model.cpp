#include "runtime/cost_model.h"

#include <sstream>
#include <utility>

#include "kernels/family.h"

namespace skinnygemm {

CostBreakdown estimate_cpu(const Config& config, const Problem& problem, const DeviceInfo& device);  // backends/cpu

CostBreakdown estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  if (dev.is_cpu) return estimate_cpu(c, p, dev);
  return family(c.family).estimate(c, p, dev);
}

bool heuristic_scores(const Config& c, const Problem& p) {
  const FamilyDescriptor& f = family(c.family);
  return f.heuristic_scores && f.heuristic_scores(c, p);
}

bool better_pick(double us, const Config& c, double best_us, const Config& best) {
  if (us < best_us * (1 - kPickTieTolerance)) return true;
  return us <= best_us * (1 + kPickTieTolerance) && c.unroll < best.unroll;
}

bool fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not) {
  const FamilyDescriptor& f = family(c.family);
  return !f.fits_shape || f.fits_shape(c, p, dev, why_not);
}

std::vector<ScoredConfig> scored_configs(const Problem& p, const DeviceInfo& dev,
                                         const std::function<bool(const Config&)>& runnable) {
  std::vector<ScoredConfig> out;
  const auto& list = families();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const FamilyDescriptor& f = *list[i];
    // The CPU scores its own family; a GPU the families with a heuristic admission.
    if (dev.is_cpu ? f.gpu || !f.kernel : !f.heuristic_scores) continue;
    for (const Config& c : f.listed(static_cast<Family>(i))) {
      if (!dev.is_cpu && !f.heuristic_scores(c, p)) continue;
      if (!runnable(c)) continue;
      ScoredConfig s;
      s.config = c;
      s.cost = estimate(c, p, dev);
      s.ranked = dev.is_cpu || !f.single_wave || s.cost.waves <= 1.0;
      out.push_back(s);
    }
  }
  return out;
}

bool best_scored_config(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                        Config* best, double* best_us) {
  bool found = false;
  for (const ScoredConfig& s : scored_configs(p, dev, runnable)) {
    if (!s.ranked) continue;
    if (!found || better_pick(s.cost.us, s.config, *best_us, *best)) {
      *best_us = s.cost.us;
      *best = s.config;
      found = true;
    }
  }
  return found;
}

std::vector<ModelConstants> fitted_constants() {
  std::vector<ModelConstants> out;
  for (const FamilyDescriptor* f : families())
    if (f->fitted_constants)
      for (ModelConstants& m : f->fitted_constants()) out.push_back(std::move(m));
  return out;
}

int estimated_registers(const Config& c) { return family(c.family).registers(c); }

int64_t smem_bytes(const Config& c, const Problem& p) { return family(c.family).smem_bytes(c, p); }

std::string CostBreakdown::str() const {
  std::ostringstream os;
  os.precision(3);
  os << "predicted " << us << " us (stream " << stream_us << ", wave eff " << wave_eff << ", in-flight eff "
     << inflight_eff << ", chain " << chain_us << ", compute " << compute_us << ", " << ctas_per_sm
     << " CTAs/SM)";
  return os.str();
}

}  // namespace skinnygemm
