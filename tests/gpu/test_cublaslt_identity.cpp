// Issue 17 on the GPU: a cuBLASLt algorithm named by identity runs what its heuristic position ran (the same bits),
// one cuBLASLt rejects fails forced and falls back from a table, the tuner stores identities, and a table's
// positional entries migrate to identities that selection then runs.
#include <gmock/gmock.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_util.h"
#include "backends/cuda/cublaslt.h"
#include "backends/cuda/cublaslt_unsplit.h"  // cublaslt_tile_shape
#include "lab/bench.h"
#include "lab/tuner.h"
#include "skinnygemm/plan.h"
#include "skinnygemm/table.h"

namespace skinnygemm::test {
namespace {

using ::testing::HasSubstr;

// Decode shapes of both dtypes, one with rows of y that are not 16-byte aligned (N % 8 != 0).
const Problem kProblems[] = {{1, 2112, 7168, DType::BF16},
                             {16, 4096, 7168, DType::BF16},
                             {5, 9999, 2048, DType::FP16},
                             {64, 7168, 2048, DType::BF16}};

// y of one run of config on the operands (cudaMalloc'd: 256-byte aligned, as the bench's).
struct Operands {
  explicit Operands(const Problem& p)
      : problem(p), host(random_operands(p, 17)), x(host.x), w(host.w), y(matrix_elems(p.m, p.n, p.y_stride())) {}
  std::vector<uint16_t> run(const Options& o) {
    cudaMemset(y.get(), 0xFF, matrix_elems(problem.m, problem.n, problem.y_stride()) * 2);
    gemm(problem, x.get(), w.get(), y.get(), o);
    cudaDeviceSynchronize();
    return y.download(matrix_elems(problem.m, problem.n, problem.y_stride()));
  }
  std::vector<uint16_t> run(const std::string& config) {
    Options o;
    o.backend = Backend::Cuda;
    o.config = config;
    return run(o);
  }
  Problem problem;
  HostOperands host;
  DeviceArray x, w, y;
};

Table table_on_this_gpu(const std::string& path) {
  Table t;
  t.meta = Table::meta_for(cuda::device_info());
  t.path = path;
  return t;
}

TEST(GpuCublasltIdentity, EachPositionsIdentityRunsTheSameBits) {
  SKIP_WITHOUT_GPU();
  for (const Problem& p : kProblems) {
    Operands ops(p);
    const int count = cuda::cublaslt_algo_count(p, ops.x.get(), ops.w.get(), ops.y.get());
    ASSERT_GT(count, 0) << p.str();
    for (int i = 0; i < count; ++i) {
      const std::string position = "cublaslt_a" + std::to_string(i);
      const Config identity = cuda::cublaslt_identity(p, i, tune::kBenchOperandAlignment);
      ASSERT_TRUE(identity.lt_identity.named()) << position << " " << p.str();
      EXPECT_EQ(Config::parse(identity.name()), identity);
      const std::vector<uint16_t> by_position = ops.run(position);
      EXPECT_TRUE(by_position == ops.run(identity.name()))
          << identity.name() << " (" << position << ") gave other bits on " << p.str();
    }
    EXPECT_EQ(cuda::cublaslt_identity(p, -1, tune::kBenchOperandAlignment),
              cuda::cublaslt_identity(p, 0, tune::kBenchOperandAlignment));  // the default is position 0
    EXPECT_THROW(cuda::cublaslt_identity(p, count, tune::kBenchOperandAlignment), Error);
  }
}

// No algorithm 99999: forced, the call fails naming the config and the problem; from a table, the plan runs
// cuBLASLt's default instead, with one warning.
TEST(GpuCublasltIdentity, AnIdentityCublasltRejectsFailsForcedAndFallsBackFromATable) {
  SKIP_WITHOUT_GPU();
  const std::string bogus = "cublaslt_id99999_t0_s0_k1_r0_w0_o0_c0_i0";
  const Problem p = kProblems[0];
  Operands ops(p);
  try {
    ops.run(bogus);
    ADD_FAILURE() << bogus << " ran";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("config " + bogus + " cannot run " + p.str()));
    EXPECT_THAT(e.what(), HasSubstr("cublasLtMatmulAlgoInit"));
  }
  Table t = table_on_this_gpu("bogus-identity.json");
  for (const int64_t m : {p.m, p.m + 1})
    t.put(TableKey{p.dtype, p.n, p.k, m}, TableEntry{Config::parse(bogus), 1.0, 2.0});
  clear_selection_cache();
  Options o;
  o.backend = Backend::Cuda;
  o.table = &t;
  ::testing::internal::CaptureStderr();
  const Choice c = Plan(p, o).choice();
  const Choice next = Plan(Problem{p.m + 1, p.n, p.k, p.dtype}, o).choice();
  const std::vector<uint16_t> from_table = ops.run(o);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  for (const Choice& ch : {c, next}) {
    EXPECT_EQ(ch.source, Source::Fallback) << ch.reason;
    EXPECT_EQ(ch.config.name(), "cublaslt");
    EXPECT_THAT(ch.reason.str(), HasSubstr("table entry " + bogus + " cannot run here"));
  }
  EXPECT_THAT(warned, HasSubstr("warning: table entry " + bogus + " cannot run here, cuBLASLt's default runs"));
  // One warning for both problems (the message itself says "one warning per entry config").
  EXPECT_EQ(warned.find("skinnygemm: warning:"), warned.rfind("skinnygemm: warning:")) << warned;
  EXPECT_TRUE(from_table == ops.run("cublaslt"));
  clear_selection_cache();
}

// The tuner measures positions but stores what ran: a cublaslt_a1 win is stored as that algorithm's identity.
// The tuner on p with every candidate timed 10 us but `winner`, 8 us (scripted: the stored name is what is tested).
tune::TuneResult tune_with_winner(const Problem& p, const std::string& winner, tune::TuneOptions o) {
  o.backend = Backend::Cuda;
  o.measure = [winner](const Problem& q, const tune::BenchOptions& bo) {
    tune::BenchRow r;
    r.problem = q, r.config = bo.config, r.checked = true;
    r.us = bo.config == winner ? 8.0 : 10.0;
    return r;
  };
  return tune::tune_problem(p, o);
}

TEST(GpuCublasltIdentity, TheTunerStoresAPositionalWinByIdentity) {
  SKIP_WITHOUT_GPU();
  const Problem p{4, 2112, 7168, DType::BF16};
  tune::TuneOptions o;
  o.candidates = "cublaslt*";  // cuBLASLt only (a glob that names nothing is an error since session 41)
  const tune::TuneResult r = tune_with_winner(p, "cublaslt_a1", o);
  EXPECT_EQ(r.rows[r.stored].config, "cublaslt_a1") << r.reason;
  EXPECT_EQ(r.entry.config, cuda::cublaslt_identity(p, 1, tune::kBenchOperandAlignment)) << r.entry.config.name();
  // The heuristic's kernel pick is measured and reported, but a cuBLASLt-only glob keeps it out of the rows that
  // decide the entry (session 41).
  EXPECT_TRUE(r.heuristic.extra);
  for (const tune::BenchRow& row : r.rows) EXPECT_EQ(Config::parse(row.config).family, Family::Cublaslt) << row.config;
  EXPECT_EQ(r.identities.size(), r.rows.size());
}

// A tiny table tuned with positions: migrated on this GPU, its entries are identities that selection runs, with
// the bits of the positions they replace.
// A cublaslt_unsplit win is stored as the identity it ran (its answer moves with cuBLASLt's version and alignment).
TEST(GpuCublasltIdentity, TheTunerStoresAnUnsplitWinByIdentity) {
  SKIP_WITHOUT_GPU();
  const Problem p{48, 7168, 7168, DType::BF16};  // the heuristic's pick here is cublaslt_unsplit
  tune::TuneOptions o;
  o.near_heuristic = 0;  // the pick, cuBLASLt's default and answers, the first cut
  const tune::TuneResult r = tune_with_winner(p, "cublaslt_unsplit", o);
  ASSERT_EQ(r.rows[r.stored].config, "cublaslt_unsplit") << r.reason;
  EXPECT_EQ(r.entry.config, cuda::cublaslt_identity(p, kCublasltUnsplit, tune::kBenchOperandAlignment))
      << r.entry.config.name();
}

TEST(GpuCublasltIdentity, MigratedTableRunsWhatItsPositionsRan) {
  SKIP_WITHOUT_GPU();
  const std::filesystem::path dir = fresh_test_dir("gpu_migrate");
  const std::string path = (dir / "tuned-by-position.json").string();
  const std::pair<Problem, int> positional[] = {{kProblems[0], 1}, {kProblems[2], 0}};
  Table t = table_on_this_gpu(path);
  for (const auto& [p, i] : positional)
    t.put(TableKey{p.dtype, p.n, p.k, p.m}, TableEntry{Config::parse("cublaslt_a" + std::to_string(i)), 5.0, 6.0});
  t.put(TableKey{DType::BF16, 144, 7168, 1}, TableEntry{Config::parse("cublaslt"), 6.0, 6.0});
  t.save_merge(path);

  const tune::MigrationSummary s = tune::migrate_cublaslt_names(path, cuda::device_info(), {});
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.positional, 2u);
  EXPECT_EQ(s.migrated, 2u);
  EXPECT_TRUE(s.failures.empty()) << s.failures[0];

