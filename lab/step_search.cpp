// The step search (lab/step_search.h): greedy, shape by shape, each trial a whole-step graph.
#include "lab/step_search.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "kernels/family.h"
#include "lab/tuner.h"
#include "skinnygemm/select.h"

namespace skinnygemm::tune {

namespace {

// The ops of one GEMM shape: unfused ops of that shape, or fusions whose merged GEMM has it (the fused variants).
struct ShapeGroup {
  Problem problem;  // of the first op, at the searched M (a fusion: the merged GEMM, its outputs contiguous)
  std::vector<std::size_t> ops;
  int64_t weight_bytes = 0;  // per step
};

std::vector<ShapeGroup> shape_groups(const StepExecutor& ex, const StepModel& model, int64_t m, int min_launches) {
  std::map<std::pair<int64_t, int64_t>, ShapeGroup> by_shape;
  for (std::size_t i = 0; i < ex.ops().size(); ++i) {
    const StepOp& op = ex.ops()[i];
    const int64_t n = op.n(), k = op.k();
    ShapeGroup& g = by_shape[{n, k}];
    // One problem and one weight rotation per group (time_ops_alone rotates an unfused op's weights, which a fusion
    // refuses): a fusion and an unfused op of one shape are not grouped (no Kimi-K3 layout has such a pair).
    SKINNYGEMM_CHECK(g.ops.empty() || ex.ops()[g.ops[0]].fused() == op.fused(),
                     "step search: " << op.name << " (" << n << "x" << k << ") shares its shape with "
                                     << ex.ops()[g.ops[0]].name << ", one fused and one not; search them apart");
    if (g.ops.empty())
      g.problem = Problem{m, n, k, model.dtype, model.buffers[op.x.buffer].width, k,
                          op.fused() ? n : model.buffers[op.segments[0].y.buffer].width};
    g.ops.push_back(i);
    g.weight_bytes += op.weight_bytes(model.elem());
  }
  // A shape launched fewer times than the table keeps (step_search_table) is not searched: its trials would be
  // spent on a pick no table stores.
  for (auto it = by_shape.begin(); it != by_shape.end();)
    it = static_cast<int>(it->second.ops.size()) < min_launches ? by_shape.erase(it) : std::next(it);
  std::vector<ShapeGroup> out;
  for (auto& [shape, g] : by_shape) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(),
                   [](const ShapeGroup& a, const ShapeGroup& b) { return a.weight_bytes > b.weight_bytes; });
  return out;
}

// One M's search over the executor's shapes.
class ShapeSearch {
 public:
  ShapeSearch(const StepSearchOptions& o, const StepModel& model, StepDevice& dev, StepExecutor& ex, int64_t m)
      : o_(o), model_(model), dev_(dev), ex_(ex), m_(m), info_(device_info(dev.memory().backend)),
        table_(default_table(info_)) {}

  double time_step() {
    return dev_.time([&] { ex_.run_all(m_, dev_.stream()); }, o_.samples).median_us;
  }

  // The step with the group on config ("" = what the base variant runs): one eager step from fresh activations
  // first (plans are made on first use, outside the capture; a step repeated on its own outputs drifts, and a
  // K = 8 projection of drifted inputs missed the check's tolerance on the CPU), the group's last op checked
  // against the reference (nothing of the group ran after it), then the step timed.
  double time_with(const ShapeGroup& g, const std::string& config) {
    ex_.force_config(g.problem.n, g.problem.k, config);
    dev_.reset_activations(static_cast<uint32_t>(0x5EA4C000u + m_));
    for (std::size_t i = 0; i <= g.ops.back(); ++i) ex_.run(i, m_, dev_.stream());
    check_op(dev_, model_, ex_.ops()[g.ops.back()], m_, "step search, " + (config.empty() ? "the base" : config));
    for (std::size_t i = g.ops.back() + 1; i < ex_.ops().size(); ++i) ex_.run(i, m_, dev_.stream());
    return time_step();
  }

