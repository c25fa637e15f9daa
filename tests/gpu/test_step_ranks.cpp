// The step across GPUs (docs/step.md, "Several GPUs") on a scaled-down model: NCCL all-reduces inside the
// step's CUDA graph with a one-rank communicator (one GPU is enough), and `skinnygemm step --ranks 2` end to end
// when two GPUs are visible. Each skips with its reason without a GPU, without NCCL, or with one GPU.
#include <gmock/gmock.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gpu/gpu_util.h"
#include "lab/step_comm.h"
#include "lab/step_runner.h"

namespace skinnygemm::tune {
namespace {

using ::testing::HasSubstr;

#define SKIP_WITHOUT_NCCL()                                                                                    \
  do {                                                                                                         \
    SKIP_WITHOUT_GPU();                                                                                        \
    if (!step_nccl_built()) GTEST_SKIP() << "built without NCCL (SKINNYGEMM_NCCL found no nccl.h + libnccl)"; \
  } while (0)

TEST(GpuStepRanks, OneRankCommunicatorRunsItsAllReducesInTheStepGraph) {
  SKIP_WITHOUT_NCCL();
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const std::unique_ptr<StepComm> comm = make_nccl_step_comm(0, 1, nccl_unique_id_hex(), DType::BF16);
  StepRunOptions o;
  o.backend = Backend::Cuda;
  o.tp = 8;
  o.scale = 1.0 / 16;
  o.ms = {1, 4};
  o.samples = 5;
  o.sinks = false;
  o.comm = comm.get();
  const StepReport rep = run_step(o);
  const StepModel m = build_step_model("kimi_k3", 8, o.scale);
  const int points = static_cast<int>(all_reduce_points(m, m.ops_unfused).size());
  ASSERT_EQ(rep.results.size(), 6u);
  for (const StepResult& r : rep.results) {
    EXPECT_EQ(r.error, "") << r.name << " m=" << r.m;
    EXPECT_EQ(r.all_reduces, points);
    EXPECT_GT(r.us, 0) << r.name;
    EXPECT_GE(r.comm_us, 0) << r.name;  // one rank: NCCL may have nothing to do for an in-place sum
    EXPECT_GT(r.checked, 0) << r.name;
  }
}

TEST(GpuStepRanks, TwoRanksThroughTheCli) {
  SKIP_WITHOUT_NCCL();
  if (cuda::device_count() < 2)
    GTEST_SKIP() << "needs 2 GPUs for --ranks 2 and " << cuda::device_count() << " is visible";
  const auto file = std::filesystem::temp_directory_path() / ("skinnygemm_step_ranks_" + std::to_string(::getpid()) + ".json");
  int status = -1;
  const std::string out = test::run_command(std::string("'") + SKINNYGEMM_CLI_PATH +
                                                "' step --ranks 2 --tp 2 --scale 0.0625 --m 1,4 --pdl on --no-sinks "
                                                "--json '" + file.string() + "'",
                                            &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("across 2 GPUs"));
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  std::filesystem::remove(file);
  const StepModel m = build_step_model("kimi_k3", 2, 0.0625);
  const int points = static_cast<int>(all_reduce_points(m, m.ops_unfused).size());
  int per_rank[2] = {0, 0}, overall = 0;
  for (const auto& row : doc.at("rows")) {
    EXPECT_EQ(row.at("kind"), "step");
    EXPECT_EQ(row.at("ranks"), 2);
    EXPECT_EQ(row.at("all_reduces"), points);
    EXPECT_FALSE(row.contains("error")) << row.dump();
    EXPECT_GT(row.at("comm_us").get<double>(), 0) << row.dump();
    if (row.at("scope") == "rank") {
      ++per_rank[row.at("rank").get<int>()];
      continue;
    }
    ++overall;
    EXPECT_EQ(row.at("rank_us").size(), 2u);
    EXPECT_GT(row.at("speedup").get<double>(), 0) << row.dump();
  }
  EXPECT_EQ(per_rank[0], 12);  // the 6 default variants on cuda x 2 M
  EXPECT_EQ(per_rank[1], 12);
  EXPECT_EQ(overall, 12);
}

}  // namespace
}  // namespace skinnygemm::tune