  const Table migrated = Table::load(path);
  EXPECT_EQ(migrated.find(DType::BF16, 144, 7168, 1)->config.name(), "cublaslt");
  clear_selection_cache();
  for (const auto& [p, i] : positional) {
    const auto e = migrated.find(p.dtype, p.n, p.k, p.m);
    ASSERT_TRUE(e.has_value());
    EXPECT_TRUE(e->config.lt_identity.named()) << e->config.name();
    Operands ops(p);
    Options o;
    o.backend = Backend::Cuda;
    o.table = &migrated;
    const std::vector<uint16_t> from_table = ops.run(o);
    const Choice c = gemm(p, ops.x.get(), ops.w.get(), ops.y.get(), o);
    EXPECT_EQ(c.source, Source::Table) << c.reason;
    EXPECT_EQ(c.config, e->config);
    EXPECT_TRUE(from_table == ops.run("cublaslt_a" + std::to_string(i))) << e->config.name() << " on " << p.str();
  }
  clear_selection_cache();
  std::filesystem::remove_all(dir);
}

// cublaslt_unsplit runs the answer its rule names among cuBLASLt's own (cublaslt_unsplit.h), read here from each
// answer's identity and judged by the rule restated (not by unsplit_answer), with that answer's bits. The shapes are
// points of the held-out reports where the default split K and an unsplit answer was 8-18% faster (9216 x 4608 at M =
// 32, 4096 x 3584 at M = 24, 2560 x 3072 at M = 48), one where no unsplit answer qualified (1000 x 4096 at M = 32),
// and a small M in FP16.
TEST(GpuCublasltIdentity, UnsplitRunsTheAnswerItsRuleNames) {
  SKIP_WITHOUT_GPU();
  const Problem problems[] = {{32, 9216, 4608, DType::BF16}, {24, 4096, 3584, DType::BF16},
                              {48, 2560, 3072, DType::BF16}, {32, 1000, 4096, DType::BF16},
                              {2, 2112, 7168, DType::FP16}};
  int split_defaults = 0, moved = 0;
  for (const Problem& p : problems) {
    Operands ops(p);
    const int count = cuda::cublaslt_algo_count(p, ops.x.get(), ops.w.get(), ops.y.get());
    ASSERT_GT(count, 0) << p.str();
    struct Answer {
      Config identity;  // none where the identity does not parse (split-K -1, which cuBLASLt reports on some)
      int split_k = 0, rows = 0, tokens = 0;
    };
    std::vector<Answer> answers(count);
    for (int i = 0; i < count; ++i) {
      try {
        answers[i].identity = cuda::cublaslt_identity(p, i, tune::kBenchOperandAlignment);
        answers[i].split_k = answers[i].identity.lt_identity.split_k;
        cuda::cublaslt_tile_shape(answers[i].identity.lt_identity.tile, &answers[i].rows, &answers[i].tokens);
      } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr("split-K")) << "answer " << i << " of " << p.str();
      }
    }
    // The rule, restated: the first answer unless it splits K, else the first later one with split-K 1, >= 48 rows
    // and >= M / 2 tokens, else the first.
    int expected = 0;
    if (answers[0].split_k != 1)
      for (int i = 1; i < count && expected == 0; ++i)
        if (answers[i].split_k == 1 && answers[i].rows >= 48 && 2 * answers[i].tokens >= p.m) expected = i;
    split_defaults += answers[0].split_k != 1;
    moved += expected != 0;
    ASSERT_TRUE(answers[expected].identity.lt_identity.named()) << p.str() << ": answer " << expected << " unnamed";
    const Config unsplit = cuda::cublaslt_identity(p, kCublasltUnsplit, tune::kBenchOperandAlignment);
    EXPECT_EQ(unsplit, answers[expected].identity)
        << p.str() << ": " << unsplit.name() << ", expected answer " << expected;
    const std::string named = answers[expected].identity.name();
    EXPECT_TRUE(ops.run("cublaslt_unsplit") == ops.run(named))
        << "cublaslt_unsplit gave other bits than " << named << " on " << p.str();
    if (p.m * p.n * p.k <= (int64_t{400} << 20)) {  // the host's FP64 reference, on the smaller shapes (seconds each)
      EXPECT_TRUE(within_naive_bound(p, ops.host, ops.run("cublaslt_unsplit"), fp64(p, ops.host), naive(p, ops.host),
                                     "cublaslt_unsplit"));
    }
  }
  // Not vacuous: the rule moved off a split default somewhere (the reports saw cuBLASLt 13.1 split the first three on
  // the H200). These shapes were chosen on the H200; cuBLASLt answers other GPUs otherwise (session 41: on an H100 the
  // rule kept the default at all five), so elsewhere the per-shape checks above stand and this one is skipped.
  const std::string gpu = cuda::device_info().name;
  if ((split_defaults == 0 || moved == 0) && gpu != "NVIDIA H200")
    GTEST_SKIP() << "on " << gpu << " the rule kept cuBLASLt's default at every shape of this test (" << split_defaults
                 << " split defaults, " << moved << " moved): shapes chosen on the H200";
  EXPECT_GT(split_defaults, 0) << "no shape here has a split default on this cuBLASLt: choose others";
  EXPECT_GT(moved, 0) << "the rule kept the default everywhere here: choose shapes where it moves";
}

}  // namespace
}  // namespace skinnygemm::test
