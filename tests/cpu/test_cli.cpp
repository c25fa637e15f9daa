// The built `skinnygemm` binary, run as a user would (popen): exit statuses and the messages that matter.
// Kept small (a few seconds on 2 cores): the heavy model-wide check is run by hand / in the README.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/test_util.h"

namespace {

struct CliResult {
  int status = -1;  // exit status
  std::string output;  // stdout and stderr together
};

CliResult run_cli(const std::string& args) {
  CliResult r;
  r.output = skinnygemm::test::run_command(std::string("'") + SKINNYGEMM_CLI_PATH + "' " + args, &r.status);
  return r;
}

// A temporary folder removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("skinnygemm_cli_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

TEST(Cli, CheckCpuPassesOnSmallShapes) {
  const CliResult r = run_cli("check --backend cpu --shapes 144x7168,1536x128 --m 1:3");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("144x7168 m=3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("6/6 cases passed"), std::string::npos) << r.output;
}

TEST(Cli, InfoWithCorruptTableFailsNamingTheFile) {
  TempDir dir;
  const auto file = dir.path / "corrupt_table.json";
  std::ofstream(file) << "{\"meta\": {\"gpu\": \"NVIDIA H200\",\n  \"entries\": [oops";
  const CliResult r = run_cli("info --table '" + file.string() + "'");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(file.string()), std::string::npos) << r.output;
}

TEST(Cli, InfoShowsBuildAndDevices) {
  const CliResult r = run_cli("info");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("CUDA backend"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cpu:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kimi_k3"), std::string::npos) << r.output;
}

TEST(Cli, BadShapeSpecFailsWithTheMessage) {
  const CliResult r = run_cli("check --backend cpu --shapes 1536by7168 --m 1");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1536by7168"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NxK"), std::string::npos) << r.output;
  const CliResult model = run_cli("check --backend cpu --shapes model:llama9:tp8 --m 1");
  EXPECT_NE(model.status, 0) << model.output;
  EXPECT_NE(model.output.find("llama9"), std::string::npos) << model.output;
  EXPECT_NE(model.output.find("kimi_k3"), std::string::npos) << model.output;  // the available models
  const CliResult m = run_cli("check --backend cpu --shapes 144x7168 --m 4:1");
  EXPECT_NE(m.status, 0) << m.output;
  EXPECT_NE(m.output.find("'4:1'"), std::string::npos) << m.output;
}

TEST(Cli, ShapesPrintsTheStepTotals) {
  TempDir dir;
  const auto json = dir.path / "shapes.json";
  const CliResult r = run_cli("shapes --model kimi_k3 --tp 8 --json '" + json.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("3648x7168"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("766 GEMM launches"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(json));
}

TEST(Cli, BenchCpuWritesResults) {
  TempDir dir;
  const auto json = dir.path / "bench.json";
  const auto csv = dir.path / "bench.csv";
  const CliResult r = run_cli("bench --backend cpu --shapes 144x7168 --m 1,2 --samples 1 --replays 1 --json '" +
                        json.string() + "' --csv '" + csv.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("NOTICE"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[2/2] 144x7168 m=2"), std::string::npos) << r.output;
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"rows\""), std::string::npos) << text;
  EXPECT_NE(text.find("bench --backend cpu"), std::string::npos) << text;  // meta.command
  EXPECT_TRUE(std::filesystem::exists(csv));
}

TEST(Cli, UnknownSubcommandOrMissingOptionIsAnError) {
  EXPECT_NE(run_cli("frobnicate").status, 0);
  EXPECT_NE(run_cli("check --backend cpu --m 1").status, 0);  // --shapes is required
  EXPECT_NE(run_cli("check --backend gpu --shapes 8x8 --m 1").status, 0);
}

namespace {
// The host-overhead command runs its four paths and writes its rows (few calls: this checks the command, not the
// numbers, which docs/benchmarks/cpu/host_overhead.md records).
TEST(Cli, OverheadWritesEveryPath) {
  TempDir dir;
  const std::string json = (dir.path / "overhead.json").string();
  const CliResult r = run_cli("overhead --samples 3 --calls 50 --json '" + json + "'");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.output;  // 1: over a target on a loaded machine
  for (const char* path : {"gemm_cache_hit", "plan_run", "select_cache_hit", "fused_run"})
    EXPECT_NE(r.output.find(path), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(json));
}
}  // namespace
