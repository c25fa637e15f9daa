// The tuner on the CPU backend: a real run writes a table that selection uses, resume and --force, a foreign
// table is refused, a wrong candidate never wins, the GPU margin rule on synthetic rows, the candidates near the
// heuristic's pick, refine (an entry only where it beats the heuristic, a heuristic marker elsewhere) with its
// summary, and the CLI.
// (A table of another signature being skipped by selection with a warning is tested in test_select.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.h"
#include "lab/device_presets.h"
#include "lab/models.h"
#include "common/test_util.h"
#include "runtime/backends.h"
#include "skinnygemm/skinnygemm.h"
#include "lab/tuner.h"

namespace skinnygemm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Kind = tune::TuneEvent::Kind;

DeviceInfo h200() {
  DeviceInfo d;
  d.is_cpu = false, d.name = "NVIDIA H200", d.sms = 132, d.cc_major = 9;
  return d;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Two tiny shapes x two Ms: 4 points, 4 cpu configs each; milliseconds on 2 cores.
const std::vector<models::Projection> kShapes = models::parse_shapes("64x256,96x128");
const std::vector<int64_t> kMs = {1, 2};

tune::TuneOptions cpu_options(std::map<Kind, int>* events) {
  tune::TuneOptions o;
  o.backend = Backend::Cpu, o.samples = 1, o.replays = 1;
  o.progress = [events](const tune::TuneEvent& ev) { ++(*events)[ev.kind]; };
  return o;
}

// A measure that counts its calls and otherwise runs the real protocol.
tune::MeasureFn counting(int* calls) {
  return [calls](const Problem& p, const tune::BenchOptions& o) { return ++*calls, tune::bench_problem(p, o); };
}

tune::BenchRow fake_row(const Problem& p, const std::string& config, double us, double spread = 0) {
  tune::BenchRow r;
  r.problem = p, r.config = config, r.us = us, r.spread = spread, r.checked = true;
  return r;
}

// What tune_problem judges as the heuristic: selection without a table.
std::string untuned_pick(const Problem& p, const DeviceInfo& dev) { return select(p, dev, nullptr, 16).config.name(); }

std::vector<std::string> names(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const Config& c : configs) out.push_back(c.name());
  return out;
}

// A measure that times each config as `us` says (unlisted configs at 12 us), with spreads from `spread`.
tune::MeasureFn scripted(const std::map<std::string, double>& us, const std::map<std::string, double>& spread = {}) {
  return [us, spread](const Problem& p, const tune::BenchOptions& bo) {
    const auto t = us.find(bo.config);
    const auto s = spread.find(bo.config);
    return fake_row(p, bo.config, t == us.end() ? 12.0 : t->second, s == spread.end() ? 0 : s->second);
  };
}

class TuneFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("tune");
    path_ = (dir_ / "t.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

TEST_F(TuneFiles, RealCpuRunWritesATableThatSelectionUses) {
  std::map<Kind, int> events;
  const tune::TuneSummary s = tune::tune_into_table(kShapes, kMs, DType::BF16, cpu_options(&events), path_);
  EXPECT_EQ(s.points, 4u);
  EXPECT_EQ(s.tuned, 4u);
  EXPECT_EQ(events[Kind::Measuring], 4);
  EXPECT_EQ(events[Kind::Stored], 4);
  const Table t = Table::load(path_);
  EXPECT_TRUE(t.matches(cpu_device_info()));
  ASSERT_EQ(t.entries.size(), 4u);
  for (const tune::TuneResult& r : s.results) {
    EXPECT_EQ(r.rows.size(), std::size(kCpuRows)) << r.problem.str();  // every cpu config measured
    EXPECT_TRUE(r.rejected.empty()) << r.rejected[0].reason;
    const Problem& p = r.problem;
    const auto e = t.find(p.dtype, p.n, p.k, p.m);
    ASSERT_TRUE(e.has_value()) << p.str();
    EXPECT_EQ(e->config.family, Family::Cpu);
    EXPECT_EQ(e->config, r.entry.config);
    EXPECT_GT(e->us, 0);
    EXPECT_EQ(e->cublaslt_us, 0);  // no cuBLASLt on the CPU
    for (const tune::BenchRow& row : r.rows) EXPECT_GE(row.us, r.entry.us) << row.config;  // the fastest won
    const Choice c = select(p, cpu_device_info(), &t);
    EXPECT_EQ(c.source, Source::Table) << c.reason;
    EXPECT_EQ(c.config, e->config);
  }
}

TEST_F(TuneFiles, ResumeMeasuresNothingAndForceRemeasures) {
  // One point is already in the file (with a time no real run gives): it must survive a resumed run.
  Table seeded;
  seeded.meta = Table::meta_for(cpu_device_info());
  seeded.put(TableKey{DType::BF16, 64, 256, 2}, TableEntry{Config::parse("cpu_r8"), 123.0, 0});
  seeded.save_merge(path_);
  std::map<Kind, int> events;
  tune::TuneOptions o = cpu_options(&events);
  int calls = 0;
  o.measure = counting(&calls);
  tune::TuneSummary s = tune::tune_into_table(kShapes, kMs, DType::BF16, o, path_);
  EXPECT_EQ(s.tuned, 3u);
  EXPECT_EQ(s.skipped, 1u);
  EXPECT_EQ(calls, 3 * static_cast<int>(std::size(kCpuRows)));
  EXPECT_EQ(Table::load(path_).find(DType::BF16, 64, 256, 2)->us, 123.0);

  const std::string before = read_all(path_);
  events.clear();
  calls = 0;
  s = tune::tune_into_table(kShapes, kMs, DType::BF16, o, path_);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(events[Kind::Measuring], 0);
  EXPECT_EQ(events[Kind::Skipped], 4);
  EXPECT_EQ(read_all(path_), before);

  events.clear();
  o.force = true;
  s = tune::tune_into_table(kShapes, {1, 2, 2}, DType::BF16, o, path_);  // a repeated M is measured once
  EXPECT_EQ(events[Kind::Stored], 4);
  EXPECT_EQ(events[Kind::Skipped], 2);
  EXPECT_EQ(calls, 4 * static_cast<int>(std::size(kCpuRows)));
  EXPECT_NE(Table::load(path_).find(DType::BF16, 64, 256, 2)->us, 123.0);
}

TEST_F(TuneFiles, ForeignTableIsRefusedBeforeMeasuring) {
  Table foreign;
  foreign.meta = Table::meta_for(h200());
  foreign.put(TableKey{DType::BF16, 64, 256, 1}, TableEntry{Config::parse("cublaslt_a2"), 5.0, 5.0});
  foreign.save_merge(path_);
  const std::string before = read_all(path_);
  std::map<Kind, int> events;
  int calls = 0;
  tune::TuneOptions o = cpu_options(&events);
  o.measure = counting(&calls);
  try {
    tune::tune_into_table(kShapes, kMs, DType::BF16, o, path_);
    FAIL() << "tuned into a table of another device";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path_));
    EXPECT_THAT(e.what(), HasSubstr("NVIDIA H200"));
  }
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(read_all(path_), before);
}

TEST_F(TuneFiles, AWrongCandidateNeverWins) {
  // cpu_r2 computes a wrong output: its check throws. Were it measured unchecked it would be the fastest.
  std::vector<tune::BenchOptions> seen;
  std::map<Kind, int> events;
  tune::TuneOptions o = cpu_options(&events);
  o.measure = [&seen](const Problem& p, const tune::BenchOptions& bo) {
    seen.push_back(bo);
    if (bo.config == "cpu_r2") {
      SKINNYGEMM_CHECK(!bo.check, "wrong output");
      return fake_row(p, bo.config, 0.001);
    }
    if (bo.config == "cpu_r4") {  // fast, but its output was never checked
      tune::BenchRow r = fake_row(p, bo.config, 0.002);
      r.checked = false;
      return r;
    }
    return fake_row(p, bo.config, bo.config == "cpu_r8" ? 5.0 : 7.0);
  };
  const Problem p{1, 64, 256, DType::BF16};
  const tune::TuneResult r = tune::tune_problem(p, o);
  EXPECT_EQ(r.entry.config.name(), "cpu_r8");
  ASSERT_EQ(r.rejected.size(), 2u);
  EXPECT_EQ(r.rejected[0].config, "cpu_r2");
  EXPECT_THAT(r.rejected[0].reason, HasSubstr("wrong output"));
  EXPECT_EQ(r.rejected[1].config, "cpu_r4");
  for (const tune::BenchRow& row : r.rows) EXPECT_NE(row.config, "cpu_r2");
  ASSERT_EQ(seen.size(), std::size(kCpuRows));
  for (const tune::BenchOptions& bo : seen)
    EXPECT_TRUE(bo.check && !bo.baselines && bo.backend == Backend::Cpu && bo.samples == 1) << bo.config;

  // Every candidate wrong at one point: that point fails (reported, nothing stored); the others are stored.
  o.measure = [](const Problem& q, const tune::BenchOptions& bo) {
    SKINNYGEMM_CHECK(q.m != 2, "wrong output for every config at m=2");
    return fake_row(q, bo.config, 1.0);
  };
  const tune::TuneSummary s = tune::tune_into_table(kShapes, kMs, DType::BF16, o, path_);
  EXPECT_EQ(s.failed, 2u);
  EXPECT_EQ(events[Kind::Failed], 2);
  ASSERT_EQ(s.failures.size(), 2u);
  EXPECT_THAT(s.failures[0], HasSubstr("m=2"));
  const Table t = Table::load(path_);
  EXPECT_EQ(t.entries.size(), 2u);
  EXPECT_FALSE(t.find(DType::BF16, 64, 256, 2).has_value());
}

