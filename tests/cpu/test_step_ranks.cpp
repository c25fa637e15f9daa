// The host side of the step across GPUs (docs/step.md, "Several GPUs"): where the all-reduces go (186 per
// step at TP8), the protocol with a communicator (a recording stand-in for NCCL on the CPU device), the merge of
// the ranks' rows, and the errors of bad --ranks / --rank values, in the library and through the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "lab/json_round.h"
#include "runtime/backends.h"
#include "lab/step_ranks.h"
#include "lab/step_runner.h"

namespace skinnygemm::tune {
namespace {

using ::testing::HasSubstr;
using nlohmann::ordered_json;

constexpr double kScale = 1.0 / 64;  // hidden 112, 6 layers (as in test_step.cpp)

template <typename F>
void expect_error(F&& f, const std::string& fragment) {
  test::expect_error(std::forward<F>(f), {fragment});
}

std::map<std::string, int> reduced_names(const StepModel& m, StepVariant v) {
  const auto ops = m.ops(v);
  std::map<std::string, int> names;
  for (std::size_t i : all_reduce_points(m, ops)) ++names[ops[i].name];
  return names;
}

TEST(StepAllReduce, Tp8HasOneAfterEveryRowParallelProjection) {
  const StepModel m = build_step_model("kimi_k3", 8);
  const std::map<std::string, int> want = {{"mla.o_proj", 24}, {"kda.o_proj", 69}, {"shared.down", 92}, {"dense.down", 1}};
  // Per layer one o_proj (MLA or KDA) and one FFN down projection (shared expert or dense): 93 + 93.
  EXPECT_EQ(reduced_names(m, StepVariant::Skinny), want);
  EXPECT_EQ(reduced_names(m, StepVariant::SkinnyFused), want);  // the fusions hold no row-parallel projection
  const auto ops = m.ops(StepVariant::Skinny);
  const auto points = all_reduce_points(m, ops);
  ASSERT_EQ(points.size(), 186u);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const bool row = ops[i].segments[0].parallel == "row";
    EXPECT_EQ(row, std::find(points.begin(), points.end(), i) != points.end()) << ops[i].name;
  }
  for (std::size_t i : points) {  // each sums whole rows of the hidden state, [M, 7168]
    EXPECT_EQ(m.buffers[ops[i].segments[0].y.buffer].name, "hidden") << ops[i].name;
    EXPECT_EQ(ops[i].segments[0].y.n, 7168) << ops[i].name;
  }
  EXPECT_EQ(ops[points[0]].name, "kda.o_proj");  // layer 1: KDA attention, then the dense FFN
  EXPECT_EQ(ops[points[1]].name, "dense.down");
  const std::vector<bool> blocks = row_parallel_blocks(m);
  EXPECT_EQ(std::count(blocks.begin(), blocks.end(), true), 186);
  // The parallel field comes from the model file: replicated and column-parallel projections get none.
  for (const StepOp& op : ops) {
    if (op.name == "moe.latent_up" || op.name == "mla.fused_qkv_a") {
      EXPECT_EQ(op.segments[0].parallel, "repl");
    } else if (op.name == "lm_head" || op.name == "mla.q_b_proj") {
      EXPECT_EQ(op.segments[0].parallel, "col");
    }
  }
}

TEST(StepAllReduce, ScaledModelAndLayoutErrors) {
  const StepModel m = build_step_model("kimi_k3", 2, kScale);
  // 6 layers: MLA at 4 and 6, KDA at 1, 2, 3, 5; dense FFN at 1, shared experts at 2..6.
  EXPECT_EQ(reduced_names(m, StepVariant::Skinny),
            (std::map<std::string, int>{{"mla.o_proj", 2}, {"kda.o_proj", 4}, {"shared.down", 5}, {"dense.down", 1}}));
  auto ops = m.ops(StepVariant::SkinnyFused);
  std::size_t fused = 0;
  while (!ops[fused].fused()) ++fused;
  ops[fused].segments[1].parallel = "row";
  expect_error([&] { all_reduce_points(m, ops); }, "fuses a row-parallel projection with others");
  ops = m.ops(StepVariant::Skinny);
  for (StepOp& op : ops)
    if (op.name == "shared.down") op.segments[0].y.n -= 8;
  expect_error([&] { all_reduce_points(m, ops); }, "expected whole rows, which the all-reduce sums in place");
}

// NCCL's stand-in on the CPU device: one rank, the sum is the data itself; records every call. other_max is what
// the "other ranks" answer to max().
class RecordingComm final : public StepComm {
 public:
  int rank() const override { return 0; }
  int ranks() const override { return 2; }
  void all_reduce(void* data, int64_t count, DType, void*) override { calls.push_back({data, count}); }
  int64_t max(int64_t value, void*) override {
    ++max_calls;
    return std::max(value, other_max);
  }
  std::vector<std::pair<void*, int64_t>> calls;
  int max_calls = 0;
  int64_t other_max = 0;
};

TEST(StepAllReduce, ExecutorRunsTheAllReducesInThePlaceOfTheirOps) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  const auto dev = make_cpu_step_device(m, 8);
  RecordingComm comm;
  StepExecutor ex(m, dev->memory(), StepVariant::Skinny, 8, &comm);
  EXPECT_EQ(ex.all_reduces(), 12);
  dev->reset_activations(3);
  ex.run_all(5, nullptr);
  ASSERT_EQ(comm.calls.size(), 12u);
  for (const auto& [data, count] : comm.calls) {
    EXPECT_EQ(data, dev->memory().buffers[m.buffer_index("hidden")]);
    EXPECT_EQ(count, 5 * m.hidden);  // M rows of the hidden state, contiguous
  }
  comm.calls.clear();
  ex.run_gemms(5, nullptr);
  EXPECT_TRUE(comm.calls.empty());
  ex.run_comm(2, nullptr);
  EXPECT_EQ(comm.calls.size(), 12u);
  StepExecutor alone(m, dev->memory(), StepVariant::Skinny, 8);  // no comm: one GPU, no all-reduce
  EXPECT_EQ(alone.all_reduces(), 0);
}

