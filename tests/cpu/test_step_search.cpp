// The step search (lab/step_search.h) on the CPU backend: every shape searched once per M, picks drawn from the
// trials or kept, the table it writes, and the name distance that bounds the candidates on the GPU.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/test_util.h"
#include "lab/step_search.h"
#include "lab/tuner.h"

namespace skinnygemm::tune {
namespace {

TEST(StepSearch, NameDistanceCountsTheTokensThatDiffer) {
  EXPECT_EQ(name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r64_b2_s4_x8"), 0);
  EXPECT_EQ(name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r64_b2_s3_x8"), 1);
  EXPECT_EQ(name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r64_b2_s4_c2_u1"), 2);  // x8 -> c2 u1: 1 out, 2 in
  EXPECT_EQ(name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r32_b2_s7_c2_d9"), 4);
  EXPECT_EQ(name_distance("cpu_r2", "cpu_r8"), 1);
}

TEST(StepSearch, CpuSearchCoversEveryShapeAndKeepsOrPicksATrial) {
  StepSearchOptions o;
  o.backend = Backend::Cpu;
  o.base = StepVariant::Skinny;
  o.scale = 1.0 / 64;
  o.ms = {1, 3};
  o.candidates = "cpu_*";
  o.distance = 0;
  o.samples = 1;
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
  const Table all = step_search_table(rep, cpu, DType::BF16, 1);
  EXPECT_EQ(all.entries.size(), 2 * launches.size());
  const Table t = step_search_table(rep, cpu, DType::BF16);  // shapes launched once are left out
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

TEST(StepSearch, BadOptionsNameTheValue) {
  StepSearchOptions o;
  o.backend = Backend::Cpu;
  o.base = StepVariant::Cublaslt;
  o.scale = 1.0 / 64;
  o.samples = 1;
  test::expect_error([&] { search_step(o); }, {"the search starts from tma or skinny, not cublaslt"});
  o.base = StepVariant::Skinny;
  o.margin = 0.7;
  test::expect_error([&] { search_step(o); }, {"margin=0.7 must be in [0, 0.5)"});
}

}  // namespace
}  // namespace skinnygemm::tune