TEST(TuneDecide, GpuKernelMustBeatBestCublasltByARepeatingMargin) {
  const Problem p{4, 1536, 7168, DType::BF16};
  auto rows = [&](double kernel_us, double spread) {
    return std::vector<tune::BenchRow>{fake_row(p, "bulk_m8_w1x8_u4_sk2", kernel_us, spread),
                                       fake_row(p, "cublaslt", 10.0), fake_row(p, "cublaslt_a2", 9.8),
                                       fake_row(p, "cublaslt_a5", 12.0)};
  };
  tune::Decision d = tune::decide(rows(9.0, 0.01), true, 0.03);  // 8.9% faster, worst sample 9.09 < 9.8
  EXPECT_EQ(d.entry.config.name(), "bulk_m8_w1x8_u4_sk2") << d.reason;
  EXPECT_EQ(d.stored, 0u);
  EXPECT_EQ(d.entry.us, 9.0);
  EXPECT_EQ(d.entry.cublaslt_us, 9.8);  // the best cuBLASLt algorithm, not the default
  d = tune::decide(rows(9.6, 0.0), true, 0.03);  // 2.1% faster: below the margin
  // cuBLASLt it is, and its default: algorithm a2 is only 2% faster than the default, below the margin too.
  EXPECT_EQ(d.entry.config.name(), "cublaslt") << d.reason;
  EXPECT_EQ(d.entry.us, 10.0);
  EXPECT_EQ(d.entry.cublaslt_us, 9.8);
  EXPECT_THAT(d.reason, HasSubstr("below the margin"));
  d = tune::decide(rows(9.0, 0.2), true, 0.03);  // median wins by 8.9%, but a sample reaches 10.8 > 9.8
  EXPECT_EQ(d.entry.config.name(), "cublaslt") << d.reason;
  EXPECT_THAT(d.reason, HasSubstr("worst sample"));
  // An algorithm that beats the default by the margin in every sample is stored instead of it.
  d = tune::decide({fake_row(p, "bulk_m8_w1x8_u4_sk2", 9.6), fake_row(p, "cublaslt", 10.0),
                    fake_row(p, "cublaslt_a3", 9.0, 0.02)},
                   true, 0.03);
  EXPECT_EQ(d.entry.config.name(), "cublaslt_a3") << d.reason;
  d = tune::decide({fake_row(p, "bulk_m8_w1x8_u4_sk2", 9.6), fake_row(p, "cublaslt", 10.0),
                    fake_row(p, "cublaslt_a3", 9.0, 0.2)},  // a sample reaches 10.8: not a repeatable win
                   true, 0.03);
  EXPECT_EQ(d.entry.config.name(), "cublaslt") << d.reason;
  d = tune::decide(rows(9.8 / 1.03, 0.0), true, 0.03);  // exactly the margin counts
  EXPECT_EQ(d.entry.config.name(), "bulk_m8_w1x8_u4_sk2") << d.reason;
  d = tune::decide(rows(9.6, 0.0), true, 0.0);  // margin 0: any repeatable win
  EXPECT_EQ(d.entry.config.name(), "bulk_m8_w1x8_u4_sk2") << d.reason;

  // Only cuBLASLt passed: its best is stored. No cuBLASLt at all on a GPU: nothing to measure against.
  d = tune::decide({fake_row(p, "cublaslt", 10.0), fake_row(p, "cublaslt_a1", 11.0)}, true, 0.03);
  EXPECT_EQ(d.entry.config.name(), "cublaslt");
  EXPECT_THROW(tune::decide({fake_row(p, "bulk_m8_w1x8_u4_sk2", 1.0)}, true, 0.03), Error);
  EXPECT_THROW(tune::decide({}, false, 0.03), Error);
  EXPECT_THROW(tune::decide({fake_row(p, "cpu_r1", 0.0)}, false, 0.03), Error);  // no time is not a win
  // CPU: the fastest median, ties to the earlier candidate.
  d = tune::decide({fake_row(p, "cpu_r1", 3.0), fake_row(p, "cpu_r2", 2.0), fake_row(p, "cpu_r4", 2.0)}, false, 0.5);
  EXPECT_EQ(d.entry.config.name(), "cpu_r2");
  EXPECT_EQ(d.entry.cublaslt_us, 0);
}

