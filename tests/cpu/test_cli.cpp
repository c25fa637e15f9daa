// The built `skinnygemm` binary, run as a user would (popen): exit statuses and the messages that matter.
// Kept small (a few seconds on 2 cores): the heavy model-wide check is run by hand / in the README.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "lab/json_round.h"
#include "skinnygemm/table.h"

namespace {

struct CliResult {
  int status = -1;  // exit status
  std::string output;  // stdout and stderr together
};

CliResult run_cli(const std::string& args) {
  CliResult r;
  r.output = skinnygemm::test::run_cli(args, &r.status);
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

// A shipped table that cannot be read (here a number no double holds) is skipped with a warning naming it, and the
// rest serves: before session 36 its out_of_range escaped as a non-Error and every command stopped (exit 2).
TEST(Cli, AnUnreadableShippedTableIsSkippedNamingTheFile) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "tables");
  const auto file = dir.path / "tables" / "broken.json";
  std::ofstream(file) << R"({"meta": {"gpu": "NVIDIA H200", "sms": 132}, "entries": [{"dtype": "bf16", "n": 8, )"
                      << R"("k": 64, "m": 1, "config": "cpu_r4", "us": 1e400}]})";
  int status = -1;
  const std::string out = skinnygemm::test::run_command(
      "SKINNYGEMM_DATA_DIR='" + dir.path.string() + "' '" + SKINNYGEMM_CLI_PATH + "' check --backend cpu --shapes 8x64 --m 1",
      &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("skipping shipped table " + file.string()), std::string::npos) << out;
  EXPECT_NE(out.find("number overflow"), std::string::npos) << out;
}

TEST(Cli, InfoCountsATablesHeuristicMarkersApart) {
  TempDir dir;
  const auto file = dir.path / "refined_table.json";
  std::ofstream(file) << R"({"meta": {"gpu": "NVIDIA H200", "sms": 132}, "entries": [
    {"dtype": "bf16", "n": 64, "k": 256, "m": 1, "config": "cpu_r4", "us": 2.0},
    {"dtype": "bf16", "n": 64, "k": 256, "m": 2, "config": "heuristic", "us": 2.5},
    {"dtype": "bf16", "n": 64, "k": 256, "m": 4, "config": "heuristic", "us": 3.0}]})";
  const CliResult r = run_cli("info --table '" + file.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("entries:  1 configs, 2 heuristic markers (points where tune --refine measured the "
                          "heuristic's pick best)"),
            std::string::npos)
      << r.output;
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

// The README: "2 bad input or another error". CLI11's own codes (105 validation, 106 required, 109 extras)
// must not leak out; --help and --version still exit 0.
TEST(Cli, ParseErrorsExitTwo) {
  for (const char* args : {"frobnicate", "check --backend cpu --m 1", "check --backend cpu --shapes 8x8",
                           "check --backend gpu --shapes 8x8 --m 1", "check --backend tpu --shapes 8x8 --m 1",
                           "check --backend cpu --dtype fp8 --shapes 8x8 --m 1",
                           "check --backend cpu --shapes 8x8 --m 1 --no-such-flag", ""}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.status, 2) << "skinnygemm " << args << "\n" << r.output;
    EXPECT_FALSE(r.output.empty()) << args;  // CLI11's message says what was wrong
  }
  // A GPU family's config forced on the CPU backend is bad input, named before any case runs.
  for (const char* args : {"check --backend cpu --shapes 8x64 --m 1 --config tma",
                           "bench --backend cpu --shapes 8x64 --m 1 --config tma_m8_r64_b2_s4_x8",
                           "check --backend cpu --shapes 8x64 --m 1 --config cublaslt_torch"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("family needs a GPU (--backend cuda)"), std::string::npos) << args << "\n" << r.output;
  }
  // An unknown command is named, with the known ones.
  const CliResult unknown = run_cli("frobnicate --m 1");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("unknown command 'frobnicate'; expected one of info, shapes, check, bench"),
            std::string::npos)
      << unknown.output;
  // Values past what the fields hold (session 36's audit: --sms 4294967296 became 0 and ran; --m 1:999999999999
  // built 10^12 cases before anything else).
  for (const char* args : {"heuristic --device h200 --shapes 8x64 --m 1 --sms 4294967296",
                           "check --backend cpu --shapes 8x64 --m 1:999999999999"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
  }
  EXPECT_NE(run_cli("check --backend cpu --shapes 8x64 --m 1:10000").output.find("has 10000 values; at most 4096"),
            std::string::npos);
  EXPECT_EQ(run_cli("--help").status, 0);
  EXPECT_EQ(run_cli("check --help").status, 0);
  EXPECT_EQ(run_cli("--version").status, 0);
}