StepRunOptions cpu_options() {
  StepRunOptions o;
  o.backend = Backend::Cpu;
  o.scale = kScale;
  o.ms = {1, 2};
  o.variants = {StepVariant::Skinny, StepVariant::SkinnyFused};
  o.samples = 1;
  o.sinks = false;
  return o;
}

TEST(StepAllReduce, ProtocolTimesTheCommunicationAndAgreesOnFailures) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  const auto dev = make_cpu_step_device(m, 2);
  RecordingComm comm;
  StepRunOptions o = cpu_options();
  o.comm = &comm;
  const StepReport rep = run_step(o, m, *dev);
  EXPECT_EQ(rep.ranks, 2);
  ASSERT_EQ(rep.results.size(), 4u);
  for (const StepResult& r : rep.results) {
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.all_reduces, 12);
    EXPECT_GT(r.comm_us, 0);
    EXPECT_NEAR(r.comm_share, r.comm_us / r.us, 1e-12);
  }
  EXPECT_EQ(comm.max_calls, 4);  // one agreement on the check per case (the CPU device's time() needs none)
  // Another rank failed its check: this one reports it and times nothing, so that no rank waits in a graph.
  comm.other_max = 1;
  const StepReport failed = run_step(o, m, *dev);
  for (const StepResult& r : failed.results) {
    EXPECT_THAT(r.error, HasSubstr("another rank failed the check of this case (rank 0 passed)"));
    EXPECT_EQ(r.us, 0);
  }
  o.backend = Backend::Cpu;
  expect_error([&] { run_step(o); }, "needs the cuda backend (NCCL)");
}

