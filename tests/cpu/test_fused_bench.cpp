// The fused-projection benchmark (lab/fused_bench*.cpp, `skinnygemm fused`) on the CPU backend: the Kimi-K3
// fusions as segment lists (KDA's [f_a|b] 140 rows padded to 144), the protocol's rows on a scaled model, a failed
// check reported and not timed, bad input named, and the CLI end to end with its JSON fields.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "lab/fused_bench_device.h"

namespace skinnygemm::tune {
namespace {

using ::testing::HasSubstr;

constexpr double kScale = 1.0 / 16;  // K 448; KDA [f_a|b] 9 rows padded to 16

std::vector<std::pair<std::string, int64_t>> segment_rows(const FusedSpec& spec) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const FusedSegmentSpec& s : spec.segments) out.emplace_back(s.name, s.n);
  return out;
}

TEST(FusedSpecs, KimiTp8FusionsWithKdaPadding) {
  const std::vector<FusedSpec> all = model_fusions("kimi_k3", 8);
  ASSERT_EQ(all.size(), 4u);
  using Rows = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(all[0].name, "mla.qkv_a_g");
  EXPECT_EQ(segment_rows(all[0]), (Rows{{"mla.fused_qkv_a", 2112}, {"mla.g_proj", 1536}}));
  EXPECT_EQ(all[0].merged_n(), 3648);
  EXPECT_EQ(all[1].name, "kda.qkvg_fab");
  EXPECT_EQ(segment_rows(all[1]), (Rows{{"kda.qkvg", 6144}, {"kda.fab", 140}}));
  EXPECT_EQ(all[1].segments[1].pad_to, 8);
  EXPECT_EQ(all[1].segments[1].padded(), 144);
  EXPECT_EQ(all[1].rows(), 6284);
  EXPECT_EQ(all[1].merged_n(), 6288);
  EXPECT_EQ(segment_rows(all[2]), (Rows{{"moe.router", 896}, {"moe.latent_down", 3584}}));
  EXPECT_EQ(all[3].name, "moe.router_latent_down_shared");
  EXPECT_EQ(all[3].merged_n(), 6016);
  for (const FusedSpec& f : all) EXPECT_EQ(f.k, 7168) << f.name;
  // TP4: [f_a|b] is 152 rows, already a multiple of 8.
  EXPECT_EQ(model_fusions("kimi_k3", 4, {"kda.qkvg_fab"})[0].merged_n(), 12440);
}

TEST(FusedSpecs, SelectionScaleAndBadInput) {
  const std::vector<FusedSpec> two = model_fusions("kimi_k3", 8, {"moe.router_latent_down", "mla.qkv_a_g"});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].name, "moe.router_latent_down");  // the order asked for
  const FusedSpec kda = model_fusions("kimi_k3", 8, {"kda.qkvg_fab"}, kScale)[0];
  EXPECT_EQ(kda.k, 448);
  EXPECT_EQ(segment_rows(kda), (std::vector<std::pair<std::string, int64_t>>{{"kda.qkvg", 384}, {"kda.fab", 9}}));
  EXPECT_EQ(kda.merged_n(), 400);  // 9 rows padded to 16: the scaled run still exercises the padding
  test::expect_error([] { model_fusions("kimi_k3", 8, {"mla.nope"}); }, {"unknown fusion 'mla.nope'", "kda.qkvg_fab"});
  test::expect_error([] { model_fusions("kimi_k3", 8, {"mla.qkv_a_g", "mla.qkv_a_g"}); }, {"listed twice"});
  test::expect_error([] { model_fusions("kimi_k3", 8, {}, 0.0); }, {"scale 0", "(0, 1]"});
  test::expect_error([] { model_fusions("kimi_k3", 3); }, {"tp 3", "available tp"});
}

FusedBenchOptions cpu_options(std::vector<int64_t> ms) {
  FusedBenchOptions o;
  o.backend = Backend::Cpu;
  o.ms = std::move(ms);
  o.samples = 1;
  o.replays = 1;
  return o;
}