// Issue 19: two tuners merging into one table each read the file, measured, and renamed their own merge over
// the other's; the table kept 372 of 600 entries. The merge now happens under a lock on <table>.lock.
TEST(Cli, ConcurrentTunersIntoOneTableKeepEveryEntry) {
  TempDir dir;
  const auto table = dir.path / "shared_table.json";
  const std::string tune = std::string("'") + SKINNYGEMM_CLI_PATH +
                           "' tune --backend cpu --m 1:300 --samples 1 --replays 1 --candidates cpu_r1 --table '" +
                           table.string() + "' --shapes ";
  int status = -1;
  const std::string out = skinnygemm::test::run_command(
      "(" + tune + "8x8 > '" + (dir.path / "a.log").string() + "' 2>&1 & a=$!; " + tune + "16x16 > '" +
          (dir.path / "b.log").string() + "' 2>&1 & b=$!; wait $a; ra=$?; wait $b; rb=$?; echo \"status $ra $rb\")",
      &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("status 0 0"), std::string::npos) << out;
  const skinnygemm::Table t = skinnygemm::Table::load(table.string());
  EXPECT_EQ(t.entries.size(), 600u);
  for (const int64_t n : {8, 16})
    for (const int64_t m : {1, 150, 300})
      EXPECT_TRUE(t.find(skinnygemm::DType::BF16, n, n, m).has_value()) << n << "x" << n << " m=" << m;
  // The lock file goes with its holder: nothing but the table is left in the folder.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a.log", "b.log", "shared_table.json"}));
}

TEST(Cli, TableThatIsADirectoryIsNamed) {
  TempDir dir;
  for (const std::string cmd : {"info --table ", "check --backend cpu --shapes 8x8 --m 1 --table ",
                                "tune --backend cpu --shapes 8x8 --m 1 --samples 1 --replays 1 --table "}) {
    const CliResult r = run_cli(cmd + "'" + dir.path.string() + "'");
    EXPECT_EQ(r.status, 2) << cmd << r.output;
    EXPECT_NE(r.output.find("'" + dir.path.string() + "' is a directory"), std::string::npos) << cmd << r.output;
    EXPECT_EQ(r.output.find("underflow"), std::string::npos) << cmd << r.output;
  }
}

// --migrate-cublaslt-names asks cuBLASLt, so it needs the GPU; it measures nothing, so no measuring option goes with
// it, while a measuring run still needs its shapes and Ms.
TEST(Cli, MigrateCublasltNamesNeedsTheGpuAndNoMeasuringOption) {
  TempDir dir;
  const std::string table = (dir.path / "t.json").string();
  CliResult r = run_cli("tune --backend cpu --migrate-cublaslt-names --table '" + table + "'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--migrate-cublaslt-names asks cuBLASLt on the table's GPU, but this run has the cpu "
                          "backend"),
            std::string::npos)
      << r.output;
  r = run_cli("tune --migrate-cublaslt-names --shapes 8x8 --table '" + table + "'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("excludes"), std::string::npos) << r.output;
  r = run_cli("tune --backend cpu --m 1 --no-store");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("tune needs --shapes and --m"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(table));
}

// An output that cannot be written fails before the first measurement (a long run's results would be lost).
TEST(Cli, UnwritableOutputsFailBeforeMeasuring) {
  TempDir dir;
  const std::string missing = (dir.path / "no_such_folder" / "out").string();
  for (const std::string cmd :
       {"bench --backend cpu --shapes 8x8 --m 1 --samples 1 --replays 1 --json ",
        "bench --backend cpu --shapes 8x8 --m 1 --samples 1 --replays 1 --csv ",
        "tune --backend cpu --shapes 8x8 --m 1 --samples 1 --replays 1 --no-store --json ",
        "tune --backend cpu --shapes 8x8 --m 1 --samples 1 --replays 1 --no-store --heuristic-report "}) {
    for (const std::string& path : {missing, dir.path.string()}) {
      const CliResult r = run_cli(cmd + "'" + path + "'");
      EXPECT_EQ(r.status, 2) << cmd << path << "\n" << r.output;
      EXPECT_NE(r.output.find(path), std::string::npos) << cmd << r.output;
      // Nothing was measured: neither bench's row progress nor tune's point progress.
      EXPECT_EQ(r.output.find("[1/1]"), std::string::npos) << cmd << r.output;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path / "no_such_folder"));
}

