// Selection: table hit -> heuristic -> fallback, heuristic markers, foreign tables skipped with one warning, caching
// (also from several threads), SKINNYGEMM_LOG, forced configs through gemm().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/backends.h"
#include "common/test_util.h"
#include "lab/device_presets.h"
#include "lab/models.h"
#include "runtime/cost_model.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

DeviceInfo h200() { return tune::device_preset("h200"); }

Table table_for(const DeviceInfo& dev, const std::string& path = "test-table.json") {
  Table t;
  t.meta = Table::meta_for(dev);
  t.path = path;
  return t;
}

void put(Table& t, const Problem& p, const std::string& config, double us) {
  TableKey k;
  k.dtype = p.dtype;
  k.n = p.n;
  k.k = p.k;
  k.m = p.m;
  TableEntry e;
  e.config = Config::parse(config);
  e.us = us;
  t.put(k, e);
}

void put_marker(Table& t, const Problem& p, double us, double cublaslt_us = 0) {
  t.put(TableKey{p.dtype, p.n, p.k, p.m}, TableEntry::heuristic_marker(us, cublaslt_us));
}

class Selection : public ::testing::Test {
 protected:
  void SetUp() override { clear_selection_cache(); }
  void TearDown() override {
    unsetenv("SKINNYGEMM_LOG");
    clear_selection_cache();
  }
};

TEST_F(Selection, TableHitWinsOverTheHeuristic) {
  const DeviceInfo cpu = cpu_device_info();
  const Problem p{3, 256, 512, DType::BF16};
  Choice heuristic;
  ASSERT_TRUE(heuristic_choice(p, cpu, 16, &heuristic));
  // Store a config the heuristic would not pick, so that the test sees which one won.
  const std::string other = heuristic.config.name() == "cpu_r1" ? "cpu_r2" : "cpu_r1";
  Table t = table_for(cpu);
  put(t, p, other, 1.0);
  const Choice c = select(p, cpu, &t);
  EXPECT_EQ(c.source, Source::Table);
  EXPECT_EQ(c.config.name(), other);
  EXPECT_THAT(c.reason, HasSubstr("test-table.json"));
  // Another M of the same shape is not in the table: the heuristic decides.
  const Problem p2{4, 256, 512, DType::BF16};
  EXPECT_EQ(select(p2, cpu, &t).source, Source::Heuristic);
}

// A table built by hand (entries set directly, no put()) and a copy of it are tables of their own to the cache: neither
// is mistaken for no table (the heuristic's cached pick) nor for the table it was copied from (session 43).
TEST_F(Selection, HandBuiltTablesAndCopiesAreNotMistakenForOthers) {
  const DeviceInfo cpu = cpu_device_info();
  const Problem p{3, 256, 512, DType::BF16};
  const Choice heuristic = select(p, cpu, nullptr);  // cached under "no table"
  const std::string other = heuristic.config.name() == "cpu_r1" ? "cpu_r2" : "cpu_r1";
  Table t;
  t.meta = Table::meta_for(cpu);
  t.entries[TableKey{p.dtype, p.n, p.k, p.m}] = TableEntry{Config::parse(other), 1.0, 0.0, false};
  EXPECT_EQ(select(p, cpu, &t).config.name(), other);
  Table copy = t;  // cached under t's id now: the copy's own entry must win
  const std::string third = other == "cpu_r4" ? "cpu_r8" : "cpu_r4";
  copy.entries[TableKey{p.dtype, p.n, p.k, p.m}] = TableEntry{Config::parse(third), 1.0, 0.0, false};
  EXPECT_EQ(select(p, cpu, &copy).config.name(), third);
  EXPECT_EQ(select(p, cpu, &t).config.name(), other);
  EXPECT_NE(Table().id, Table().id);
  // A move keeps the id with the entries; the emptied source is another table.
  const uint64_t id = t.id;
  Table moved = std::move(t);
  EXPECT_EQ(moved.id, id);
  EXPECT_NE(t.id, id);  // NOLINT(bugprone-use-after-move): the moved-from table is valid and must not share the id
  EXPECT_EQ(select(p, cpu, &moved).config.name(), other);
}

