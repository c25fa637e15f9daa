// The step search (lab/step_search.h): greedy, shape by shape, each trial a whole-step graph.
#include "lab/step_search.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "lab/tuner.h"
#include "skinnygemm/select.h"

namespace skinnygemm::tune {

namespace {

std::vector<std::string> tokens(const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(name);
  for (std::string t; std::getline(in, t, '_');) out.push_back(t);
  return out;
}

// The unfused ops of one GEMM shape.
struct ShapeGroup {
  Problem problem;  // of the first op, at the searched M
  std::vector<std::size_t> ops;
  int64_t weight_bytes = 0;  // per step
};

std::vector<ShapeGroup> shape_groups(const StepExecutor& ex, const StepModel& model, int64_t m) {
  std::map<std::pair<int64_t, int64_t>, ShapeGroup> by_shape;
  for (std::size_t i = 0; i < ex.ops().size(); ++i) {
    const StepOp& op = ex.ops()[i];
    if (op.fused()) continue;
    const StepSegment& s = op.segments[0];
    ShapeGroup& g = by_shape[{s.n, s.k}];
    if (g.ops.empty())
      g.problem = Problem{m, s.n, s.k, model.dtype, model.buffers[op.x.buffer].width, s.k,
                          model.buffers[s.y.buffer].width};
    g.ops.push_back(i);
    g.weight_bytes += op.weight_bytes(model.elem());
  }
  std::vector<ShapeGroup> out;
  for (auto& [shape, g] : by_shape) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const ShapeGroup& a, const ShapeGroup& b) { return a.weight_bytes > b.weight_bytes; });
  return out;
}

std::string shape_str(const Problem& p) { return std::to_string(p.n) + "x" + std::to_string(p.k); }

}  // namespace

int name_distance(const std::string& a, const std::string& b) {
  const std::vector<std::string> ta = tokens(a), tb = tokens(b);
  const std::multiset<std::string> sa(ta.begin(), ta.end()), sb(tb.begin(), tb.end());
  auto missing = [](const std::multiset<std::string>& from, const std::multiset<std::string>& in) {
    int n = 0;
    std::multiset<std::string> left = in;
    for (const std::string& t : from) {
      auto it = left.find(t);
      if (it == left.end()) ++n;
      else left.erase(it);
    }
    return n;
  };
  return std::max(missing(sa, sb), missing(sb, sa));
}