TEST(FusedBench, CpuRowsAgreeBitwiseAndCarryEveryField) {
  const std::vector<FusedSpec> specs = model_fusions("kimi_k3", 8, {"mla.qkv_a_g", "kda.qkvg_fab"}, kScale);
  std::vector<std::string> progress;
  FusedBenchOptions o = cpu_options({1, 5});
  o.progress = [&](const std::string& line) { progress.push_back(line); };
  const std::vector<FusedRow> rows = run_fused_bench(specs, o);
  ASSERT_EQ(rows.size(), 4u);
  ASSERT_EQ(progress.size(), 4u);
  EXPECT_THAT(progress[3], HasSubstr("[4/4] kda.qkvg_fab 400x448 m=5"));
  for (const FusedRow& r : rows) {
    SCOPED_TRACE(r.name + " m=" + std::to_string(r.m));
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.rung, "fused GEMM");  // the CPU's best rung for separate destinations
    EXPECT_THAT(r.reason, HasSubstr("scratch output"));
    ASSERT_EQ(r.configs.size(), 1u);
    EXPECT_EQ(r.check_ratio, 0.0);  // the CPU backend's fused GEMM gives the separate calls' bits
    EXPECT_GT(r.us, 0);
    EXPECT_GT(r.separate_us, 0);
    EXPECT_GT(r.contiguous_us, 0);
    EXPECT_EQ(r.stream_read_us, 0);  // GPU-only columns
    EXPECT_EQ(r.cublaslt_us, 0);
    ASSERT_EQ(r.segments.size(), 2u);
    int64_t outputs = 0;
    for (const FusedSegmentResult& s : r.segments) {
      EXPECT_GT(s.us, 0) << s.name;
      EXPECT_THAT(s.config, HasSubstr("cpu_r"));
      outputs += s.n * r.m;
    }
    EXPECT_EQ(r.checked, 2 * outputs);  // run() and run_contiguous() against the separate calls
  }
  EXPECT_EQ(rows[2].n, 400);
  EXPECT_EQ(rows[2].segments[1].pad_to, 8);
  EXPECT_THAT(rows[2].reason, HasSubstr("packed copy"));

  const nlohmann::json doc = nlohmann::json::parse(fused_results_json(BenchMeta{}, rows));
  ASSERT_EQ(doc.at("rows").size(), 4u);
  const nlohmann::json& kda = doc.at("rows")[3];
  for (const char* f : {"kind", "name", "segments", "n", "k", "m", "us", "spread", "separate_us", "ratio", "rung",
                        "reason", "configs", "contiguous_us", "check_ratio", "checked"})
    EXPECT_TRUE(kda.contains(f)) << f << " in " << kda.dump();
  EXPECT_EQ(kda.at("kind"), "fused");
  EXPECT_EQ(kda.at("segments")[1].at("name"), "kda.fab");
  EXPECT_EQ(kda.at("segments")[1].at("n"), 9);
  EXPECT_EQ(kda.at("segments")[1].at("pad_to"), 8);
  EXPECT_FALSE(kda.contains("stream_read_us"));
  EXPECT_FALSE(kda.contains("cublaslt_us"));
}

// The CPU device, except that one read-back comes back with 1000 added to its second output, and (optionally) the
// first timing throws.
class CorruptingDevice final : public FusedBenchDevice {
 public:
  CorruptingDevice(const FusedSpec& spec, int64_t max_m, int corrupt_read)
      : inner_(make_cpu_fused_device(spec, max_m)), corrupt_read_(corrupt_read) {}
  std::string name() const override { return inner_->name(); }
  Backend backend() const override { return inner_->backend(); }
  void* stream() const override { return inner_->stream(); }
  int copies() const override { return inner_->copies(); }
  int64_t l2_bytes() const override { return 0; }
  const void* x() const override { return inner_->x(); }
  const void* weights(int copy) const override { return inner_->weights(copy); }
  void* output(int copy, std::size_t segment) const override { return inner_->output(copy, segment); }
  void* merged_output(int copy) const override { return inner_->merged_output(copy); }
  void poison() override { inner_->poison(); }
  std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) override {
    std::vector<uint16_t> v = inner_->read(ptr, m, n, ld);
    if (++reads_ == corrupt_read_) v.at(1) = float_to_half(DType::BF16, half_to_float(DType::BF16, v.at(1)) + 1000);
    return v;
  }
  FusedTiming time(const std::function<void(int)>& launch, int samples, int replays) override {
    if (++timings_ == 1 && throw_first_timing_) SKINNYGEMM_FAIL("synthetic failure of the first timing");
    return inner_->time(launch, samples, replays);
  }
  double stream_read_us(int64_t bytes, int samples, int replays) override {
    return inner_->stream_read_us(bytes, samples, replays);
  }
  int cublaslt_algos(const Problem& p, const void* x, const void* w, const void* y) override {
    return inner_->cublaslt_algos(p, x, w, y);
  }
  int timings_ = 0;
  bool throw_first_timing_ = false;

 private:
  std::unique_ptr<FusedBenchDevice> inner_;
  int corrupt_read_;
  int reads_ = 0;
};

