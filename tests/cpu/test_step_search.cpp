// The step search (lab/step_search.h) on the CPU backend: every shape searched once per M, picks drawn from the
// trials or kept, and the table it writes. (name_distance, which bounds its candidates, is tested in test_tune.cpp.)
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "common/test_util.h"
#include "lab/step_search.h"
#include "lab/tuner.h"
#include "skinnygemm/select.h"

namespace skinnygemm::tune {
namespace {

// Selection's picks on a scaled step at M = 1 and 3, every CPU config a candidate, one sample per timing.
StepSearchOptions cpu_search_options() {
  StepSearchOptions o;
  o.backend = Backend::Cpu;
  o.base = StepVariant::Skinny;
  o.scale = 1.0 / 64;
  o.ms = {1, 3};
  o.candidates = "cpu_*";
  o.distance = kAnyDistance;
  o.samples = 1;
  return o;
}

TEST(StepSearch, CpuSearchCoversEveryShapeAndKeepsOrPicksATrial) {
  const StepSearchOptions o = cpu_search_options();
  const StepSearchReport rep = search_step(o);
  const StepModel model = build_step_model("kimi_k3", 8, o.scale);
  std::map<std::pair<int64_t, int64_t>, int> launches;
  for (const StepOp& op : model.ops(StepVariant::Skinny))
    if (!op.fused()) ++launches[{op.segments[0].n, op.k()}];
  ASSERT_EQ(rep.results.size(), 2u);
  const DeviceInfo cpu = device_info(Backend::Cpu);
  for (const StepSearchResult& r : rep.results) {
    EXPECT_GT(r.start_us, 0);
    EXPECT_GT(r.end_us, 0);
    ASSERT_EQ(r.picks.size(), launches.size()) << "m=" << r.m;
    std::set<std::pair<int64_t, int64_t>> seen;
    for (const StepPick& p : r.picks) {
      EXPECT_TRUE(seen.insert({p.n, p.k}).second) << p.n << "x" << p.k << " searched twice";
      EXPECT_EQ(p.count, launches.at({p.n, p.k}));
      EXPECT_GT(p.alone_us, 0);
      EXPECT_EQ(p.cublaslt_alone_us, 0);  // no cuBLASLt on the CPU
      const Problem prob{r.m, p.n, p.k};
      std::set<std::string> tried;
      for (const StepTrial& t : r.trials)
        if (t.n == p.n && t.k == p.k) tried.insert(t.config);
      // Every candidate but the base is tried, and nothing else.
      std::set<std::string> expected;
      for (const Config& c : tune_candidates(prob, cpu, o.candidates))
        if (c.name() != p.base_config) expected.insert(c.name());
      EXPECT_EQ(tried, expected) << p.n << "x" << p.k;
      if (p.config != p.base_config) {
        EXPECT_TRUE(tried.count(p.config)) << p.config;
        EXPECT_LT(p.step_us, p.base_step_us * (1 - o.margin));
      } else {
        EXPECT_EQ(p.step_us, p.base_step_us);
      }
    }
  }
  const Table all = step_search_table(rep, cpu, 1);
  EXPECT_EQ(all.entries.size(), 2 * launches.size());
  const Table changed = step_search_table(rep, cpu, 1, /*changed_only=*/true);  // the CLI's table
  std::size_t picked = 0;
  for (const StepSearchResult& r : rep.results)
    for (const StepPick& p : r.picks) {
      const auto e = changed.find(DType::BF16, p.n, p.k, r.m);
      EXPECT_EQ(e.has_value(), p.config != p.base_config) << p.n << "x" << p.k << " m=" << r.m;
      picked += p.config != p.base_config;
    }
  EXPECT_EQ(changed.entries.size(), picked);
  const Table t = step_search_table(rep, cpu);  // shapes launched once are left out
  std::size_t judged = 0;
  for (const auto& [shape, count] : launches) judged += count >= 2;
  ASSERT_LT(judged, launches.size());  // the scaled step has shapes launched once (lm_head, the dense FFN)
  EXPECT_EQ(t.entries.size(), 2 * judged);
  for (const StepSearchResult& r : rep.results)
    for (const StepPick& p : r.picks) {
      const auto e = t.find(DType::BF16, p.n, p.k, r.m);
      ASSERT_EQ(e.has_value(), p.count >= 2) << p.n << "x" << p.k;
      if (!e) continue;
      EXPECT_EQ(e->config.name(), p.config);
      EXPECT_EQ(e->us, p.alone_us);
    }
}

// A CPU step device whose time() runs the work but reports scripted times by call index (or throws), so that the
// search's decisions are fixed: the margin, the ABBA confirmation, a failing trial, the reset between M values.
class ScriptedTimes final : public StepDevice {
 public:
  ScriptedTimes(StepDevice& real, std::function<double(int)> script) : real_(real), script_(std::move(script)) {}
  std::string name() const override { return real_.name(); }
  const StepMemory& memory() const override { return real_.memory(); }
  void* stream() const override { return real_.stream(); }
  bool pdl() const override { return real_.pdl(); }
  void reset_activations(uint32_t seed) override { real_.reset_activations(seed); }
  StepTiming time(const std::function<void()>& enqueue, int) override {
    enqueue();
    return {script_(calls_++), 0};
  }
  std::vector<uint16_t> read(const void* p, int64_t m, int64_t n, int64_t ld) override { return real_.read(p, m, n, ld); }
  std::vector<double> reference(const Problem& p, const void* x, const void* w) override {
    return real_.reference(p, x, w);
  }
  double stream_read_tbps(int samples) override { return real_.stream_read_tbps(samples); }
  int64_t cold_bytes() const override { return real_.cold_bytes(); }
  const void* rotation_weights(int64_t bytes) override { return real_.rotation_weights(bytes); }