ordered_json rank_row(int rank, const std::string& variant, double us, double comm_us) {
  return {{"kind", "step"}, {"variant", variant}, {"m", 1},          {"pdl", true},       {"gemms", 766},
          {"bytes", 1000000}, {"checked", 3},   {"max_rel_error", 1e-3 * (rank + 1)}, {"ranks", 2},
          {"rank", rank},     {"scope", "rank"}, {"all_reduces", 186}, {"us", us},       {"spread", 0.01},
          {"floor_us", 40.0 + 4 * rank}, {"efficiency", 0.5}, {"speedup", 1.1}, {"comm_us", comm_us},
          {"comm_share", comm_us / us}, {"sinks_us", 1.0}, {"sinks", ordered_json::array()}};
}

ordered_json doc(std::vector<ordered_json> rows) { return {{"stream_read_tbps", 4.5}, {"rows", rows}}; }

TEST(StepMerge, OverallRowIsTheSlowestRankAndSpeedupIsBetweenOverallRows) {
  const std::vector<ordered_json> docs = {doc({rank_row(0, "cublaslt", 100, 20), rank_row(0, "skinny", 80, 21)}),
                                          doc({rank_row(1, "cublaslt", 110, 25), rank_row(1, "skinny", 70, 22)})};
  const ordered_json rows = merge_rank_rows(docs);
  ASSERT_EQ(rows.size(), 6u);  // 2 ranks x 2 variants, then 2 overall
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rows[i].at("scope"), "rank");
  const ordered_json& lt = rows[4];
  const ordered_json& sk = rows[5];
  EXPECT_EQ(lt.at("scope"), "overall");
  EXPECT_FALSE(lt.contains("rank"));
  EXPECT_FALSE(lt.contains("sinks"));
  EXPECT_EQ(lt.at("us"), 110.0);
  EXPECT_EQ(sk.at("us"), 80.0);
  EXPECT_EQ(sk.at("rank_us"), (ordered_json{80.0, 70.0}));
  EXPECT_EQ(sk.at("comm_us"), 22.0);
  EXPECT_DOUBLE_EQ(sk.at("comm_share").get<double>(), 0.275);
  EXPECT_EQ(sk.at("floor_us"), 44.0);  // the weakest rank's floor
  EXPECT_DOUBLE_EQ(sk.at("efficiency").get<double>(), 0.55);
  EXPECT_EQ(sk.at("cublaslt_us"), 110.0);
  EXPECT_DOUBLE_EQ(sk.at("speedup").get<double>(), 1.375);  // 110 / 80: overall against overall
  EXPECT_EQ(sk.at("checked"), 6);
  EXPECT_DOUBLE_EQ(sk.at("max_rel_error").get<double>(), 2e-3);
  EXPECT_EQ(sk.at("all_reduces"), 186);
}

// Only the cublaslt row is the baseline: cublaslt_torch and cublaslt_fused (before or after it) are measured against it.
TEST(StepMerge, SpeedupIsAgainstTheCublasltRowNotTheOtherCublasltVariants) {
  std::vector<ordered_json> docs;
  for (int r = 0; r < 2; ++r)
    docs.push_back(doc({rank_row(r, "cublaslt_fused", 90, 20), rank_row(r, "cublaslt", 120, 20),
                        rank_row(r, "cublaslt_torch", 100, 20), rank_row(r, "skinny", 80, 20)}));
  const ordered_json rows = merge_rank_rows(docs);
  ASSERT_EQ(rows.size(), 12u);  // 2 ranks x 4 variants, then 4 overall
  for (std::size_t i = 8; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("cublaslt_us"), 120.0) << rows[i].dump();
    EXPECT_DOUBLE_EQ(rows[i].at("speedup").get<double>(), json_round(120.0 / rows[i].at("us").get<double>()))
        << rows[i].dump();
  }
  EXPECT_EQ(rows[8].at("variant"), "cublaslt_fused");
  EXPECT_DOUBLE_EQ(rows[8].at("speedup").get<double>(), json_round(120.0 / 90));
}