TEST(FusedBench, AFailedCheckIsReportedAndNotTimed) {
  const FusedSpec spec = model_fusions("kimi_k3", 8, {"mla.qkv_a_g"}, kScale)[0];
  // Reads 1-2: the separate calls' outputs (the reference); read 3: run()'s first segment.
  CorruptingDevice device(spec, 2, 3);
  const std::vector<FusedRow> rows = bench_fusion(spec, device, cpu_options({2}));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(rows[0].error,
              HasSubstr("mla.qkv_a_g m=2: run() differs from the separate calls: mla.fused_qkv_a y[0][1]"));
  EXPECT_GT(rows[0].check_ratio, 1);
  EXPECT_EQ(rows[0].us, 0);
  EXPECT_EQ(device.timings_, 0);
  EXPECT_EQ(nlohmann::json::parse(fused_results_json(BenchMeta{}, rows)).at("rows").size(), 0u);
}

TEST(FusedBench, AnErrorInOnePointLeavesTheOthersMeasured) {
  const FusedSpec spec = model_fusions("kimi_k3", 8, {"moe.router_latent_down"}, kScale)[0];
  CorruptingDevice device(spec, 2, -1);
  device.throw_first_timing_ = true;
  const std::vector<FusedRow> rows = bench_fusion(spec, device, cpu_options({1, 2}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[0].error, HasSubstr("synthetic failure of the first timing"));
  EXPECT_EQ(rows[0].us, 0);
  EXPECT_TRUE(rows[1].error.empty()) << rows[1].error;
  EXPECT_GT(rows[1].us, 0);
}

TEST(FusedBench, BadOptionsAreNamed) {
  const std::vector<FusedSpec> specs = model_fusions("kimi_k3", 8, {"mla.qkv_a_g"}, kScale);
  test::expect_error([&] { run_fused_bench(specs, cpu_options({1, 65})); }, {"M=65", "1..64"});
  FusedBenchOptions o = cpu_options({1});
  o.samples = 0;
  test::expect_error([&] { run_fused_bench(specs, o); }, {"samples=0"});
  test::expect_error([&] { run_fused_bench({}, cpu_options({1})); }, {"no fusions"});
}

using test::run_cli;

TEST(FusedCli, CpuEndToEndWritesFusedRows) {
  const auto dir = test::fresh_test_dir("fused");
  const std::string file = (dir / "fused.json").string();
  int status = -1;
  const std::string out = run_cli("fused --backend cpu --model kimi_k3 --tp 8 --scale 0.0625 --m 1,3 --samples 1 "
                                  "--replays 1 --json '" + file + "'", &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("NOTICE: CPU backend"));
  EXPECT_THAT(out, HasSubstr("kda.fab 9 (padded to 16)"));
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  EXPECT_EQ(doc.at("meta").at("gpu"), "cpu");
  EXPECT_THAT(doc.at("meta").at("command").get<std::string>(), HasSubstr("fused --backend cpu"));
  ASSERT_EQ(doc.at("rows").size(), 8u);  // every Kimi-K3 fusion by default, two M each
  for (const auto& row : doc.at("rows")) {
    EXPECT_EQ(row.at("kind"), "fused");
    EXPECT_GE(row.at("segments").size(), 2u);
    for (const auto& s : row.at("segments"))
      for (const char* f : {"name", "n", "us", "config"}) EXPECT_TRUE(s.contains(f)) << f << " in " << s.dump();
    for (const char* f : {"name", "n", "k", "m", "us", "spread", "separate_us", "rung", "configs", "check_ratio"})
      EXPECT_TRUE(row.contains(f)) << f << " in " << row.dump();
    EXPECT_GT(row.at("separate_us").get<double>(), 0);
  }
  std::filesystem::remove_all(dir);
}

TEST(FusedCli, BadInputNamesTheValue) {
  int status = -1;
  std::string out = run_cli("fused --backend cpu --scale 0.0625 --m 1 --fusions mla.qkv_a_g,nope", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("unknown fusion 'nope'"));
  EXPECT_THAT(out, HasSubstr("moe.router_latent_down"));  // the choices
  out = run_cli("fused --backend cpu --scale 0.0625 --m 1 --fusions mla.qkv_a_g,", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("empty item"));
  out = run_cli("fused --backend cpu --scale 0.0625 --m 0", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("M spec '0'"));
  out = run_cli("fused --backend cpu --scale 0.0625 --m 128", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("M=128"));
  out = run_cli("fused --backend cpu --scale 1.5 --m 1", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("scale 1.5"));
  out = run_cli("fused --backend cpu --tp 5 --m 1", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_THAT(out, HasSubstr("tp 5"));
}

}  // namespace
}  // namespace skinnygemm::tune