 private:
  StepDevice& real_;
  std::function<double(int)> script_;
  int calls_ = 0;
};

struct Scripted {
  StepSearchReport report;
  std::vector<std::string> candidates;  // of the first shape searched at M = 1, in trial order
};

// Call 0 times the base step, call 1 the first shape's incumbent, calls 2.. its trials, then (when a trial beat the
// margin) four confirmation timings (incumbent, winner, winner, incumbent), then its time alone.
Scripted run_scripted(const std::function<double(int call, int trials)>& script) {
  const StepSearchOptions o = cpu_search_options();
  const StepModel model = build_step_model("kimi_k3", 8, o.scale);
  const auto cpu = make_cpu_step_device(model, 3);
  // The first shape searched: the most weight bytes per step; its trials are every CPU config but the base.
  const StepSearchReport dry = search_step(o, model, *cpu);
  const StepPick& first = dry.results[0].picks[0];
  Scripted out;
  for (const StepTrial& t : dry.results[0].trials)
    if (t.n == first.n && t.k == first.k) out.candidates.push_back(t.config);
  const int trials = static_cast<int>(out.candidates.size());
  ScriptedTimes dev(*cpu, [&](int call) { return script(call, trials); });
  out.report = search_step(o, model, dev);
  return out;
}

TEST(StepSearch, AWinnerIsPickedOnlyWhenTheConfirmationHoldsAndTheNextMStartsFromTheBase) {
  // The second candidate is 10% faster in its trial; the confirmation says 90 against 100.
  auto script = [](double winner) {
    return [winner](int call, int trials) {
      if (call == 3) return 90.0;
      if (call == 3 + trials || call == 4 + trials) return winner;  // B, B of A B B A
      return 100.0;
    };
  };
  for (const double winner : {90.0, 99.9}) {
    const Scripted s = run_scripted(script(winner));
    ASSERT_GE(s.candidates.size(), 2u);
    const StepPick& p = s.report.results[0].picks[0];
    EXPECT_EQ(p.winner_step_us, winner);
    EXPECT_EQ(p.base_step_us, 100.0);
    if (winner == 90.0) {
      EXPECT_EQ(p.config, s.candidates[1]);
      EXPECT_EQ(p.step_us, 90.0);
    } else {  // 99.9 saves 0.1%, under the 0.2% margin: the incumbent stays
      EXPECT_EQ(p.config, p.base_config);
      EXPECT_EQ(p.step_us, 100.0);
    }
    // Every other shape tied at 100: kept, no confirmation.
    for (std::size_t i = 1; i < s.report.results[0].picks.size(); ++i) {
      EXPECT_EQ(s.report.results[0].picks[i].config, s.report.results[0].picks[i].base_config);
      EXPECT_EQ(s.report.results[0].picks[i].winner_step_us, 0);
    }
    // M = 3 starts from selection again, not from M = 1's pick.
    const StepPick& q = s.report.results[1].picks[0];
    EXPECT_EQ(q.base_config, select(Problem{3, q.n, q.k}, device_info(Backend::Cpu), nullptr).config.name());
  }
}

TEST(StepSearch, ATrialThatFailsIsRecordedAndTheSearchGoesOn) {
  const Scripted s = run_scripted([](int call, int) {
    if (call == 2) throw Error("scripted failure");
    return 100.0;
  });
  const StepSearchResult& r = s.report.results[0];
  ASSERT_FALSE(r.trials.empty());
  EXPECT_EQ(r.trials[0].config, s.candidates[0]);
  EXPECT_NE(r.trials[0].error.find("scripted failure"), std::string::npos) << r.trials[0].error;
  EXPECT_EQ(r.trials[0].step_us, 0);
  EXPECT_EQ(r.picks[0].config, r.picks[0].base_config);
  for (std::size_t i = 1; i < r.trials.size(); ++i) EXPECT_EQ(r.trials[i].error, "") << r.trials[i].config;
}

// From the fused layout: every shape the fused step launches twice or more, its fusions as their merged GEMM, and
// nothing launched once; a config forced on a merged shape reaches the fusion's kernel.
TEST(StepSearch, TheFusedLayoutIsSearchedAsItsMergedGemms) {
  StepSearchOptions o = cpu_search_options();
  o.base = StepVariant::SkinnyFused;
  o.ms = {1};
  o.min_launches = 2;
  const StepModel model = build_step_model("kimi_k3", 8, o.scale);
  std::map<std::pair<int64_t, int64_t>, int> launches;
  std::set<std::pair<int64_t, int64_t>> merged;
  for (const StepOp& op : model.ops(StepVariant::SkinnyFused)) {
    ++launches[{op.n(), op.k()}];
    if (op.fused()) merged.insert({op.n(), op.k()});
  }
  std::set<std::pair<int64_t, int64_t>> expected;
  for (const auto& [shape, count] : launches)
    if (count >= 2) expected.insert(shape);
  ASSERT_LT(expected.size(), launches.size());  // lm_head and the dense FFN are launched once
  ASSERT_FALSE(merged.empty());
  const auto cpu = make_cpu_step_device(model, 1);
  const StepSearchReport rep = search_step(o, model, *cpu);
  ASSERT_EQ(rep.results.size(), 1u);
  std::set<std::pair<int64_t, int64_t>> searched;
  for (const StepPick& p : rep.results[0].picks) {
    EXPECT_TRUE(searched.insert({p.n, p.k}).second) << p.n << "x" << p.k << " searched twice";
    EXPECT_EQ(p.count, launches.at({p.n, p.k}));
  }
  EXPECT_EQ(searched, expected);
  for (const auto& shape : merged) {
    if (!expected.count(shape)) continue;
    int ran = 0;
    for (const StepTrial& t : rep.results[0].trials)
      if (t.n == shape.first && t.k == shape.second) {
        EXPECT_EQ(t.error, "") << t.config;
        ran += t.step_us > 0;
      }
    EXPECT_GT(ran, 0) << shape.first << "x" << shape.second;
  }
  // The override reaches the fusion: a config the CPU backend cannot run fails the merged shape's op.
  StepExecutor ex(model, cpu->memory(), StepVariant::SkinnyFused, 1);
  std::size_t fused_op = 0;
  while (!ex.ops()[fused_op].fused()) ++fused_op;
  ex.run(fused_op, 1, cpu->stream());
  ex.force_config(ex.ops()[fused_op].n(), ex.ops()[fused_op].k(), "tma_m8_r64_b2_s4_c2_d6");
  EXPECT_THROW(ex.run(fused_op, 1, cpu->stream()), Error);
  ex.force_config(ex.ops()[fused_op].n(), ex.ops()[fused_op].k(), "");
  ex.run(fused_op, 1, cpu->stream());
}

TEST(StepSearch, BadOptionsNameTheValue) {
  StepSearchOptions o;
  o.backend = Backend::Cpu;
  o.base = StepVariant::Cublaslt;
  o.scale = 1.0 / 64;
  o.samples = 1;
  test::expect_error([&] { search_step(o); }, {"the search starts from tma, skinny or skinny_fused, not cublaslt"});
  o.base = StepVariant::Skinny;
  o.margin = 0.7;
  test::expect_error([&] { search_step(o); }, {"margin=0.7 must be in [0, 0.49]"});
  o.margin = 0.002;
  o.distance = -2;
  test::expect_error([&] { search_step(o); }, {"distance=-2 must be >= 0 (or -1: any candidate)"});
  o.distance = 2;
  o.ms = {65};
  test::expect_error([&] { search_step(o); }, {"M=65 is outside the step's range 1..64"});
  o.ms = {1};
  o.min_launches = 0;
  test::expect_error([&] { search_step(o); }, {"min_launches=0 must be >= 1"});
}

}  // namespace
}  // namespace skinnygemm::tune