StepSearchReport search_step(const StepSearchOptions& o, const StepModel& model, StepDevice& dev) {
  const bool gpu = dev.memory().backend == Backend::Cuda;
  SKINNYGEMM_CHECK(o.samples >= (gpu ? 5 : 1), "samples=" << o.samples << " must be >= " << (gpu ? 5 : 1));
  SKINNYGEMM_CHECK(o.margin >= 0 && o.margin < 0.5, "margin=" << o.margin << " must be in [0, 0.5)");
  SKINNYGEMM_CHECK(o.distance >= 0, "distance=" << o.distance << " must be >= 0 (0: any candidate)");
  SKINNYGEMM_CHECK(o.base == StepVariant::Tma || o.base == StepVariant::Skinny,
                   "the search starts from tma or skinny, not " << variant_name(o.base));
  SKINNYGEMM_CHECK(!o.ms.empty(), "no M values given");
  const DeviceInfo info = device_info(dev.memory().backend);
  const Table* table = default_table(info);
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  StepExecutor ex(model, dev.memory(), o.base, max_m);
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  auto time_step = [&](int64_t m) { return dev.time([&] { ex.run_all(m, dev.stream()); }, o.samples).median_us; };
  StepSearchReport report;
  report.device = dev.name();
  for (int64_t m : o.ms) {
    StepSearchResult r;
    r.m = m;
    dev.reset_activations(static_cast<uint32_t>(0x5EA4C000u + m));
    ex.run_all(m, dev.stream());  // every plan made outside a capture, every activation written
    double current = r.start_us = time_step(m);
    std::ostringstream head;
    head << "search m=" << m << ": base " << variant_name(o.base) << " step " << r.start_us << " us";
    say(head.str());
    for (const ShapeGroup& g : shape_groups(ex, model, m)) {
      StepPick pick;
      pick.m = m, pick.n = g.problem.n, pick.k = g.problem.k, pick.count = static_cast<int>(g.ops.size());
      pick.base_config = ex.forced_config(g.problem);
      if (pick.base_config.empty()) pick.base_config = select(g.problem, info, table).config.name();
      std::vector<std::string> candidates;
      for (const Config& c : tune_candidates(g.problem, info, o.candidates)) {
        const std::string name = c.name();
        const bool keep = c.family == Family::Cublaslt
                              ? name == "cublaslt"
                              : o.distance == 0 || name_distance(name, pick.base_config) <= o.distance;
        if (keep && name != pick.base_config) candidates.push_back(name);
      }
      std::string best = pick.base_config;
      double best_us = current;
      for (const std::string& c : candidates) {
        ex.force_config(g.problem.n, g.problem.k, c);
        StepTrial trial{m, g.problem.n, g.problem.k, c, 0, ""};
        try {
          for (std::size_t i : g.ops) ex.run(i, m, dev.stream());  // first use outside the capture
          trial.step_us = time_step(m);
        } catch (const Error& e) {  // a candidate that cannot run is a trial without a time, not the end
          trial.error = e.what();
        }
        r.trials.push_back(trial);
        if (trial.error.empty() && trial.step_us < best_us) best_us = trial.step_us, best = c;
      }
      pick.config = pick.base_config;
      pick.base_step_us = pick.step_us = current;
      if (best != pick.base_config && best_us < current * (1 - o.margin)) {
        // The fastest of many noisy trials is biased low: time the incumbent and the winner once more.
        ex.force_config(g.problem.n, g.problem.k, pick.base_config);
        const double again = time_step(m);
        ex.force_config(g.problem.n, g.problem.k, best);
        const double best_again = time_step(m);
        if (best_again < again * (1 - o.margin)) {
          pick.config = best, pick.base_step_us = again, pick.step_us = best_again;
          current = best_again;
        }
      }
      ex.force_config(g.problem.n, g.problem.k, pick.config);
      pick.alone_us = time_ops_alone(ex, dev, g.ops, m, o.samples, model.elem());
      if (gpu) {
        ex.force_config(g.problem.n, g.problem.k, "cublaslt");
        pick.cublaslt_alone_us = time_ops_alone(ex, dev, g.ops, m, o.samples, model.elem());
        ex.force_config(g.problem.n, g.problem.k, pick.config);
      }
      std::ostringstream line;
      line << "  " << shape_str(g.problem) << " x" << pick.count << ": " << candidates.size() << " candidates; "
           << (pick.config == pick.base_config ? "kept " : "picked ") << pick.config << " (step " << pick.base_step_us
           << " -> " << pick.step_us << " us; alone " << pick.alone_us << " us)";
      say(line.str());
      r.picks.push_back(pick);
    }
    r.end_us = time_step(m);
    std::ostringstream tail;
    tail << "search m=" << m << ": step " << r.start_us << " -> " << r.end_us << " us";
    say(tail.str());
    // The next M starts from the base again.
    for (const StepPick& p : r.picks) ex.force_config(p.n, p.k, "");
    report.results.push_back(std::move(r));
  }
  return report;
}

StepSearchReport search_step(const StepSearchOptions& o) {
  const Backend backend = resolve_backend(o.backend);
  SKINNYGEMM_CHECK(!o.ms.empty(), "no M values given");
  for (int64_t m : o.ms) SKINNYGEMM_CHECK(m >= 1 && m <= 64, "M=" << m << " is outside the step's range 1..64");
  const StepModel model = build_step_model(o.model, o.tp, o.scale);
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  const std::unique_ptr<StepDevice> dev =
      backend == Backend::Cuda ? make_cuda_step_device(model, max_m) : make_cpu_step_device(model, max_m);
  return search_step(o, model, *dev);
}

Table step_search_table(const StepSearchReport& report, const DeviceInfo& device, DType dtype, int min_launches) {
  Table t;
  t.meta = Table::meta_for(device);
  for (const StepSearchResult& r : report.results)
    for (const StepPick& p : r.picks)
      if (p.count >= min_launches) t.put({dtype, p.n, p.k, p.m}, {Config::parse(p.config), p.alone_us, p.cublaslt_alone_us});
  return t;
}

}  // namespace skinnygemm::tune