// Issue 19: a shape too large for the machine ended in std::bad_alloc; check and bench now check every case
// against the host's memory before the first measurement and name the bytes.
TEST(Cli, HugeShapesFailUpFrontWithTheBytes) {
  // x, w, y (and check's naive copy of y) in bf16 plus the FP64 reference: 14.3 TB.
  for (const auto& [cmd, bytes] :
       {std::pair<std::string, std::string>{"check --backend cpu --shapes 8x8,1000000000x7168 --m 1", "14348000014336"},
        {"bench --backend cpu --shapes 8x8,1000000000x7168 --m 1 --samples 1 --replays 1", "14346000014336"},
        {"tune --backend cpu --shapes 8x8,1000000000x7168 --m 1 --samples 1 --replays 1 --no-store",
         "14346000014336"}}) {
    const CliResult r = run_cli(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("n=1000000000 k=7168"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("(" + bytes + " bytes) of host memory"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("are available"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("bad_alloc"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[1/2]"), std::string::npos) << r.output;  // not even the small shape ran first
  }
}

TEST(Cli, NegativeSeedIsRejectedWithTheValue) {
  const CliResult r = run_cli("check --backend cpu --shapes 8x8 --m 1 --seed -1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--seed: -1 is negative"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("18446744073709551615 "), std::string::npos) << r.output;  // not used as a seed
  EXPECT_EQ(run_cli("check --backend cpu --shapes 8x8 --m 1 --seed 7").status, 0);
}

TEST(Cli, SweepGlobMatchingNothingIsAnError) {
  const CliResult r = run_cli("bench --backend cpu --shapes 8x8 --m 1 --samples 1 --replays 1 --sweep 'zzz*'");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--sweep 'zzz*' matches no config of the cpu backend"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cpu_r1"), std::string::npos) << r.output;  // what it could have named
  EXPECT_EQ(r.output.find("[1/1]"), std::string::npos) << r.output;   // before measuring
  const CliResult ok = run_cli("bench --backend cpu --shapes 8x8 --m 1 --samples 1 --replays 1 --sweep 'cpu_r*'");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("cpu_r8"), std::string::npos) << ok.output;
}

// CPU rows: GB/s on the console (TB/s read as 0.0102), the GPU-only CSV columns empty (not 0), and every float
// of the JSON rows rounded by json_round (rel_error was written with 17 digits).
TEST(Cli, BenchCpuUnitsEmptyGpuColumnsAndRoundedJson) {
  TempDir dir;
  const auto json = dir.path / "bench.json";
  const auto csv = dir.path / "bench.csv";
  const CliResult r = run_cli("bench --backend cpu --shapes 144x7168 --m 1 --samples 1 --replays 1 --json '" +
                              json.string() + "' --csv '" + csv.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("GB/s"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("TB/s"), std::string::npos) << r.output;

  std::ifstream c(csv);
  std::string header, row;
  std::getline(c, header);
  std::getline(c, row);
  std::vector<std::string> names, cells;
  for (auto [text, out] : {std::pair<std::string*, std::vector<std::string>*>{&header, &names}, {&row, &cells}}) {
    std::stringstream ss(*text);
    for (std::string cell; std::getline(ss, cell, ',');) out->push_back(cell);
    if (!text->empty() && text->back() == ',') out->push_back("");
  }
  ASSERT_EQ(names.size(), cells.size()) << header << "\n" << row;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool gpu_only = names[i].rfind("stream_read", 0) == 0 || names[i] == "efficiency" ||
                          names[i].rfind("cublaslt", 0) == 0 || names[i].rfind("speedup", 0) == 0;
    if (gpu_only) {
      EXPECT_EQ(cells[i], "") << names[i] << " in " << row;
    }
    if (names[i] == "us" || names[i] == "tbps" || names[i] == "rel_error") {
      EXPECT_NE(cells[i], "") << names[i];
    }
  }

  std::ifstream j(json);
  const auto doc = nlohmann::json::parse(j);
  ASSERT_EQ(doc.at("rows").size(), 1u);
  for (const auto& [key, value] : doc.at("rows")[0].items())
    if (value.is_number_float()) {
      EXPECT_EQ(value.get<double>(), skinnygemm::json_round(value.get<double>())) << key << " = " << value.dump();
    }
  EXPECT_GT(doc.at("rows")[0].at("tbps").get<double>(), 0);  // 4 significant digits, not 3 decimals (0.000)
}

namespace {
// The host-overhead command runs its four paths and writes its rows (few calls: this checks the command, not the
// numbers, which docs/benchmarks/cpu/host_overhead.md records).
TEST(Cli, OverheadWritesEveryPath) {
  TempDir dir;
  const std::string json = (dir.path / "overhead.json").string();
  const CliResult r = run_cli("overhead --samples 3 --calls 50 --json '" + json + "'");
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.output;  // 1: over a target on a loaded machine
  for (const char* path : {"gemm_cache_hit", "plan_run", "validate_operands", "select_cache_hit", "fused_run"})
    EXPECT_NE(r.output.find(path), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(json));
}
}  // namespace