  StepPick search(const ShapeGroup& g, StepSearchResult* r) {
    StepPick pick;
    pick.m = m_, pick.n = g.problem.n, pick.k = g.problem.k, pick.count = static_cast<int>(g.ops.size());
    ex_.force_config(g.problem.n, g.problem.k, "");
    pick.base_config = ex_.forced_config(g.problem);
    if (pick.base_config.empty()) pick.base_config = select(g.problem, info_, table_).config.name();
    const std::vector<std::string> candidates = candidates_for(g, pick.base_config);
    const double current = time_with(g, "");  // the incumbent now, not the last shape's winner
    std::string best;
    double best_us = current;
    for (const std::string& c : candidates) {
      StepTrial trial{m_, g.problem.n, g.problem.k, c, 0, ""};
      try {
        trial.step_us = time_with(g, c);
      } catch (const Error& e) {  // a candidate that cannot run (or computes wrong results) has no time
        trial.error = e.what();
        restore_base_after(g, c, trial.error);
      }
      r->trials.push_back(trial);
      if (trial.error.empty() && trial.step_us < best_us) best_us = trial.step_us, best = c;
    }
    pick.config = pick.base_config;
    pick.base_step_us = pick.step_us = current;
    std::string forced;  // "" keeps the base
    if (!best.empty() && best_us < current * (1 - o_.margin)) {
      // The fastest of many noisy trials is biased low: time incumbent and winner again, in ABBA order.
      const double a1 = time_with(g, ""), b1 = time_with(g, best), b2 = time_with(g, best), a2 = time_with(g, "");
      pick.base_step_us = (a1 + a2) / 2;
      pick.winner_step_us = (b1 + b2) / 2;
      if (pick.winner_step_us < pick.base_step_us * (1 - o_.margin)) {
        pick.config = forced = best;
        pick.step_us = pick.winner_step_us;
      } else {
        pick.step_us = pick.base_step_us;
      }
    }
    ex_.force_config(g.problem.n, g.problem.k, forced);
    pick.alone_us = time_ops_alone(ex_, dev_, g.ops, m_, o_.samples, model_.elem());
    if (dev_.memory().backend == Backend::Cuda) {
      ex_.force_config(g.problem.n, g.problem.k, "cublaslt");
      pick.cublaslt_alone_us = time_ops_alone(ex_, dev_, g.ops, m_, o_.samples, model_.elem());
      ex_.force_config(g.problem.n, g.problem.k, forced);
    }
    return pick;
  }