TEST_F(Selection, BucketsServeTheMsBetweenTunedOnes) {
  const DeviceInfo cpu = cpu_device_info();
  Table t = table_for(cpu);
  put(t, Problem{4, 256, 512, DType::BF16}, "cpu_r2", 1.0);
  put(t, Problem{16, 256, 512, DType::BF16}, "cpu_r8", 1.0);
  const Choice m3 = select(Problem{3, 256, 512, DType::BF16}, cpu, &t);
  EXPECT_EQ(m3.source, Source::Table);
  EXPECT_EQ(m3.config.name(), "cpu_r2");
  EXPECT_THAT(m3.reason, HasSubstr("bucket M=4"));
  EXPECT_EQ(select(Problem{9, 256, 512, DType::BF16}, cpu, &t).config.name(), "cpu_r8");
  EXPECT_EQ(select(Problem{17, 256, 512, DType::BF16}, cpu, &t).source, Source::Heuristic);  // past the last
  EXPECT_EQ(select(Problem{3, 256, 1024, DType::BF16}, cpu, &t).source, Source::Heuristic);  // another shape
}

TEST_F(Selection, HeuristicMarkerKeepsTheHeuristicAtItsMAndTheMsItServes) {
  // tune --refine measured the heuristic's pick best at M = 8 and stored entries at M = 4 and 16, where other configs
  // beat it: M = 5..8 run the heuristic's pick, not M = 16's entry, and the entries still serve their own buckets.
  const DeviceInfo cpu = cpu_device_info();
  const auto at = [](int64_t m) { return Problem{m, 256, 512, DType::BF16}; };
  Table t = table_for(cpu);
  put(t, at(4), "cpu_r1", 1.0);
  put(t, at(16), "cpu_r1", 1.0);
  const Choice unmarked = select(at(6), cpu, &t);
  EXPECT_EQ(unmarked.source, Source::Table);  // the gap a marker closes
  EXPECT_THAT(unmarked.reason, HasSubstr("(bucket M=16)"));
  put_marker(t, at(8), 2.5, 3.0);
  for (const int64_t m : {8, 6, 5}) {
    Choice alone;
    ASSERT_TRUE(heuristic_choice(at(m), cpu, 16, &alone));
    const Choice c = select(at(m), cpu, &t);
    EXPECT_EQ(c.source, Source::Heuristic) << m;
    EXPECT_EQ(c.config.name(), alone.config.name()) << m;
    EXPECT_EQ(c.reason.str(),
              "table test-table.json: heuristic kept (measured best at M=8, 2.5 us vs cuBLASLt 3 us); " + alone.reason);
  }
  for (const int64_t m : {3, 12}) {
    const Choice c = select(at(m), cpu, &t);
    EXPECT_EQ(c.source, Source::Table) << m;
    EXPECT_EQ(c.config.name(), "cpu_r1") << m;
    EXPECT_THAT(c.reason, HasSubstr(m == 3 ? "(bucket M=4)" : "(bucket M=16)"));
  }

  // Through gemm(), whose plans are cached per table too: the marker's choice, then an entry put at M = 6 itself.
  const Problem p = at(6);
  std::vector<uint16_t> x(p.m * p.k, 0x3f80), w(p.n * p.k, 0x3f80), y(p.m * p.n, 0);  // ones
  Options o;
  o.backend = Backend::Cpu;
  o.table = &t;
  const Choice marked = gemm(p, x.data(), w.data(), y.data(), o);
  EXPECT_EQ(marked.source, Source::Heuristic);
  EXPECT_THAT(marked.reason, HasSubstr("heuristic kept (measured best at M=8"));
  EXPECT_EQ(y[0], 0x4400) << "512 ones dotted with 512 ones is 512";
  put(t, p, "cpu_r2", 1.0);
  const Choice entry = gemm(p, x.data(), w.data(), y.data(), o);
  EXPECT_EQ(entry.source, Source::Table);
  EXPECT_EQ(entry.config.name(), "cpu_r2");
}

