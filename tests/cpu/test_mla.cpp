// The MLA layer benchmark (lab/mla*.cpp) and the fused-projection policy (src/runtime/projection_policy.cpp) on
// the CPU: dimensions from the model file, variants, context splits, the layer end to end on scaled dimensions
// against the FP64 reference for every skinny variant (the same code path as the GPU: FusedProjection run /
// run_split_deferred, the attention's split-and-combine algorithm), the protocol's report, the policy file round
// trip and its nearest-point rules, and the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "lab/device_presets.h"
#include "lab/mla_runner.h"

namespace skinnygemm::tune {
namespace {

using ::testing::HasSubstr;

constexpr double kScale = 1.0 / 16;  // hidden 448, 2 heads, q_lora 96, kv_lora 32, rope 8, nope 8, v 8

template <typename F>
void expect_error(F&& f, const std::string& fragment) {
  test::expect_error(std::forward<F>(f), {fragment});
}

TEST(MlaDims, KimiK3Tp8MatchesTheReference) {
  const MlaDims d = mla_dims("kimi_k3", 8);
  EXPECT_EQ(d.heads, 12);  // 96 / 8
  EXPECT_EQ(d.hidden, 7168);
  EXPECT_EQ(d.qkv_a_rows(), 2112);  // q_lora 1536 + kv_lora 512 + rope 64
  EXPECT_EQ(d.g_rows(), 1536);
  EXPECT_EQ(d.a_width(), 3648);     // the fused qkv_a + g of the model file
  EXPECT_EQ(d.q_width(), 2304);     // 12 x (128 + 64)
  EXPECT_EQ(d.cache_row(), 576);
  EXPECT_EQ(d.gated_width(), 1536);
  EXPECT_NEAR(d.softmax_scale(), 1 / std::sqrt(192.0), 1e-15);
  EXPECT_EQ(d.name(), "kimi_k3.mla.tp8");
  const MlaWeights w = mla_weight_layout(d);
  EXPECT_EQ(w.read_bytes, 2 * (3648 * 7168 + 2304 * 1536 + 7168 * 1536 + 2 * 12 * 512 * 128 + 7168 + 1536 + 512));
  EXPECT_EQ(w.qkv_a_g % 256 + w.q_b % 256 + w.o % 256 + w.uk % 256 + w.uv % 256, 0);
  EXPECT_EQ(mla_cache_bytes(d, 64, 131072), int64_t{64} * 131072 * 576 * 2);  // 9.7 GB: the largest point
  EXPECT_EQ(mla_dims("kimi_k3", 4).heads, 24);
  expect_error([] { mla_dims("kimi_k3", 5); }, "96 attention heads do not split over tp=5");
  expect_error([] { mla_dims("kimi_k3", 8, 0); }, "scale 0 must be in (0, 1]");
  const MlaDims s = mla_dims("kimi_k3", 8, kScale);
  EXPECT_EQ(s.heads, 2);
  EXPECT_EQ(s.hidden, 448);
  EXPECT_EQ(s.kv_lora % 8 + s.rope % 8 + s.nope % 8 + s.q_lora % 8, 0);
}

TEST(MlaVariants, NamesModesAndErrors) {
  const auto all = parse_mla_variants("cublaslt,skinny_separate,skinny_fused,skinny_side_gate");
  ASSERT_EQ(all.size(), 4u);
  for (MlaVariant v : all) {
    const std::string name = mla_variant_name(v);
    EXPECT_TRUE(name.rfind("cublaslt", 0) == 0 || name.rfind("skinny", 0) == 0) << name;  // docs/measuring.md
    if (auto mode = mla_variant_mode(v)) {
      EXPECT_EQ(mla_variant_for(*mode), v);
    }
  }
  EXPECT_FALSE(mla_variant_mode(MlaVariant::Cublaslt).has_value());
  EXPECT_EQ(*mla_variant_mode(MlaVariant::SkinnySideGate), FusedMode::SideStream);
  expect_error([] { parse_mla_variants("skinny_fused,fast"); }, "unknown mla variant 'fast'");
  expect_error([] { parse_mla_variants("skinny_fused,skinny_fused"); }, "listed twice");
  EXPECT_EQ(parse_contexts("512,2048,131072"), (std::vector<int64_t>{512, 2048, 131072}));
  expect_error([] { parse_contexts("512,2k"); }, "context '2k' in '512,2k': expected a positive whole number");
  expect_error([] { parse_contexts("0"); }, "context '0'");
  expect_error([] { parse_contexts("512,512"); }, "listed twice");
}

TEST(MlaSplit, ChunksCoverTheContextAndNoneIsEmpty) {
  for (int64_t slots : {8, 264})
    for (int64_t m : {1, 3, 16, 64})
      for (int64_t context : {1, 31, 32, 33, 512, 1000, 8192, 131072}) {
        const MlaSplit s = mla_split(m, context, 1, slots, 32);
        EXPECT_EQ(s.chunk % 32, 0);
        EXPECT_GE(s.splits, 1);
        EXPECT_LE(s.splits, 256);
        EXPECT_GE(s.splits * s.chunk, context);             // covered
        EXPECT_LT((s.splits - 1) * s.chunk, context);       // the last chunk starts inside: none empty
        EXPECT_LE(m * s.splits, 4 * slots + m) << m << " " << context;  // the GPU's scratch bound
      }
  EXPECT_EQ(mla_split(1, 131072, 1, 264, 32).splits, 256);  // one sequence: many chunks to fill the GPU
  EXPECT_EQ(mla_split(64, 131072, 1, 264, 32).splits, 17);  // ~4 waves of 264 CTAs over 64 sequences
  expect_error([] { mla_split(0, 512, 1, 8, 32); }, "every argument must be >= 1");
}

// Every skinny variant's layer against the FP64 reference on poisoned activations, at contexts around the
// attention's tile (32) and chunk boundaries; the three variants give the same bits on the CPU (its GEMM's sums do
// not depend on N), so fusing and the deferred side stream change nothing but the schedule.
TEST(MlaCpu, EveryVariantMatchesTheReference) {
  const MlaDims d = mla_dims("kimi_k3", 8, kScale);
  const auto dev = make_cpu_mla_device(d, 8);
  std::vector<MlaExecutor> ex;
  for (MlaVariant v : {MlaVariant::SkinnySeparate, MlaVariant::SkinnyFused, MlaVariant::SkinnySideGate})
    ex.emplace_back(d, *dev, v, 0, 8);
  for (int64_t m : {1, 5})
    for (int64_t context : {1, 31, 33, 200}) {
      dev->prepare(m, context, 11);
      dev->reset_activations(3);
      const std::vector<double> want = dev->reference(m, context);
      std::vector<uint16_t> first;
      for (MlaExecutor& e : ex) {
        dev->reset_activations(3);
        e.run(m, context, 0);
        const auto got = dev->read(dev->memory().buffers[kMlaOut], m, d.hidden, d.hidden);
        const double err = mla_relative_error(got, want, m, d.hidden, d.dtype);
        EXPECT_LE(err, kMlaTolerance) << mla_variant_name(e.variant()) << " m=" << m << " context=" << context;
        if (first.empty()) first = got;
        EXPECT_EQ(got, first) << mla_variant_name(e.variant()) << " m=" << m << " context=" << context;
        // The appended cache slot holds the new token (it was poisoned before the run).
        const auto slot = dev->read(dev->memory().cache + (context - 1) * d.cache_row() * 2, m, d.cache_row(),
                                    context * d.cache_row());
        for (uint16_t v : slot) ASSERT_TRUE(std::isfinite(bf16_to_float(v)));
      }
    }
}

TEST(MlaCpu, TheCheckFailsWhenTheAttentionReadsOtherRows) {
  // The check must be able to fail: the same x over another cache (a layer reading the wrong rows) is off by far
  // more than the tolerance, and an unwritten (NaN) output is an error naming the element.
  const MlaDims d = mla_dims("kimi_k3", 8, kScale);
  const auto dev = make_cpu_mla_device(d, 4);
  MlaExecutor ex(d, *dev, MlaVariant::SkinnyFused, 0, 4);
  dev->prepare(2, 64, 5);
  dev->reset_activations(9);
  const std::vector<double> want = dev->reference(2, 64);
  ex.run(2, 64, 0);
  auto got = dev->read(dev->memory().buffers[kMlaOut], 2, d.hidden, d.hidden);
  EXPECT_LE(mla_relative_error(got, want, 2, d.hidden, d.dtype), kMlaTolerance);
  got[5] = 0xFFFF;  // NaN
  expect_error([&] { mla_relative_error(got, want, 2, d.hidden, d.dtype); }, "layer output y[0,5] = ");
  dev->prepare(2, 64, 6);
  dev->reset_activations(9);
  ex.run(2, 64, 0);
  got = dev->read(dev->memory().buffers[kMlaOut], 2, d.hidden, d.hidden);
  EXPECT_GT(mla_relative_error(got, want, 2, d.hidden, d.dtype), 10 * kMlaTolerance);
}

TEST(MlaRun, CpuReportPicksAndPolicyRoundTrip) {
  MlaRunOptions o;
  o.backend = Backend::Cpu;
  o.scale = kScale;
  o.ms = {1, 3};
  o.contexts = {40, 100};
  o.variants = {MlaVariant::SkinnySeparate, MlaVariant::SkinnyFused, MlaVariant::SkinnySideGate};
  o.samples = 1;
  const MlaReport rep = run_mla(o);
  ASSERT_EQ(rep.results.size(), 12u);
  EXPECT_TRUE(rep.skipped.empty());
  for (const MlaResult& r : rep.results) {
    EXPECT_EQ(r.error, "");
    EXPECT_TRUE(r.checked);
    EXPECT_LE(r.max_rel_error, kMlaTolerance);
    EXPECT_GT(r.us, 0);
    EXPECT_GT(r.attention_us, 0);
    EXPECT_EQ(r.floor_us, 0);  // no probe on the CPU
    EXPECT_EQ(r.bytes, mla_layer_bytes(rep.dims, r.m, r.context));
  }
  ASSERT_EQ(rep.picks.size(), 4u);
  for (const MlaPick& p : rep.picks) {
    double best = 1e300;
    for (const MlaResult& r : rep.results)
      if (r.m == p.m && r.context == p.context) best = std::min(best, r.us);
    EXPECT_EQ(p.us, best);  // the pick is the fastest variant measured at its point
    EXPECT_GE(p.margin, 0);
  }
  // The policy file over a larger grid: unmeasured points take the nearest measured one.
  const auto dir = test::fresh_test_dir("mla");
  const std::string file = (dir / "policy.json").string();
  std::ofstream(file) << mla_policy_json(rep, {1, 3, 64}, {40, 100}, "abc", "skinnygemm mla ...", "2026-01-01");
  const FusedPolicy p = load_fused_policy(file);
  EXPECT_EQ(p.name, "kimi_k3.mla.tp8");
  EXPECT_EQ(p.signature, cpu_device_info().signature());
  EXPECT_EQ(p.ms, (std::vector<int64_t>{1, 3, 64}));
  for (const MlaPick& pk : rep.picks)
    EXPECT_EQ(FusedProjection::choose_mode(p, pk.m, pk.context), *mla_variant_mode(pk.variant));
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  int unmeasured = 0;
  for (const auto& pt : doc.at("points")) unmeasured += pt.value("measured", true) ? 0 : 1;
  EXPECT_EQ(unmeasured, 2);  // m=64 at both contexts, from m=3
  EXPECT_EQ(find_fused_policy(cpu_device_info(), "kimi_k3.mla.tp8", dir.string()).source, file);
  std::filesystem::remove_all(dir);
  o.variants = {MlaVariant::Cublaslt};
  expect_error([&] { run_mla(o); }, "the cublaslt mla variant needs the cuda backend");
}

// A policy file written by hand: grid ms {1, 4, 16} x contexts {512, 8192}.
std::string policy_text(const std::string& first_mode = "fused") {
  nlohmann::json doc = {{"schema", 1}, {"kind", "fused_policy"}, {"name", "kimi_k3.mla.tp8"}, {"device", "NVIDIA H200"},
                        {"signature", "NVIDIA H200/132sm"}, {"ms", {1, 4, 16}}, {"contexts", {512, 8192}}};
  const char* modes[3][2] = {{"fused", "side_stream"}, {"fused", "side_stream"}, {"separate", "separate"}};
  const int64_t ms[3] = {1, 4, 16}, cs[2] = {512, 8192};
  doc["points"] = nlohmann::json::array();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      doc["points"].push_back({{"m", ms[i]}, {"context", cs[j]}, {"mode", i + j ? modes[i][j] : first_mode}, {"margin", 0.01}});
  return doc.dump(1);
}

TEST(FusedPolicy, NearestGridPointRulesAndDefault) {
  const auto dir = test::fresh_test_dir("policy");
  const std::string file = (dir / "kimi_k3_mla_h200.json").string();
  std::ofstream(file) << policy_text();
  const FusedPolicy p = load_fused_policy(file);
  EXPECT_EQ(p.device, "NVIDIA H200");
  EXPECT_EQ(FusedProjection::choose_mode(p, 1, 512), FusedMode::Fused);
  EXPECT_EQ(FusedProjection::choose_mode(p, 1, 8192), FusedMode::SideStream);
  EXPECT_EQ(FusedProjection::choose_mode(p, 2, 512), FusedMode::Fused);      // tie 1 | 4 -> 4 (fused)
  EXPECT_EQ(FusedProjection::choose_mode(p, 8, 512), FusedMode::Separate);   // tie 4 | 16 -> 16
  EXPECT_EQ(FusedProjection::choose_mode(p, 7, 8192), FusedMode::SideStream);  // nearer 4 in log2
  EXPECT_EQ(FusedProjection::choose_mode(p, 64, 512), FusedMode::Separate);  // past the grid: its end
  EXPECT_EQ(FusedProjection::choose_mode(p, 1, 2048), FusedMode::SideStream);  // tie 512 | 8192 -> 8192
  EXPECT_EQ(FusedProjection::choose_mode(p, 1, 1000), FusedMode::Fused);
  EXPECT_EQ(FusedProjection::choose_mode(p, 4, 1), FusedMode::Fused);
  EXPECT_EQ(FusedProjection::choose_mode(p, 4, 1 << 20), FusedMode::SideStream);
  expect_error([&] { FusedProjection::choose_mode(p, 0, 512); }, "m=0 must be >= 1");
  expect_error([&] { FusedProjection::choose_mode(p, 1, 0); }, "context=0 must be >= 1");

  const FusedPolicy def = default_fused_policy();
  EXPECT_EQ(def.source, "default");
  for (int64_t m = 1; m <= 64; ++m)
    for (int64_t c : {1, 512, 131072})
      EXPECT_EQ(FusedProjection::choose_mode(def, m, c), m <= 16 ? FusedMode::Fused : FusedMode::Separate) << m;
  EXPECT_EQ(FusedProjection::choose_mode(def, 1000, 512), FusedMode::Separate);
  EXPECT_EQ(fused_mode_name(parse_fused_mode("side_stream")), std::string("side_stream"));
  expect_error([] { parse_fused_mode("fast"); }, "expected fused, side_stream or separate");

  // Lookup by device signature and name; anything else falls back to the default.
  EXPECT_EQ(find_fused_policy(device_preset("h200"), "kimi_k3.mla.tp8", dir.string()).source, file);
  EXPECT_EQ(find_fused_policy(device_preset("h200"), "kimi_k3.mla.tp4", dir.string()).source, "default");
  EXPECT_EQ(find_fused_policy(cpu_device_info(), "kimi_k3.mla.tp8", dir.string()).source, "default");
  std::ofstream(dir / "a_broken.json") << "{";
  EXPECT_EQ(find_fused_policy(device_preset("h200"), "kimi_k3.mla.tp8", dir.string()).source, file);
  std::filesystem::remove_all(dir);
}

TEST(FusedPolicy, BadFilesNameTheField) {
  const auto dir = test::fresh_test_dir("policy_bad");
  const auto write = [&](const std::string& text) {
    const std::string f = (dir / "p.json").string();
    std::ofstream(f) << text;
    return f;
  };
  expect_error([&] { load_fused_policy(write(policy_text("fast"))); },
               "points[0].mode: expected fused, side_stream or separate, got \"fast\"");
  nlohmann::json doc = nlohmann::json::parse(policy_text());
  doc["points"].erase(doc["points"].begin() + 3);
  expect_error([&] { load_fused_policy(write(doc.dump())); }, "no entry for (m=4, context=8192)");
  doc = nlohmann::json::parse(policy_text());
  doc["points"][1]["m"] = 2;
  expect_error([&] { load_fused_policy(write(doc.dump())); }, "points[1].m: 2 is not on the grid's ms");
  doc = nlohmann::json::parse(policy_text());
  doc["points"][1] = doc["points"][0];
  expect_error([&] { load_fused_policy(write(doc.dump())); }, "(m=1, context=512) appears twice");
  doc = nlohmann::json::parse(policy_text());
  doc["ms"] = {4, 1, 16};
  expect_error([&] { load_fused_policy(write(doc.dump())); }, ".ms: expected ascending values");
  doc = nlohmann::json::parse(policy_text());
  doc["schema"] = 2;
  expect_error([&] { load_fused_policy(write(doc.dump())); }, ".schema: expected 1, got 2");
  expect_error([&] { load_fused_policy(write("[1,")); }, "is not valid JSON");
  expect_error([&] { load_fused_policy((dir / "missing.json").string()); }, "cannot open fused policy file");
  std::filesystem::remove_all(dir);
}

using test::run_cli;

TEST(MlaCli, CpuRowsOfKindMlaLayerAndThePolicyFile) {
  const auto dir = test::fresh_test_dir("mla_cli");
  const std::string json = (dir / "mla.json").string(), policy = (dir / "policy.json").string();
  int status = -1;
  const std::string out = run_cli("mla --backend cpu --scale 0.0625 --m 1,2 --context 40,64 --samples 1 --json '" + json +
                                      "' --policy-out '" + policy + "'",
                                  &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(out, HasSubstr("policy: the fastest skinny variant per point"));
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(doc.at("rows").size(), 12u);  // 2 M x 2 contexts x 3 skinny variants
  for (const auto& row : doc.at("rows")) {
    EXPECT_EQ(row.at("kind"), "mla_layer");
    for (const char* f : {"variant", "context", "m", "n", "k", "dtype", "us", "bytes", "tp", "checked", "max_rel_error",
                          "attention_us", "cache_bytes"})
      EXPECT_TRUE(row.contains(f)) << f << " in " << row.dump();
    EXPECT_EQ(row.at("variant").get<std::string>().rfind("skinny", 0), 0u);
  }
  for (const char* key : {"1:40", "2:40", "1:64", "2:64"})
    EXPECT_TRUE(doc.at("policy_choice").contains(key)) << key << " in " << doc.at("policy_choice").dump();
  for (const char* f : {"gpu", "revision", "command", "date"}) EXPECT_TRUE(doc.at("meta").contains(f)) << f;
  EXPECT_EQ(load_fused_policy(policy).contexts, (std::vector<int64_t>{40, 64}));
  const std::string bad = run_cli("mla --backend cpu --scale 0.0625 --m 1 --context 512,abc", &status);
  EXPECT_EQ(status, 2) << bad;
  EXPECT_THAT(bad, HasSubstr("context 'abc' in '512,abc'"));
  const std::string lt = run_cli("mla --backend cpu --scale 0.0625 --m 1 --context 64 --variants cublaslt", &status);
  EXPECT_EQ(status, 2) << lt;
  EXPECT_THAT(lt, HasSubstr("needs the cuda backend"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace skinnygemm::tune