TEST(StepMerge, ErrorsOfAnyRankMakeTheOverallRowAnError) {
  ordered_json bad = rank_row(1, "skinny", 0, 0);
  for (const char* f : {"us", "spread", "floor_us", "efficiency", "speedup", "comm_us", "comm_share", "sinks_us", "sinks"})
    bad.erase(f);
  bad["error"] = "relative error 0.5";
  const ordered_json rows = merge_rank_rows({doc({rank_row(0, "skinny", 80, 20)}), doc({bad})});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].at("error"), "rank 1: relative error 0.5");
  EXPECT_FALSE(rows[2].contains("us"));
}

TEST(StepMerge, MissingRowsAndMislabelledRanksAreErrors) {
  expect_error([] { merge_rank_rows({doc({rank_row(0, "skinny", 80, 20)}), doc({rank_row(1, "cublaslt", 80, 20)})}); },
               "rank 1 has no row for skinny m=1, which rank 0 has");
  expect_error([] { merge_rank_rows({doc({rank_row(0, "skinny", 80, 20)}), doc({rank_row(0, "skinny", 80, 20)})}); },
               "rank 1's results hold a row of rank 0 (skinny m=1); expected 1");
  expect_error([] { merge_rank_rows({}); }, "no rank results to merge");
}

TEST(StepRankArgs, BadValuesNameTheValueAndWhatWasExpected) {
  check_rank_args({});
  check_rank_args({8, -1, "", "", "cuda"});
  check_rank_args({8, 7, "id", "out.json", "auto"});
  expect_error([] { check_rank_args({0, -1, "", "", "auto"}); }, "--ranks 0 is outside 1..64");
  expect_error([] { check_rank_args({65, -1, "", "", "auto"}); }, "--ranks 65 is outside 1..64");
  expect_error([] { check_rank_args({2, -1, "", "", "cpu"}); }, "--ranks 2 needs the cuda backend");
  expect_error([] { check_rank_args({1, 0, "id", "out.json", "auto"}); }, "--rank 0 is for the processes that --ranks N");
  expect_error([] { check_rank_args({8, 8, "id", "out.json", "auto"}); }, "--rank 8 is outside 0..7 (--ranks 8)");
  expect_error([] { check_rank_args({8, -3, "id", "out.json", "auto"}); }, "--rank -3 is outside 0..7");
  expect_error([] { check_rank_args({8, 1, "", "out.json", "auto"}); }, "--rank 1 needs --nccl-id FILE");
  expect_error([] { check_rank_args({8, 1, "id", "", "auto"}); }, "--rank 1 needs --json FILE");
  expect_error([] { check_rank_args({8, -1, "id", "", "auto"}); }, "--nccl-id id is for the processes that --ranks N starts");
  check_ranks_runnable(1, false, 0);  // one rank: neither NCCL nor a GPU count matters here
  expect_error([] { check_ranks_runnable(8, false, 8); }, "--ranks 8: skinnygemm was built without NCCL");
  expect_error([] { check_ranks_runnable(8, true, 2); }, "--ranks 8 needs 8 GPUs (one per rank) but 2 are visible");
  expect_error([] { check_ranks_runnable(8, true, 2); }, "expected --ranks <= 2");
  check_ranks_runnable(8, true, 8);
}

using test::run_cli;

TEST(StepRankCli, BadRankOptionsExitWith2AndAClearMessage) {
  int status = -1;
  std::string out = run_cli("step --ranks 0", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("--ranks 0 is outside 1..64"));
  out = run_cli("step --ranks 2 --backend cpu --scale 0.015625 --m 1", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("--ranks 2 needs the cuda backend"));
  out = run_cli("step --rank 1", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("--rank 1 is for the processes that --ranks N (N >= 2) starts"));
  out = run_cli("step --ranks 4 --rank 4 --nccl-id x --json y", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("--rank 4 is outside 0..3 (--ranks 4)"));
  if (step_nccl_built() && cuda::device_count() >= 2) return;  // it would run: the GPU test covers that
  out = run_cli("step --ranks 2 --scale 0.015625 --m 1", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr(step_nccl_built() ? "--ranks 2 needs 2 GPUs (one per rank) but" : "built without NCCL"));
}

}  // namespace
}  // namespace skinnygemm::tune