TEST_F(Selection, BucketEntriesYieldToTheStructuralPick) {
  // Without the kernels the rule itself, over the shape arithmetic (what a build holding every instance runs).
  const DeviceInfo gpu = h200();
  Choice pick;
  const Problem m1{1, 2112, 7168, DType::BF16};
  EXPECT_TRUE(bucket_yields_to_structural_pick(m1, gpu, [&](const Config& c) { return fits_shape(c, m1, gpu); }, &pick));
  EXPECT_EQ(pick.config.family, Family::Tma);
  const Problem m17{17, 2112, 7168, DType::BF16}, narrow{1, 144, 7168, DType::BF16};
  EXPECT_FALSE(bucket_yields_to_structural_pick(m17, gpu, [&](const Config& c) { return fits_shape(c, m17, gpu); },
                                                &pick));
  EXPECT_FALSE(bucket_yields_to_structural_pick(narrow, gpu,
                                                [&](const Config& c) { return fits_shape(c, narrow, gpu); }, &pick));
  if (!cuda::built()) GTEST_SKIP() << "built without CUDA: select() has no TMA instance to pick";
  // Through select(): an entry at M = 17 stands for M = 17 and for the narrow shape's M = 1, not for 2112 x 7168's.
  Table t = table_for(gpu, "h200-table.json");
  put(t, m17, "cublaslt", 12.0);
  put(t, Problem{17, 144, 7168, DType::BF16}, "cublaslt", 6.0);
  const Choice c1 = select(m1, gpu, &t);
  EXPECT_EQ(c1.source, Source::Heuristic);
  EXPECT_EQ(c1.config.family, Family::Tma) << c1.config.name();
  EXPECT_THAT(c1.reason, HasSubstr("has no entry at M=1 (its next, M=17, is not used where structural rules apply)"));
  EXPECT_EQ(select(m17, gpu, &t).source, Source::Table);
  EXPECT_EQ(select(narrow, gpu, &t).source, Source::Table);
  // A marker at M = 17 keeps the heuristic there and at the narrow shape's M = 1; 2112 x 7168's M = 1 still takes
  // the structural pick on the rule's own account.
  put_marker(t, m17, 11.0);
  put_marker(t, Problem{17, 144, 7168, DType::BF16}, 6.5);
  for (const Problem& p : {m17, narrow}) {
    const Choice c = select(p, gpu, &t);
    EXPECT_EQ(c.source, Source::Heuristic) << p.str();
    EXPECT_THAT(c.reason, HasSubstr("table h200-table.json: heuristic kept (measured best at M=17, ")) << p.str();
  }
  EXPECT_THAT(select(m1, gpu, &t).reason,
              HasSubstr("has no entry at M=1 (its next, M=17, is not used where structural rules apply)"));
  put(t, m1, "cublaslt", 12.0);  // an entry measured at M = 1 itself refines the heuristic there
  clear_selection_cache();
  EXPECT_EQ(select(m1, gpu, &t).source, Source::Table);
}