TEST(TuneCandidates, GlobsAndTheAlwaysMeasuredBaseline) {
  const Problem p{1, 64, 256, DType::BF16};
  EXPECT_EQ(tune::tune_candidates(p, cpu_device_info(), "").size(), std::size(kCpuRows));
  const auto two = tune::tune_candidates(p, cpu_device_info(), "cpu_r1,cpu_r8");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].name(), "cpu_r8");
  EXPECT_THROW(tune::tune_candidates(p, cpu_device_info(), "bulk_*"), Error);  // names no cpu config
  // On a GPU cuBLASLt is measured whatever the glob: the margin is measured against it.
  std::vector<std::string> names;
  for (const Config& c : tune::tune_candidates(p, h200(), "cpu_*,bulk_m8_*"))
    if (c.family == Family::Cublaslt) names.push_back(c.name());
  EXPECT_EQ(names.size(), 1u + kCublasltAlgos);
  // A glob that names no listed kernel (a lab-only instance) is an error on a GPU too, though cuBLASLt would be
  // measured: session 41's H100 tune stored cuBLASLt alone that way. Naming cuBLASLt itself is a tuning of it.
  try {
    tune::tune_candidates(p, h200(), "tma_m8_r8_b16_s4_rs");
    ADD_FAILURE() << "a glob naming no listed config was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--candidates 'tma_m8_r8_b16_s4_rs' matches no listed config"));
    EXPECT_THAT(e.what(), HasSubstr("configs built only for the lab are not tuned"));
  }
  EXPECT_EQ(tune::tune_candidates(p, h200(), "cublaslt*").size(), 1u + kCublasltAlgos);
}