 private:
  std::vector<std::string> candidates_for(const ShapeGroup& g, const std::string& base) const {
    std::vector<std::string> out;
    for (const Config& c : tune_candidates(g.problem, info_, o_.candidates)) {
      const std::string name = c.name();
      const bool keep = c.family == Family::Cublaslt
                            ? name == "cublaslt"
                            : o_.distance == kAnyDistance || name_distance(name, base) <= o_.distance;
      if (keep && name != base) out.push_back(name);
    }
    if (table_)
      // A heuristic marker names no config: selection's pick, the base, is what it keeps.
      if (const auto e = table_->find(g.problem.dtype, g.problem.n, g.problem.k, g.problem.m);
          e && !e->heuristic_kept) {
        const std::string name = e->config.name();
        // An entry selection skips (a cuBLASLt position) could be picked but not stored: it is no candidate.
        const FamilyDescriptor& f = family(e->config.family);
        const bool storable = !f.storable || f.storable(e->config, nullptr);
        if (storable && name != base && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      }
    return out;
  }

  // After a failed trial the base must still run: a sticky device error (an illegal address) ends the search
  // here, naming the candidate, instead of failing every later trial.
  void restore_base_after(const ShapeGroup& g, const std::string& candidate, const std::string& error) {
    try {
      ex_.force_config(g.problem.n, g.problem.k, "");
      for (std::size_t i : g.ops) ex_.run(i, m_, dev_.stream());
      dev_.read(dev_.memory().at(model_, ex_.ops()[g.ops[0]].segments[0].y), 1, 1, 1);  // waits for the queue
    } catch (const Error& e) {
      throw Error("step search: the device failed after candidate " + candidate + " (" + error + "): " + e.what());
    }
  }

  const StepSearchOptions& o_;
  const StepModel& model_;
  StepDevice& dev_;
  StepExecutor& ex_;
  int64_t m_;
  DeviceInfo info_;
  const Table* table_;
};

std::string shape_str(const Problem& p) { return std::to_string(p.n) + "x" + std::to_string(p.k); }

}  // namespace

StepSearchReport search_step(const StepSearchOptions& o, const StepModel& model, StepDevice& dev) {
  const bool gpu = dev.memory().backend == Backend::Cuda;
  SKINNYGEMM_CHECK(o.samples >= (gpu ? 5 : 1), "samples=" << o.samples << " must be >= " << (gpu ? 5 : 1));
  SKINNYGEMM_CHECK(o.margin >= 0 && o.margin <= 0.49, "margin=" << o.margin << " must be in [0, 0.49]");
  SKINNYGEMM_CHECK(o.distance >= 0 || o.distance == kAnyDistance,
                   "distance=" << o.distance << " must be >= 0 (or " << kAnyDistance << ": any candidate)");
  SKINNYGEMM_CHECK(o.base == StepVariant::Tma || o.base == StepVariant::Skinny || o.base == StepVariant::SkinnyFused,
                   "the search starts from tma, skinny or skinny_fused, not " << variant_name(o.base));
  SKINNYGEMM_CHECK(o.min_launches >= 1, "min_launches=" << o.min_launches << " must be >= 1");
  SKINNYGEMM_CHECK(!o.ms.empty(), "no M values given");
  for (int64_t m : o.ms) SKINNYGEMM_CHECK(m >= 1 && m <= 64, "M=" << m << " is outside the step's range 1..64");
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  StepExecutor ex(model, dev.memory(), o.base, max_m);
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  StepSearchReport report;
  report.device = dev.name();
  report.dtype = model.dtype;
  report.pdl = dev.pdl();
  for (int64_t m : o.ms) {
    StepSearchResult r;
    r.m = m;
    dev.reset_activations(static_cast<uint32_t>(0x5EA4C000u + m));
    ex.run_all(m, dev.stream());  // every plan made outside a capture, every activation written
    ShapeSearch search(o, model, dev, ex, m);
    r.start_us = search.time_step();
    std::ostringstream head;
    head << "search m=" << m << ": base " << variant_name(o.base) << " step " << r.start_us << " us";
    say(head.str());
    for (const ShapeGroup& g : shape_groups(ex, model, m, o.min_launches)) {
      const StepPick pick = search.search(g, &r);
      std::ostringstream line;
      line << "  " << shape_str(g.problem) << " x" << pick.count << ": "
           << (pick.config == pick.base_config ? "kept " : "picked ") << pick.config << " (step " << pick.base_step_us
           << " -> " << pick.step_us << " us; alone " << pick.alone_us << " us)";
      say(line.str());
      r.picks.push_back(pick);
    }
    r.end_us = search.time_step();
    std::ostringstream tail;
    tail << "search m=" << m << ": step " << r.start_us << " -> " << r.end_us << " us";
    say(tail.str());
    for (const StepPick& p : r.picks) ex.force_config(p.n, p.k, "");  // the next M starts from the base again
    report.results.push_back(std::move(r));
  }
  return report;
}

StepSearchReport search_step(const StepSearchOptions& o) {
  const Backend backend = resolve_backend(o.backend);
  SKINNYGEMM_CHECK(!o.ms.empty(), "no M values given");
  for (int64_t m : o.ms) SKINNYGEMM_CHECK(m >= 1 && m <= 64, "M=" << m << " is outside the step's range 1..64");
  const StepModel model = build_step_model(o.model, o.tp, o.scale, o.moe_front);
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  const std::unique_ptr<StepDevice> dev =
      backend == Backend::Cuda ? make_cuda_step_device(model, max_m) : make_cpu_step_device(model, max_m);
  return search_step(o, model, *dev);
}

Table step_search_table(const StepSearchReport& report, const DeviceInfo& device, int min_launches,
                        bool changed_only) {
  Table t;
  t.meta = Table::meta_for(device);
  for (const StepSearchResult& r : report.results)
    for (const StepPick& p : r.picks)
      if (p.count >= min_launches && (!changed_only || p.config != p.base_config))
        t.put({report.dtype, p.n, p.k, p.m}, {Config::parse(p.config), p.alone_us, p.cublaslt_alone_us});
  return t;
}

}  // namespace skinnygemm::tune