TEST_F(Selection, TheShippedH200TableLeavesKimiK3ToTheHeuristicUpToM16) {
  // Session 9 measured the whole step with the heuristic alone faster at every M <= 16 (docs/step.md) and pruned the
  // table to match: for every Kimi-K3 TP8 projection and fusion at M <= 16 selection with the shipped table is the
  // heuristic's pick, or an entry measured at that very M (the narrow rows the structural pick leaves alone, and since
  // session 28 the TMA configs that beat the heuristic's pick in the fused step's search, docs/step.md), never a
  // bucket; at M = 17..64 an entry of the table, measured at that M.
  if (!cuda::built()) GTEST_SKIP() << "built without CUDA: supports() admits no kernel instance";
  const DeviceInfo gpu = h200();
  const Table shipped = Table::load(std::string(SKINNYGEMM_SOURCE_DIR) + "/tables/nvidia-h200.json");
  ASSERT_TRUE(shipped.matches(gpu));
  int structural = 0, searched = 0;
  for (const char* shapes : {"model:kimi_k3:tp8", "model:kimi_k3:tp8:fusions"})  // projections, then the fusions
    for (const models::Projection& proj : models::parse_shapes(shapes))
    for (int64_t m = 1; m <= 64; ++m) {
      const Problem p{m, proj.n, proj.k, DType::BF16};
      const Choice with = select(p, gpu, &shipped);
      const auto own = shipped.find(p.dtype, p.n, p.k, p.m);
      if (own && own->heuristic_kept) {  // tune --refine measured the heuristic best here
        EXPECT_EQ(with.source, Source::Heuristic) << proj.name << " " << p.str() << ": " << with.reason;
        EXPECT_THAT(with.reason, HasSubstr("heuristic kept (measured best at M=" + std::to_string(m) + ","));
      } else if (m <= 16 && own) {
        EXPECT_EQ(with.source, Source::Table) << proj.name << " " << p.str() << ": " << with.reason;
        if (with.config.family == Family::Tma) {  // judged in the fused step (session 28): never the pick it refines
          Choice alone;
          ASSERT_TRUE(heuristic_choice(p, gpu, 16, &alone)) << p.str();
          EXPECT_NE(with.config.name(), alone.config.name()) << p.str();
          ++searched;
        }
      } else if (m <= 16) {
        Choice alone;
        ASSERT_TRUE(heuristic_choice(p, gpu, 16, &alone)) << p.str();
        EXPECT_EQ(with.config.name(), alone.config.name()) << proj.name << " " << p.str() << ": " << with.reason;
        structural += with.config.family == Family::Tma;
      } else {
        EXPECT_EQ(with.source, Source::Table) << proj.name << " " << p.str() << ": " << with.reason;
        EXPECT_THAT(with.reason, ::testing::Not(HasSubstr("bucket"))) << p.str();
      }
    }
  EXPECT_GT(structural, 16 * 15) << "most Kimi-K3 points at M <= 16 take the TMA family's structural pick";
  EXPECT_LE(searched, 16) << "the step-searched TMA entries are a refinement of a few points, not a second heuristic";
  // The loop above visits TP8's shapes only; a kernel entry at M <= 16 on any other shape would override the structural
  // pick of every projection of that N x K at any TP size, unjudged by a step (session 45 stored five on 6144 x 7168, a
  // TP8 segment that no TP8 step launches, and withdrew them: TP2's mla.g_proj and shared.gate_up share the shape and
  // the TP2 steps launch them). Outside the four narrow shapes that the structural pick leaves to the scored families,
  // kernel entries at M <= 16 are the step-searched shapes'.
  const std::set<std::pair<int64_t, int64_t>> step_searched = {{6016, 7168}, {6288, 7168}, {7168, 768}, {7168, 1536}};
  for (const auto& [key, entry] : shipped.entries) {
    const bool narrow = key.k == 7168 && key.n <= 224;  // 144, 152, 176, 224 x 7168
    if (key.m > 16 || narrow || entry.heuristic_kept || entry.config.family == Family::Cublaslt) continue;
    EXPECT_EQ(step_searched.count({key.n, key.k}), 1u)
        << key.n << "x" << key.k << " m=" << key.m << " " << entry.config.name()
        << ": a kernel entry at M <= 16 on a shape the fused step did not judge";
  }
}

// The H100's table (docs/kernels.md "Session 40"): the 8-row stream on the fused step's two largest GEMMs at M = 1..8
// (4 stages to M = 5, 3 above, where x's M-row boxes would leave one CTA per SM), judged in the H100's step (162-235 us
// faster than the heuristic alone at M = 1, 2, 4, 6, 8); everything else is the heuristic's, and the file never matches
// the H200 (where the same entries cost the step 250-356 us).
TEST_F(Selection, TheShippedH100TableTakesTheRowStreamOnlyOnTheLargestFusedGemmsAtUpToEightTokens) {
  if (!cuda::built()) GTEST_SKIP() << "built without CUDA: supports() admits no kernel instance";
  const DeviceInfo gpu = tune::device_preset("h100");
  const Table shipped = Table::load(std::string(SKINNYGEMM_SOURCE_DIR) + "/tables/nvidia-h100-80gb-hbm3.json");
  ASSERT_TRUE(shipped.matches(gpu));
  EXPECT_FALSE(shipped.matches(h200()));
  DeviceInfo newer = gpu;  // no entry names a cuBLASLt algorithm: another cuBLASLt keeps the table
  newer.cublaslt_version = "13.2.0";
  EXPECT_EQ(shipped.mismatch(newer, 16), "");
  EXPECT_EQ(shipped.entries.size(), 16u) << "6016 and 6288 x 7168 at M = 1..8, nothing else";
  for (const int64_t n : {6016, 6288})
    for (int64_t m = 1; m <= 8; ++m) {
      const auto own = shipped.find(DType::BF16, n, 7168, m);  // an entry at this very M, not a bucket's
      ASSERT_TRUE(own) << n << "x7168 m=" << m;
      EXPECT_EQ(own->config.name(), m <= 5 ? "tma_m8_r8_b16_s4_rs" : "tma_m8_r8_b16_s3_rs") << n << "x7168 m=" << m;
    }
  for (const char* shapes : {"model:kimi_k3:tp8", "model:kimi_k3:tp8:fusions"})
    for (const models::Projection& proj : models::parse_shapes(shapes))
      for (int64_t m = 1; m <= 64; ++m) {
        const Problem p{m, proj.n, proj.k, DType::BF16};
        const Choice with = select(p, gpu, &shipped);
        if (proj.k == 7168 && (proj.n == 6016 || proj.n == 6288) && m <= 8) {
          EXPECT_EQ(with.source, Source::Table) << p.str() << ": " << with.reason;
          EXPECT_EQ(with.config.name(), shipped.find(p.dtype, p.n, p.k, p.m)->config.name()) << p.str();
          continue;
        }
        Choice alone;
        ASSERT_TRUE(heuristic_choice(p, gpu, 16, &alone)) << p.str();
        EXPECT_EQ(with.config.name(), alone.config.name()) << proj.name << " " << p.str() << ": " << with.reason;
      }
}