TEST(TuneNameDistance, CountsTheTokensThatDiffer) {
  EXPECT_EQ(tune::name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r64_b2_s4_x8"), 0);
  EXPECT_EQ(tune::name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r64_b2_s3_x8"), 1);
  EXPECT_EQ(tune::name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r64_b2_s4_c2_u1"), 2);  // x8 -> c2 u1: 1 out, 2 in
  EXPECT_EQ(tune::name_distance("tma_m8_r64_b2_s4_x8", "tma_m8_r32_b2_s7_c2_d9"), 4);
  EXPECT_EQ(tune::name_distance("cpu_r2", "cpu_r8"), 1);
}

TEST(TuneCandidates, NearTheHeuristicsPick) {
  const Problem p{1, 64, 256, DType::BF16};
  const DeviceInfo cpu = cpu_device_info();
  // The CPU model ties r2 and r4 at M = 1; the earlier listed is the pick.
  ASSERT_EQ(untuned_pick(p, cpu), "cpu_r2");
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(tune::tune_candidates(p, cpu, "", 0)), Names{"cpu_r2"});
  // Every cpu name is one token from another; the pick first, then the list order.
  EXPECT_EQ(names(tune::tune_candidates(p, cpu, "", 1)), (Names{"cpu_r2", "cpu_r1", "cpu_r4", "cpu_r8"}));
  // Globs and nearness both hold for the other configs; the pick is measured whatever the globs say.
  EXPECT_EQ(names(tune::tune_candidates(p, cpu, "cpu_r1,cpu_r8", 1)), (Names{"cpu_r2", "cpu_r1", "cpu_r8"}));
  EXPECT_EQ(names(tune::tune_candidates(Problem{8, 64, 256, DType::BF16}, cpu, "", 0)), Names{"cpu_r8"});
  try {
    tune::tune_candidates(p, cpu, "", -1);
    FAIL() << "a negative distance was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("near-heuristic distance -1: expected a number of name tokens >= 0"));
  }

  // A GPU: cuBLASLt always, the pick first, every other kernel of the pick's family and tile within D tokens.
  const DeviceInfo gpu = tune::device_preset("h200");
  const Problem q{4, 1536, 7168, DType::BF16};
  const Config pick = select(q, gpu, nullptr, 16).config;
  for (const int distance : {0, 2}) {
    const std::vector<Config> near = tune::tune_candidates(q, gpu, "", distance);
    ASSERT_FALSE(near.empty());
    EXPECT_EQ(near[0], pick);
    std::size_t cublaslt = 0;
    for (std::size_t i = 1; i < near.size(); ++i) {
      const Config& c = near[i];
      if (c.family == Family::Cublaslt) {
        ++cublaslt;
        continue;
      }
      EXPECT_EQ(c.family, pick.family) << c.name();
      EXPECT_EQ(c.tile_m, pick.tile_m) << c.name();
      EXPECT_LE(tune::name_distance(c.name(), pick.name()), distance) << c.name();
      EXPECT_NE(distance, 0) << c.name() << ": only the pick is at distance 0";
    }
    EXPECT_EQ(cublaslt + (pick.family == Family::Cublaslt), 1u + kCublasltAlgos);
    if (!cuda::built()) {  // no kernel instance: the pick is cuBLASLt's default, so cuBLASLt's are the candidates
      EXPECT_EQ(pick.name(), "cublaslt");
      EXPECT_EQ(near.size(), 1u + kCublasltAlgos);
    }
  }
}

// Where the heuristic picks another family (cuBLASLt at 7168 x 7168, M = 48), the tma family's first cut is measured
// too, once and last, so that a held-out report says whether the family should have been picked there; where it cannot
// run (a build without kernels) it is left out.
TEST(TuneCandidates, TheFirstCutOfAFamilyThePickIsNotOf) {
  const DeviceInfo gpu = tune::device_preset("h200");
  const Problem q{48, 7168, 7168, DType::BF16};
  const Config pick = select(q, gpu, nullptr, 16).config;
  // cublaslt_unsplit, or the fallback's cublaslt in a build without the kernels.
  ASSERT_EQ(pick.family, Family::Cublaslt) << "the point no longer tests a pick of another family; choose one";
  const Config cut = family(Family::Tma).first_cut(q, gpu);
  const bool runs = supports(cut, q, gpu, 16);
  for (const int distance : {0, 2}) {
    const std::vector<Config> near = tune::tune_candidates(q, gpu, "cublaslt*", distance);
    const auto cuts = std::count_if(near.begin(), near.end(), [&](const Config& c) { return c.name() == cut.name(); });
    EXPECT_EQ(cuts, runs ? 1 : 0) << cut.name();
    if (runs) {
      EXPECT_EQ(near.back().name(), cut.name());
    }
    // The pick (where it is cublaslt_unsplit, not the listed default), cuBLASLt's default and its eight answers, and
    // the first cut.
    EXPECT_EQ(near.size(), (pick.name() == "cublaslt" ? 1u : 2u) + kCublasltAlgos + (runs ? 1 : 0));
  }
}

TEST(TuneRefine, StoresOnlyWhatBeatsTheHeuristicInEverySample) {
  const Problem p{1, 64, 256, DType::BF16};
  ASSERT_EQ(untuned_pick(p, cpu_device_info()), "cpu_r2");
  tune::TuneOptions o;
  o.backend = Backend::Cpu, o.refine = true;  // margin 3%
  auto tune = [&](double r8_us, double r8_spread) {
    o.measure = scripted({{"cpu_r2", 10.0}, {"cpu_r8", r8_us}}, {{"cpu_r8", r8_spread}});
    return tune::tune_problem(p, o);
  };
  tune::TuneResult r = tune(9.8, 0);  // 2% faster than the pick: within the margin
  EXPECT_TRUE(r.heuristic_kept);
  EXPECT_EQ(r.entry.config.name(), "cpu_r8");  // what would have been stored
  EXPECT_THAT(r.reason, HasSubstr("heuristic kept: cpu_r8 9.8 us vs the heuristic's cpu_r2 10 us: gain 2.04% below "
                                  "the margin 3%"));
  r = tune(9.0, 0.05);  // 11% faster; the slowest sample 9.45 us is still faster than the pick's median
  EXPECT_FALSE(r.heuristic_kept) << r.reason;
  EXPECT_EQ(r.entry.config.name(), "cpu_r8");
  EXPECT_EQ(r.entry.us, 9.0);
  EXPECT_THAT(r.reason, HasSubstr("beats the heuristic's cpu_r2 10 us"));
  r = tune(9.0, 0.2);  // the same median, but a sample reaches 10.8 us: not a win that repeats
  EXPECT_TRUE(r.heuristic_kept);
  EXPECT_THAT(r.reason, HasSubstr("does not repeat (worst sample 10.8 us is slower than the heuristic's median)"));
  r = tune(10.0 / 1.03, 0);  // exactly the margin counts
  EXPECT_FALSE(r.heuristic_kept) << r.reason;
  r = tune(11.0, 0);  // the pick is the fastest
  EXPECT_TRUE(r.heuristic_kept);
  EXPECT_EQ(r.reason, "heuristic kept: its pick cpu_r2 is the winner");

  o.refine = false;  // the same rows as the first: stored as before refine
  o.measure = scripted({{"cpu_r2", 10.0}, {"cpu_r8", 9.8}});
  r = tune::tune_problem(p, o);
  EXPECT_FALSE(r.heuristic_kept);
  EXPECT_EQ(r.entry.config.name(), "cpu_r8");

  // The pick left out by the globs is measured after them and is a candidate as well: the entry never loses to what
  // selection runs without it (session 41). Refining, the pick is then the winner and kept.
  o.candidates = "cpu_r8";
  o.measure = scripted({{"cpu_r2", 10.0}, {"cpu_r8", 12.0}});
  for (const bool refine : {false, true}) {
    o.refine = refine;
    r = tune::tune_problem(p, o);
    EXPECT_TRUE(r.heuristic.extra);
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(r.rows.back().config, "cpu_r2");
    EXPECT_EQ(r.entry.config.name(), "cpu_r2") << r.reason;
    EXPECT_EQ(r.heuristic_kept, refine) << r.reason;
  }
  o.candidates.clear();

  // A pick that fails its check has no time to refine against: the winner is stored.
  o.refine = true;
  o.measure = [](const Problem& q, const tune::BenchOptions& bo) {
    SKINNYGEMM_CHECK(bo.config != "cpu_r2", "wrong output");
    return fake_row(q, bo.config, bo.config == "cpu_r8" ? 9.99 : 12.0);
  };
  r = tune::tune_problem(p, o);
  EXPECT_FALSE(r.heuristic.error.empty());
  EXPECT_FALSE(r.heuristic_kept) << r.reason;
  EXPECT_EQ(r.entry.config.name(), "cpu_r8");

  // GPU rows (no GPU here): a cuBLASLt algorithm the margin rule stored over the heuristic's kernel.
  const Problem q{4, 1536, 7168, DType::BF16};
  const char* kernel = "bulk_m8_w1x8_u4_sk2";
  EXPECT_EQ(tune::why_keep_heuristic(fake_row(q, "cublaslt_a3", 9.0, 0.02), fake_row(q, kernel, 10.0), 0.03),
            std::nullopt);
  EXPECT_THAT(tune::why_keep_heuristic(fake_row(q, "cublaslt_a3", 9.0, 0.02), fake_row(q, kernel, 9.2), 0.03).value(),
              HasSubstr("below the margin 3%"));
  EXPECT_THROW(tune::why_keep_heuristic(fake_row(q, "cublaslt", 9.0), fake_row(q, kernel, 0.0), 0.03), Error);
}

TEST(TuneEntrySummary, CountsAndGainsOverTheHeuristic) {
  auto point = [](int64_t m, double heuristic_us, double entry_us) {
    tune::TuneResult r;
    r.problem = Problem{m, 1000, 2048, DType::BF16};
    r.rows = {fake_row(r.problem, "cpu_r8", entry_us)};
    r.rows[0].name = "odd.n1000_k2048";
    r.entry = TableEntry{Config::parse("cpu_r8"), entry_us, 0};
    r.heuristic.choice.config = Config::parse("cpu_r2");
    r.heuristic.row = fake_row(r.problem, "cpu_r2", heuristic_us);
    return r;
  };
  tune::TuneResult kept = point(4, 10.0, 9.9);
  kept.heuristic_kept = true;
  tune::TuneResult failed = point(8, 10.0, 1.0);  // no heuristic time: an entry, but no gain to count
  failed.heuristic.error = "wrong output";
  const std::vector<tune::TuneResult> results = {point(1, 10.0, 5.0), point(2, 10.0, 8.0), kept, failed};
  const tune::EntrySummary s = tune::summarize_entries(results);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.heuristic_kept, 1u);
  EXPECT_EQ(s.gain_points, 2u);
  EXPECT_DOUBLE_EQ(s.gain_geomean, std::sqrt(2.0 * 1.25));
  EXPECT_DOUBLE_EQ(s.gain_max, 2.0);
  EXPECT_EQ(s.gain_max_point, "odd.n1000_k2048 1000x2048 m=1");

  const nlohmann::json j = nlohmann::json::parse(tune::heuristic_report_json(tune::BenchMeta{}, results));
  const nlohmann::json& summary = j["summary"];
  EXPECT_EQ(summary["points"], 3);  // the heuristic's own summary is still there
  EXPECT_EQ(summary["entries"], 3);
  EXPECT_EQ(summary["heuristic_kept"], 1);
  EXPECT_EQ(summary["entry_gain_points"], 2);
  EXPECT_EQ(summary["entry_gain_geomean"], 1.581);
  EXPECT_EQ(summary["entry_gain_max"], 2.0);
  EXPECT_EQ(summary["entry_gain_max_point"], "odd.n1000_k2048 1000x2048 m=1");

  const nlohmann::json none = nlohmann::json::parse(tune::heuristic_report_json(tune::BenchMeta{}, {kept}));
  EXPECT_EQ(none["summary"]["entries"], 0);
  EXPECT_TRUE(none["summary"]["entry_gain_geomean"].is_null());
  EXPECT_TRUE(none["summary"]["entry_gain_max"].is_null());
}

TEST_F(TuneFiles, RefineWritesEntriesThatBeatTheHeuristicAndMarkersWhereItIsKept) {
  // The pick (cpu_r2 at M = 1, 2) takes 10 us everywhere; cpu_r8 is 2x faster at 64x256 m=1, 1.25x at m=2,
  // within the margin at 96x128 m=1 and slower at m=2.
  for (const Problem& p : {Problem{1, 64, 256, DType::BF16}, Problem{2, 96, 128, DType::BF16}})
    ASSERT_EQ(untuned_pick(p, cpu_device_info()), "cpu_r2");
  std::map<Kind, int> events;
  tune::TuneOptions o = cpu_options(&events);
  o.refine = true;
  int calls = 0;
  o.measure = [&calls](const Problem& p, const tune::BenchOptions& bo) {
    ++calls;
    const double r8 = p.n == 64 ? (p.m == 1 ? 5.0 : 8.0) : (p.m == 1 ? 9.9 : 11.0);
    return fake_row(p, bo.config, bo.config == "cpu_r2" ? 10.0 : bo.config == "cpu_r8" ? r8 : 12.0);
  };
  tune::TuneSummary s = tune::tune_into_table(kShapes, {1, 2, 2}, DType::BF16, o, path_);
  EXPECT_EQ(s.tuned, 4u);
  EXPECT_EQ(s.skipped, 2u);  // the repeated M, kept or stored, is measured once
  EXPECT_EQ(events[Kind::Stored], 2);
  EXPECT_EQ(events[Kind::Kept], 2);
  EXPECT_EQ(calls, 4 * static_cast<int>(std::size(kCpuRows)));  // the pick is a candidate: measured once
  Table t = Table::load(path_);
  ASSERT_EQ(t.entries.size(), 4u);
  EXPECT_EQ(t.find(DType::BF16, 64, 256, 1)->config_name(), "cpu_r8");
  EXPECT_EQ(t.find(DType::BF16, 64, 256, 1)->us, 5.0);
  EXPECT_EQ(t.find(DType::BF16, 64, 256, 2)->us, 8.0);
  for (const int64_t m : {1, 2}) {  // markers with the pick's time
    const auto marker = t.find(DType::BF16, 96, 128, m);
    ASSERT_TRUE(marker.has_value()) << m;
    EXPECT_TRUE(marker->heuristic_kept) << m;
    EXPECT_EQ(marker->us, 10.0) << m;
  }
  // Selection with the table runs the heuristic there (no larger M's entry stands for it), saying why.
  const Choice marked = select(Problem{1, 96, 128, DType::BF16}, cpu_device_info(), &t);
  EXPECT_EQ(marked.source, Source::Heuristic);
  EXPECT_EQ(marked.config.name(), "cpu_r2");
  EXPECT_THAT(marked.reason, HasSubstr(path_ + ": heuristic kept (measured best at M=1, 10 us); heuristic: "));
  const tune::EntrySummary e = tune::summarize_entries(s.results);
  EXPECT_EQ(e.entries, 2u);  // markers are no entries over the heuristic
  EXPECT_EQ(e.heuristic_kept, 2u);
  EXPECT_DOUBLE_EQ(e.gain_geomean, std::sqrt(2.0 * 1.25));
  EXPECT_EQ(e.gain_max_point, "64x256 m=1");

  // Resumed: every point is in the table, the kept ones by their markers, so nothing is measured.
  std::vector<std::string> skipped;
  tune::TuneOptions resumed = o;
  resumed.progress = [&skipped](const tune::TuneEvent& ev) {
    if (ev.kind == Kind::Skipped) skipped.push_back(ev.message);
  };
  calls = 0;
  s = tune::tune_into_table(models::parse_shapes("96x128"), {1, 2}, DType::BF16, resumed, path_);
  EXPECT_EQ(s.tuned, 0u);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(skipped, (std::vector<std::string>{"in the table (heuristic 10 us)", "in the table (heuristic 10 us)"}));

  // With force, a marker replaces the file's entry where the heuristic is now kept, and the event names the entry.
  Table seeded;
  seeded.meta = Table::meta_for(cpu_device_info());
  seeded.put(TableKey{DType::BF16, 96, 128, 1}, TableEntry{Config::parse("cpu_r4"), 123.0, 0});
  seeded.save_merge(path_);
  std::vector<std::string> kept;
  tune::TuneOptions forced = o;
  forced.force = true;
  forced.progress = [&kept](const tune::TuneEvent& ev) {
    if (ev.kind == Kind::Kept) kept.push_back(ev.message);
  };
  tune::tune_into_table(models::parse_shapes("96x128"), {1}, DType::BF16, forced, path_);
  EXPECT_EQ(kept, std::vector<std::string>{"replaces the table's entry cpu_r4 123 us"});
  const auto replaced = Table::load(path_).find(DType::BF16, 96, 128, 1);
  ASSERT_TRUE(replaced.has_value());
  EXPECT_TRUE(replaced->heuristic_kept);
  EXPECT_EQ(replaced->us, 10.0);
  EXPECT_EQ(Table::load(path_).entries.size(), 4u);

  // With store off the kept points are reported, and nothing is written.
  fs::remove(path_);
  tune::TuneOptions measured = o;
  measured.store = false;
  events.clear();
  tune::tune_into_table(kShapes, {1, 2}, DType::BF16, measured, "");
  EXPECT_EQ(events[Kind::Kept], 2);
  EXPECT_EQ(events[Kind::Measured], 2);
  EXPECT_FALSE(fs::exists(path_));

  // Without refine every point gets an entry, also where it is no faster than the heuristic's pick.
  fs::remove(path_);
  o.refine = false;
  s = tune::tune_into_table(kShapes, {1, 2}, DType::BF16, o, path_);
  EXPECT_EQ(Table::load(path_).entries.size(), 4u);
  const tune::EntrySummary all = tune::summarize_entries(s.results);
  EXPECT_EQ(all.entries, 4u);
  EXPECT_EQ(all.heuristic_kept, 0u);
  EXPECT_DOUBLE_EQ(all.gain_geomean, std::pow(2.0 * 1.25 * (10.0 / 9.9) * 1.0, 0.25));
}

TEST(TuneFileName, FromTheDeviceName) {
  EXPECT_EQ(tune::table_file_name(h200()), "nvidia-h200.json");
  DeviceInfo h100 = h200();
  h100.name = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(tune::table_file_name(h100), "nvidia-h100-80gb-hbm3.json");
  DeviceInfo cpu = cpu_device_info();
  cpu.sms = 2;  // the thread count of this machine must not decide the test
  EXPECT_EQ(tune::table_file_name(cpu), "cpu-2t.json");
}

using test::run_cli;

TEST_F(TuneFiles, CliTunesResumesAndWritesJson) {
  const std::string json = (dir_ / "rows.json").string();
  const std::string args = "tune --backend cpu --shapes 64x256 --m 1,2 --samples 1 --replays 1 --table '" + path_ + "'";
  int status = -1;
  std::string out = run_cli(args + " --json '" + json + "'", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("[2/2] 64x256 m=2: 4 candidates ..."));
  EXPECT_THAT(out, HasSubstr("-> stored"));
  EXPECT_THAT(out, HasSubstr("tuned 2, skipped 0"));
  EXPECT_THAT(out, HasSubstr(path_));
  EXPECT_EQ(Table::load(path_).entries.size(), 2u);
  const std::string rows = read_all(json);
  EXPECT_THAT(rows, HasSubstr("\"stored\": true"));
  EXPECT_THAT(rows, HasSubstr("tune --backend cpu"));  // meta.command

  out = run_cli(args, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("tuned 0, skipped 2"));

  out = run_cli("tune --backend cpu --shapes 64x256 --m 1 --candidates 'bulk_*' --table '" + path_ + "'", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("bulk_*"));
}

TEST_F(TuneFiles, CliRefinesTheHeuristic) {
  // Distance 0: the heuristic's pick is the only candidate, so it wins and a heuristic marker is stored.
  const std::string table = (dir_ / "refined.json").string();
  const std::string report = (dir_ / "heuristic.json").string();
  const std::string json = (dir_ / "rows.json").string();
  int status = -1;
  std::string out = run_cli("tune --backend cpu --shapes 64x256 --m 1,2 --samples 1 --replays 1 --near-heuristic 0 "
                            "--refine --table '" + table + "' --heuristic-report '" + report + "' --json '" + json +
                                "'",
                            &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("[2/2] 64x256 m=2: 1 candidates ..."));
  EXPECT_THAT(out, HasSubstr("-> stored a heuristic marker (heuristic kept: its pick cpu_r2 is the winner)"));
  EXPECT_THAT(out, HasSubstr("entries over the heuristic: 0 of 2 tuned points got one, the heuristic kept at 2\n"));
  const Table markers = Table::load(table);
  ASSERT_EQ(markers.entries.size(), 2u);
  for (const auto& [key, entry] : markers.entries) EXPECT_TRUE(entry.heuristic_kept) << key.m;
  const nlohmann::json j = nlohmann::json::parse(read_all(report));
  EXPECT_EQ(j["summary"]["entries"], 0);
  EXPECT_EQ(j["summary"]["heuristic_kept"], 2);
  const nlohmann::json rows = nlohmann::json::parse(read_all(json));
  ASSERT_EQ(rows["heuristic_kept"].size(), 2u);
  EXPECT_EQ(rows["heuristic_kept"][1]["m"], 2);
  EXPECT_EQ(rows["heuristic_kept"][1]["config"], "cpu_r2");
  for (const nlohmann::json& row : rows["rows"]) EXPECT_FALSE(row["stored"].get<bool>()) << row;  // a marker names none

  // Run again: the markers are in the table.
  out = run_cli("tune --backend cpu --shapes 64x256 --m 1,2 --samples 1 --replays 1 --near-heuristic 0 --refine "
                "--table '" + table + "'",
                &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("[2/2] 64x256 m=2: in the table (heuristic "));
  EXPECT_THAT(out, HasSubstr("tuned 0, skipped 2"));

  out = run_cli("tune --backend cpu --shapes 64x256 --m 1 --near-heuristic -1 --no-store", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("--near-heuristic -1: expected a number of name tokens >= 0"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("tune on")));  // refused before anything is measured
}

}  // namespace
}  // namespace skinnygemm