TEST_F(Selection, EntryThatDoesNotApplyFallsThroughWithTheReason) {
  const DeviceInfo cpu = cpu_device_info();
  const Problem p{2, 64, 256, DType::BF16};
  Table t = table_for(cpu);
  put(t, p, "bulk_m8_w1x4_u2_sk1", 1.0);  // a GPU config in a CPU table
  const Choice c = select(p, cpu, &t);
  EXPECT_EQ(c.source, Source::Heuristic);
  EXPECT_EQ(c.config.family, Family::Cpu);
  EXPECT_THAT(c.reason, HasSubstr("does not apply"));
}

TEST_F(Selection, ForeignTableIsSkippedWithOneWarning) {
  const DeviceInfo cpu = cpu_device_info();
  const Problem p{1, 128, 256, DType::BF16};
  Table t = table_for(h200(), "h200-table.json");
  put(t, p, "cpu_r8", 1.0);
  ::testing::internal::CaptureStderr();
  const Choice first = select(p, cpu, &t);
  const Choice second = select(Problem{2, 128, 256, DType::BF16}, cpu, &t);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(first.source, Source::Heuristic);
  EXPECT_EQ(second.source, Source::Heuristic);
  EXPECT_THAT(err, HasSubstr("h200-table.json"));
  EXPECT_EQ(err.find("warning"), err.rfind("warning")) << "warned more than once: " << err;
}

TEST_F(Selection, GpuFallbackForMisalignedOrOddK) {
  const DeviceInfo gpu = h200();
  // 2-byte aligned operands and K not a multiple of 8: no kernel may run them; cuBLASLt does.
  for (const auto& [p, alignment] : {std::pair{Problem{4, 1536, 7168, DType::BF16}, 2},
                                     std::pair{Problem{4, 1536, 7170, DType::BF16}, 16}}) {
    const Choice c = select(p, gpu, nullptr, alignment);
    EXPECT_EQ(c.source, Source::Fallback) << p.str();
    EXPECT_EQ(c.config.name(), "cublaslt");
    EXPECT_THAT(c.reason, HasSubstr("fallback"));
    // The README quotes this reason for K = 7170.
    if (p.k == 7170) {
      EXPECT_THAT(c.reason, HasSubstr("fallback: no kernel config supports bf16 m=4 n=1536 k=7170"));
      std::string why_not;  // what a forced kernel config's Error names (supports() on a build with the kernels)
      EXPECT_FALSE(fits_shape(Config::parse("bulk_m8_w1x8_u4_sk2"), p, gpu, &why_not));
      EXPECT_THAT(why_not, HasSubstr("K=7170 must be a positive multiple of 8 for 16-byte loads"));
    }
  }
  // The stage ring's byte counts along K are 32-bit: a K of 2^30 + 8 (the audit of session 36 found it admitted,
  // where the kernel would pass negative byte counts to its copies) is refused with the bound named.
  std::string why_not;
  EXPECT_FALSE(fits_shape(Config::parse("bulk_m8_w1x8_u4_sk8"), Problem{1, 1, (int64_t{1} << 30) + 8, DType::BF16},
                          gpu, &why_not));
  EXPECT_THAT(why_not, HasSubstr("exceeds the stage ring's 536870912"));
  EXPECT_TRUE(fits_shape(Config::parse("bulk_m8_w1x8_u4_sk8"), Problem{1, 16, 1 << 29, DType::BF16}, gpu, &why_not))
      << why_not;
  EXPECT_FALSE(fits_shape(Config::parse("bulk_m8_w1x8_u4_sk8"), Problem{1, 16, (1 << 29) + 8, DType::BF16}, gpu));
  // A device the kernels are not built for also falls back.
  DeviceInfo ampere = gpu;
  ampere.cc_major = 8;
  EXPECT_EQ(select(Problem{4, 1536, 7168, DType::BF16}, ampere, nullptr).config.name(), "cublaslt");
}

TEST_F(Selection, GpuHeuristicPicksABuiltKernelWhereOneFits) {
  if (!cuda::built()) GTEST_SKIP() << "built without CUDA: no kernel instances to pick from";
  const DeviceInfo gpu = h200();
  const Choice c = select(Problem{1, 3648, 7168, DType::BF16}, gpu, nullptr);
  EXPECT_EQ(c.source, Source::Heuristic);
  std::string why_not;
  EXPECT_TRUE(supports(c.config, Problem{1, 3648, 7168, DType::BF16}, gpu, 16, &why_not)) << why_not;
}

TEST_F(Selection, CachedAndStableAcrossThreads) {
  const DeviceInfo cpu = cpu_device_info();
  std::vector<Problem> problems;
  for (int64_t m : {1, 2, 3, 8, 17, 64})
    for (int64_t n : {1, 100, 4096}) problems.push_back(Problem{m, n, 512, DType::FP16});
  std::vector<std::string> expected;
  for (const Problem& p : problems) expected.push_back(select(p, cpu, nullptr).config.name());
  clear_selection_cache();
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round)
        for (std::size_t i = 0; i < problems.size(); ++i)
          if (select(problems[i], cpu, nullptr).config.name() != expected[i]) ++mismatches[t];
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST_F(Selection, TableChangesAreSeenThroughTheCache) {
  const DeviceInfo cpu = cpu_device_info();
  const Problem p{5, 300, 512, DType::BF16};
  Table t = table_for(cpu);
  EXPECT_EQ(select(p, cpu, &t).source, Source::Heuristic);
  put(t, p, "cpu_r2", 1.0);  // bumps the table id the cache keys on
  EXPECT_EQ(select(p, cpu, &t).source, Source::Table);
}

TEST_F(Selection, LogPrintsEachNewChoiceOnce) {
  setenv("SKINNYGEMM_LOG", "1", 1);
  const DeviceInfo cpu = cpu_device_info();
  ::testing::internal::CaptureStderr();
  select(Problem{7, 96, 256, DType::BF16}, cpu, nullptr);
  select(Problem{7, 96, 256, DType::BF16}, cpu, nullptr);
  select(Problem{8, 96, 256, DType::BF16}, cpu, nullptr);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("m=7"));
  EXPECT_THAT(err, HasSubstr("m=8"));
  EXPECT_EQ(err.find("m=7"), err.rfind("m=7")) << err;
  EXPECT_THAT(err, HasSubstr("[heuristic]"));
}

TEST_F(Selection, ForcedConfigsThroughGemm) {
  const Problem p{2, 40, 64, DType::BF16};
  std::vector<uint16_t> x(2 * 64, 0x3f80), w(40 * 64, 0x3f80), y(2 * 40, 0);  // ones
  Options o;
  o.backend = Backend::Cpu;
  o.config = "cpu_r8";
  const Choice c = gemm(p, x.data(), w.data(), y.data(), o);
  EXPECT_EQ(c.source, Source::Forced);
  EXPECT_EQ(y[0], 0x4280) << "64 ones dotted with 64 ones is 64";
  o.config = "bulk_m8_w1x4_u2_sk1";
  try {
    gemm(p, x.data(), w.data(), y.data(), o);
    FAIL() << "a GPU config must not run on the CPU backend";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bulk_m8_w1x4_u2_sk1"));
    EXPECT_THAT(e.what(), HasSubstr("needs a GPU"));
  }
}

}  // namespace
}  // namespace skinnygemm
