// The whole-decode-step machinery (lab/step*.cpp) on the CPU backend: the full-scale plan against the
// reference numbers (766 GEMMs, 23.87 GB at TP8), the order check, every GEMM of a scaled step against a plain
// loop on poisoned activations, run_step's rows, the memory-fit decision, and the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "lab/step_runner.h"

namespace skinnygemm::tune {
namespace {

using ::testing::HasSubstr;

constexpr double kScale = 1.0 / 64;  // hidden 112, 6 layers: every layer kind at least twice (dense once)

template <typename F>
void expect_error(F&& f, const std::string& fragment) {
  test::expect_error(std::forward<F>(f), {fragment});
}

int64_t weight_bytes(const std::vector<StepOp>& ops) {
  int64_t b = 0;
  for (const StepOp& op : ops) b += op.weight_bytes(2);
  return b;
}

TEST(StepModel, FullScaleTp8MatchesTheReference) {
  const StepModel m = build_step_model("kimi_k3", 8);
  EXPECT_EQ(m.layers, 93);
  EXPECT_EQ(m.hidden, 7168);
  const auto ops = m.ops(StepVariant::Skinny);
  EXPECT_EQ(ops.size(), 766u);  // 24 x 4 + 69 x 3 + 92 x 5 + 3 (models/kimi_k3.json)
  // Fused: qkv_a + g (24 launches fewer), QKVG + [f_a|b] (in_proj is one GEMM either way), router + latent down +
  // shared gate_up (2 x 92 fewer; the EP front fuses only the first two).
  EXPECT_EQ(m.ops(StepVariant::SkinnyFused).size(), 766u - 24 - 92 - 92);
  EXPECT_EQ(build_step_model("kimi_k3", 8, 1.0, MoeFront::Ep).ops(StepVariant::SkinnyFused).size(), 766u - 24 - 92);
  EXPECT_EQ(weight_bytes(ops), 23869751296);  // the file's in-step projections x counts, bytes
  EXPECT_LT(m.arena_bytes - weight_bytes(ops), 1 << 20);  // only the 256-byte alignment between blocks
  const auto counts = op_counts(ops);
  EXPECT_EQ(counts.at("mla.q_b_proj"), 24);
  EXPECT_EQ(counts.at("kda.in_proj_qkvgfab"), 69);
  EXPECT_EQ(counts.at("moe.latent_up"), 92);
  EXPECT_EQ(counts.at("dense.down"), 1);
  std::set<int> mla;
  for (const StepOp& op : ops)
    if (op.kind == "mla") mla.insert(op.layer);
  std::set<int> want{92, 93};
  for (int l = 4; l <= 88; l += 4) want.insert(l);
  EXPECT_EQ(mla, want);
  const std::vector<std::string> first = {"kda.in_proj_qkvgfab", "kda.f_b_proj", "kda.o_proj", "dense.gate_up",
                                          "dense.down", "kda.in_proj_qkvgfab"};
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(ops[i].name, first[i]) << i;
  EXPECT_EQ(ops.back().name, "lm_head");
  EXPECT_EQ(ops.back().n(), 20480);
}

TEST(StepModel, FusionsReadTheSameRowsExceptKdaPaddingAtTp4) {
  const StepModel tp8 = build_step_model("kimi_k3", 8);
  EXPECT_EQ(weight_bytes(tp8.ops(StepVariant::SkinnyFused)), weight_bytes(tp8.ops(StepVariant::Skinny)));
  // vLLM's pad-16 in_proj has 12448 rows at TP4, the split QKVG + [f_a|b] 12440.
  const StepModel tp4 = build_step_model("kimi_k3", 4);
  EXPECT_EQ(weight_bytes(tp4.ops(StepVariant::Skinny)) - weight_bytes(tp4.ops(StepVariant::SkinnyFused)),
            int64_t{69} * 8 * 7168 * 2);
  for (const StepOp& op : tp8.ops(StepVariant::SkinnyFused))
    if (op.fused())  // adjacent rows and adjacent outputs: zero-copy and written in place
      for (std::size_t s = 1; s < op.segments.size(); ++s) {
        EXPECT_EQ(op.segments[s].block, op.segments[0].block) << op.name;
        EXPECT_EQ(op.segments[s].row, op.segments[s - 1].row + op.segments[s - 1].n) << op.name;
        EXPECT_EQ(op.segments[s].y.col, op.segments[s - 1].y.col + op.segments[s - 1].n) << op.name;
      }
}

TEST(StepModel, VerifyOrderCatchesAReadBeforeItsWriteAndOutOfRangeSlices) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  auto ops = m.ops(StepVariant::Skinny);
  std::size_t qkv_a = 0;
  while (ops[qkv_a].name != "mla.fused_qkv_a") ++qkv_a;
  ASSERT_EQ(ops[qkv_a + 1].name, "mla.q_b_proj");
  std::swap(ops[qkv_a], ops[qkv_a + 1]);
  expect_error([&] { verify_order(m, ops); }, "mla.q_b_proj (layer 4) reads column 0 of mla.a, which no earlier GEMM");
  ops = m.ops(StepVariant::Skinny);
  ops[0].x.col = m.hidden - 8;
  expect_error([&] { verify_order(m, ops); }, "lie outside buffer hidden");
}

TEST(StepModel, ScaledModelKeepsTheStructureAndAlignment) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  EXPECT_EQ(m.layers, 6);
  const auto counts = op_counts(m.ops(StepVariant::Skinny));
  EXPECT_EQ(counts.at("mla.o_proj"), 2);  // layers 4 and 6 (the last)
  EXPECT_EQ(counts.at("kda.o_proj"), 4);
  EXPECT_EQ(counts.at("shared.down"), 5);
  for (const StepBuffer& b : m.buffers) EXPECT_EQ(b.width % 8, 0) << b.name;
  expect_error([] { build_step_model("kimi_k3", 8, 1.5); }, "must be in (0, 1]");
  expect_error([] { build_step_model("kimi_k3", 3); }, "no shapes for tp 3");
  expect_error([] { parse_variants("skinny,fast"); }, "unknown step variant 'fast'");
  EXPECT_EQ(variant_name(StepVariant::SkinnyFused, false), "skinny_fused_nopdl");
  const std::vector<StepVariant> all = parse_variants("cublaslt,cublaslt_torch,cublaslt_fused,skinny,skinny_fused,tma");
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[1], StepVariant::CublasltTorch);
  EXPECT_EQ(all[2], StepVariant::CublasltFused);
  for (StepVariant v : all) EXPECT_EQ(parse_variants(variant_name(v)).front(), v) << variant_name(v);
  expect_error([] { parse_variants("cublaslt_torch,cublaslt_torch"); }, "listed twice");
}

TEST(StepModel, CublasltFusedRunsSkinnyFusedsOpsEachFusionAsOneGemm) {
  EXPECT_EQ(variant_name(StepVariant::CublasltFused), "cublaslt_fused");
  EXPECT_EQ(variant_name(StepVariant::CublasltFused, false), "cublaslt_fused_nopdl");
  expect_error([] { parse_variants("cublaslt,cublaslt_fusion"); }, "unknown step variant 'cublaslt_fusion'");
  expect_error([] { parse_variants("cublaslt,cublaslt_fusion"); }, "cublaslt_fused, skinny");
  const StepModel m = build_step_model("kimi_k3", 8, 1.0, MoeFront::Ep);
  const auto fused = m.ops(StepVariant::CublasltFused);
  const auto skinny_fused = m.ops(StepVariant::SkinnyFused);
  ASSERT_EQ(fused.size(), 650u);
  ASSERT_EQ(skinny_fused.size(), 650u);
  for (std::size_t i = 0; i < fused.size(); ++i) {
    EXPECT_EQ(fused[i].name, skinny_fused[i].name) << i;
    EXPECT_EQ(fused[i].layer, skinny_fused[i].layer) << i;
    EXPECT_EQ(fused[i].segments.size(), skinny_fused[i].segments.size()) << fused[i].name;
  }
  // The fusions' N (docs/step.md, "Variants"): one GEMM over each block, at the first part's rows and columns.
  const std::map<std::string, int64_t> want_n = {
      {"mla.qkv_a_g", 3648}, {"kda.qkvg_fab", 6288}, {"moe.router_latent_down", 4480}};
  std::map<std::string, int> seen;
  for (const StepOp& op : fused) {
    if (!op.fused()) continue;
    ++seen[op.name];
    const StepSegment whole = fused_as_one_gemm(m, op);
    const StepSegment& first = op.segments[0];
    int64_t parts = 0;
    for (const StepSegment& s : op.segments) parts += s.n;
    EXPECT_EQ(whole.n, parts) << op.name;
    EXPECT_EQ(whole.n, want_n.at(op.name)) << op.name;
    EXPECT_EQ(whole.k, op.k()) << op.name;
    EXPECT_EQ(whole.block, first.block) << op.name;
    EXPECT_EQ(whole.row, first.row) << op.name;
    EXPECT_EQ(whole.y.buffer, first.y.buffer) << op.name;
    EXPECT_EQ(whole.y.col, first.y.col) << op.name;
    EXPECT_EQ(whole.y.n, parts) << op.name;
    EXPECT_EQ(whole.name, op.name);
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{{"kda.qkvg_fab", 69}, {"mla.qkv_a_g", 24}, {"moe.router_latent_down", 92}}));
}

// --moe-front non-ep (the default): the shared experts' gate_up joins router + latent down (the model file's
// moe.router_latent_down_shared, 6016 x 7168 at TP8) in both fused variants, one launch fewer per MoE layer; the unfused
// variants run the same GEMMs as with ep.
TEST(StepModel, TheNonEpMoeFrontFusesTheSharedGateUpIntoTheRouterGemm) {
  const StepModel ep = build_step_model("kimi_k3", 8, 1.0, MoeFront::Ep);
  const StepModel non_ep = build_step_model("kimi_k3", 8);  // the default
  EXPECT_EQ(non_ep.moe_front, MoeFront::NonEp);
  EXPECT_EQ(op_counts(non_ep.ops_unfused), op_counts(ep.ops_unfused));
  EXPECT_EQ(non_ep.ops_unfused.size(), 766u);
  EXPECT_EQ(non_ep.arena_bytes, ep.arena_bytes);  // the same weights: one block per MoE front instead of two
  const auto fused = non_ep.ops(StepVariant::SkinnyFused);
  ASSERT_EQ(fused.size(), 650u - 92u);
  const auto counts = op_counts(fused);
  EXPECT_EQ(counts.count("shared.gate_up"), 0u);
  EXPECT_EQ(counts.count("moe.router_latent_down"), 0u);
  ASSERT_EQ(counts.at("moe.router_latent_down_shared"), 92);
  for (const StepOp& op : fused) {
    if (op.name != "moe.router_latent_down_shared") continue;
    ASSERT_EQ(op.segments.size(), 3u);
    EXPECT_EQ(op.segments[2].name, "shared.gate_up");
    const StepSegment whole = fused_as_one_gemm(non_ep, op);
    EXPECT_EQ(whole.n, 6016);
    EXPECT_EQ(whole.k, 7168);
  }
  // shared.down reads the gate_up columns the fused GEMM wrote: moe.a from router + latent down on.
  const int moe_a = non_ep.buffer_index("moe.a");
  int downs = 0;
  for (const StepOp& op : fused) {
    if (op.name == "moe.router_latent_down_shared") {
      EXPECT_EQ(op.segments[2].y.buffer, moe_a);
      EXPECT_EQ(op.segments[2].y.col, 896 + 3584);
    }
    if (op.name != "shared.down") continue;
    ++downs;
    EXPECT_EQ(op.x.buffer, moe_a);
    EXPECT_EQ(op.x.col, 896 + 3584);
    EXPECT_EQ(op.x.n, 768);
  }
  EXPECT_EQ(downs, 92);
  EXPECT_EQ(moe_front_name(parse_moe_front("non-ep")), "non-ep");
  EXPECT_EQ(moe_front_name(parse_moe_front("ep")), "ep");
  test::expect_error([] { parse_moe_front("nonep"); }, {"'nonep'", "non-ep"});
}

TEST(StepModel, AFusionWhosePartsAreNotAdjacentCannotRunAsOneGemm) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  auto ops = m.ops(StepVariant::CublasltFused);
  std::size_t i = 0;
  while (ops[i].name != "mla.qkv_a_g") ++i;
  StepOp gap = ops[i];
  gap.segments[1].y.col += 8;
  expect_error([&] { fused_as_one_gemm(m, gap); },
               "mla.qkv_a_g (layer 4) cannot run as one GEMM: its part mla.g_proj reads rows [");
  expect_error([&] { fused_as_one_gemm(m, gap); }, "of mla.a; expected rows");
  StepOp rows = ops[i];
  rows.segments[1].row += 8;
  expect_error([&] { fused_as_one_gemm(m, rows); }, "mla.qkv_a_g (layer 4) cannot run as one GEMM");
  StepOp other = ops[i];
  other.segments[1].y.buffer = m.buffer_index("mla.q");
  other.segments[1].y.col = other.segments[0].n;
  expect_error([&] { fused_as_one_gemm(m, other); }, "of mla.q; expected rows");
}

// y against a plain FP64 loop over the x the op read: one output ulp plus the FP32 accumulation bound.
void expect_matches_loop(const StepModel& m, const StepMemory& mem, const StepOp& op, int64_t mm) {
  const auto* x = reinterpret_cast<const uint16_t*>(mem.at(m, op.x));
  const int64_t ldx = m.buffers[op.x.buffer].width;
  for (const StepSegment& s : op.segments) {
    const auto* w = static_cast<const uint16_t*>(mem.weights(m, s));
    const auto* y = reinterpret_cast<const uint16_t*>(mem.at(m, s.y));
    const int64_t ldy = m.buffers[s.y.buffer].width;
    int bad = 0;
    for (int64_t t = 0; t < mm; ++t)
      for (int64_t j = 0; j < s.n; ++j) {
        double ref = 0, abs_sum = 0;
        for (int64_t k = 0; k < s.k; ++k) {
          const double p = static_cast<double>(bf16_to_float(x[t * ldx + k])) * bf16_to_float(w[j * s.k + k]);
          ref += p;
          abs_sum += std::fabs(p);
        }
        const double got = bf16_to_float(y[t * ldy + j]);
        const double tol = test::ulp(DType::BF16, ref) + static_cast<double>(s.k) * std::ldexp(1.0, -24) * abs_sum;
        if (!(std::fabs(got - ref) <= tol) && bad++ < 3)  // NaN fails too
          ADD_FAILURE() << op.name << " (layer " << op.layer << ") segment " << s.name << " m=" << mm << " y[" << t
                        << "," << j << "] = " << got << ", loop " << ref << ", tolerance " << tol;
      }
  }
}

// cublaslt_fused needs the GPU, so its mapping runs here through the CPU backend's gemm(): one call with the
// executor's problem over the whole block must write every part's outputs where the parts would.
TEST(StepCpuFusedAsOneGemm, WritesEveryPartInPlace) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  const auto dev = make_cpu_step_device(m, 64);
  std::set<std::string> done;
  for (const StepOp& op : m.ops(StepVariant::CublasltFused)) {
    if (!op.fused() || !done.insert(op.name).second) continue;
    dev->reset_activations(11);  // the fusions read only the input (hidden)
    const StepSegment whole = fused_as_one_gemm(m, op);
    Options o;
    o.backend = Backend::Cpu;
    const Problem p{3, whole.n, whole.k, m.dtype, m.buffers[op.x.buffer].width, whole.k, m.buffers[whole.y.buffer].width};
    gemm(p, dev->memory().at(m, op.x), dev->memory().weights(m, whole), dev->memory().at(m, whole.y), o);
    expect_matches_loop(m, dev->memory(), op, 3);
  }
  EXPECT_EQ(done.size(), 3u);
}

class StepCpu : public ::testing::TestWithParam<StepVariant> {};

TEST_P(StepCpu, EveryGemmMatchesAPlainLoopOnPoisonedActivations) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  const auto dev = make_cpu_step_device(m, 64);
  StepExecutor ex(m, dev->memory(), GetParam(), 64);
  for (int64_t mm : {1, 5}) {
    dev->reset_activations(7);
    for (std::size_t i = 0; i < ex.ops().size(); ++i) {
      ex.run(i, mm, nullptr);
      expect_matches_loop(m, dev->memory(), ex.ops()[i], mm);
    }
    // Every column some GEMM writes holds a finite value after the step: nothing read a poisoned input.
    for (const StepOp& op : ex.ops())
      for (const StepSegment& s : op.segments) {
        const auto* y = reinterpret_cast<const uint16_t*>(dev->memory().at(m, s.y));
        for (int64_t t = 0; t < mm; ++t)
          for (int64_t j = 0; j < s.n; ++j)
            ASSERT_TRUE(std::isfinite(bf16_to_float(y[t * m.buffers[s.y.buffer].width + j])))
                << m.buffers[s.y.buffer].name << "[" << t << "," << s.y.col + j << "] after the step (m=" << mm << ")";
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, StepCpu, ::testing::Values(StepVariant::Skinny, StepVariant::SkinnyFused),
                         [](const auto& info) { return variant_name(info.param); });

TEST(StepCpuPoison, SkippingAWriterLeavesPoisonForItsReader) {
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  const auto dev = make_cpu_step_device(m, 64);
  StepExecutor ex(m, dev->memory(), StepVariant::Skinny, 64);
  dev->reset_activations(7);
  ASSERT_EQ(ex.ops()[1].name, "kda.f_b_proj");
  ex.run(1, 2, nullptr);  // without in_proj (op 0) before it, f_b reads the poison
  const auto* y = reinterpret_cast<const uint16_t*>(dev->memory().at(m, ex.ops()[1].segments[0].y));
  EXPECT_TRUE(std::isnan(bf16_to_float(y[0])));
}

TEST(StepRun, CpuRunReportsEveryVariantAndM) {
  StepRunOptions o;
  o.backend = Backend::Cpu;
  o.scale = kScale;
  o.ms = {1, 3};
  o.variants = {StepVariant::Skinny, StepVariant::SkinnyFused};
  o.samples = 1;
  o.check_all = true;
  const StepReport rep = run_step(o);
  const StepModel m = build_step_model("kimi_k3", 8, kScale);
  ASSERT_EQ(rep.results.size(), 4u);
  for (const StepResult& r : rep.results) {
    const auto ops = m.ops(r.variant);
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.name, variant_name(r.variant));
    EXPECT_EQ(r.gemms, static_cast<int>(ops.size()));
    EXPECT_EQ(r.bytes, step_bytes(ops, r.m, 2));
    int segments = 0;
    for (const StepOp& op : ops) segments += static_cast<int>(op.segments.size());
    EXPECT_EQ(r.checked, segments);  // check_all: every GEMM output against the FP64 reference
    EXPECT_GT(r.us, 0);
    EXPECT_EQ(r.floor_us, 0);  // no stream-read probe on the CPU
    ASSERT_EQ(r.sinks.size(), 10u);
    const auto counts = op_counts(ops);
    for (std::size_t i = 0; i < r.sinks.size(); ++i) {
      EXPECT_EQ(r.sinks[i].count, counts.at(r.sinks[i].name));
      EXPECT_NEAR(r.sinks[i].total_us, r.sinks[i].us * r.sinks[i].count, 1e-9 * r.sinks[i].total_us);
      if (i) {
        EXPECT_GE(r.sinks[i - 1].total_us, r.sinks[i].total_us);
      }
    }
  }
  EXPECT_TRUE(rep.chain_floors.empty());
  for (const StepResult& r : rep.results) EXPECT_EQ(r.chain_floor_us, 0) << r.name;
  o.chain_floor = true;
  expect_error([&] { run_step(o); }, "the dependent-chain floor (--chain-floor) needs the cuda backend; the cpu step");
  o.chain_floor = false;
  o.chain_attribution = true;
  expect_error([&] { run_step(o); }, "the dependent-chain floor (--chain-attribution) needs the cuda backend; the cpu");
  o.chain_attribution = false;
  o.variants = {StepVariant::Cublaslt};
  expect_error([&] { run_step(o); }, "the cublaslt step variant needs the cuda backend");
  o.variants = {StepVariant::CublasltTorch};
  expect_error([&] { run_step(o); }, "the cublaslt_torch step variant needs the cuda backend");
  o.variants = {StepVariant::CublasltFused};
  expect_error([&] { run_step(o); }, "the cublaslt_fused step variant needs the cuda backend (cuBLASLt runs on the "
                                     "GPU); on the cpu backend run skinny or skinny_fused");
}

TEST(StepMemoryFit, Tp1OnA141GbDevice) {
  // The model file's shapes give 110.5 GB of dense weights at TP1 (replicated qkv_a, router and latent
  // down/up do not shrink with TP), so TP1 fits on a 141 GB H200.
  const MemoryFit fit = memory_fit("kimi_k3", 1, 1.0, int64_t{141} * 1000000000);
  EXPECT_TRUE(fit.fits) << fit.message;
  EXPECT_EQ(fit.smallest_tp, 1);
  EXPECT_NEAR(static_cast<double>(fit.weights), 110.5e9, 0.1e9);
  EXPECT_THAT(fit.message, HasSubstr("the step at TP1 needs 113."));
  EXPECT_THAT(fit.message, HasSubstr("(110.5 GB weights"));
  const MemoryFit small = memory_fit("kimi_k3", 1, 1.0, int64_t{80} * 1000000000);
  EXPECT_FALSE(small.fits);
  EXPECT_EQ(small.smallest_tp, 2);
  EXPECT_THAT(small.message, HasSubstr("80.0 GB are free: it does not fit; the smallest TP that fits is TP2"));
  const MemoryFit none = memory_fit("kimi_k3", 8, 1.0, int64_t{20} * 1000000000);
  EXPECT_FALSE(none.fits);
  EXPECT_EQ(none.smallest_tp, 0);
  EXPECT_THAT(none.message, HasSubstr("no TP degree of kimi_k3 fits"));
}

using test::run_cli;

// `skinnygemm step ARGS --json FILE` on the CPU at 1/64 scale: its exit status 0 and the document it wrote (out: what it
// printed).
nlohmann::json cpu_step_json(const std::string& args, std::string* out) {
  const auto file = std::filesystem::temp_directory_path() / ("skinnygemm_step_" + std::to_string(::getpid()) + ".json");
  int status = -1;
  *out = run_cli("step --backend cpu --scale 0.015625 --samples 1 " + args + " --json '" + file.string() + "'", &status);
  EXPECT_EQ(status, 0) << *out;
  if (status != 0) return nlohmann::json::object({{"rows", nlohmann::json::array()}});
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  std::filesystem::remove(file);
  return doc;
}

TEST(StepCli, CpuRowsOfKindStep) {
  std::string out;
  const nlohmann::json doc = cpu_step_json("--m 1,2", &out);
  EXPECT_THAT(out, HasSubstr("top-10 time sinks, skinny_fused m=2"));
  ASSERT_EQ(doc.at("rows").size(), 4u);
  for (const auto& row : doc.at("rows")) {
    EXPECT_EQ(row.at("kind"), "step");
    EXPECT_EQ(row.at("tp"), 8);
    for (const char* f : {"variant", "gemms", "bytes", "us", "m", "n", "k", "dtype", "sinks"})
      EXPECT_TRUE(row.contains(f)) << f << " in " << row.dump();
    EXPECT_EQ(row.at("variant").get<std::string>().rfind("skinny", 0), 0u);
  }
  for (const char* v : {"cublaslt", "cublaslt_fused"}) {
    int status = -1;
    const std::string bad = run_cli(std::string("step --backend cpu --scale 0.015625 --m 1 --variants ") + v, &status);
    EXPECT_EQ(status, 2) << bad;
    EXPECT_THAT(bad, HasSubstr(std::string("the ") + v + " step variant needs the cuda backend"));
  }
}

// --moe-front reaches the rows (moe_front, and the fused variant's launches: 5 MoE layers at this scale, one launch
// fewer each with non-ep, the default).
TEST(StepCli, TheMoeFrontIsInTheRowsAndTheirLaunches) {
  std::map<std::string, int64_t> gemms;
  for (const std::string front : {"ep", "non-ep", ""}) {
    std::string out;
    const nlohmann::json doc =
        cpu_step_json("--m 1 --no-sinks --variants skinny_fused" + (front.empty() ? "" : " --moe-front " + front), &out);
    ASSERT_EQ(doc.at("rows").size(), 1u) << out;
    const auto& row = doc.at("rows")[0];
    EXPECT_EQ(row.at("moe_front"), front.empty() ? "non-ep" : front);
    gemms[front] = row.at("gemms").get<int64_t>();
  }
  EXPECT_EQ(gemms["ep"] - gemms["non-ep"], 5);
  EXPECT_EQ(gemms[""], gemms["non-ep"]);
  expect_error([] { parse_moe_front("EP"); }, "unknown MoE front 'EP'");
}

// `skinnygemm ARGS` exits 2 (bad input) and its output names why.
void expect_cli_refusal(const std::string& args, const std::string& why) {
  int status = -1;
  const std::string out = run_cli(args, &status);
  EXPECT_EQ(status, 2) << args << ": " << out;
  EXPECT_THAT(out, HasSubstr(why)) << args;
}

// --trace-tma (the TMA family's timeline in the step) is refused before any work where it cannot be taken: on the
// CPU backend, across ranks and in a step search (on a GPU also where --pdl both or off would run a child process).
TEST(StepCli, TheTmaTimelineIsRefusedWhereItCannotBeTaken) {
  expect_cli_refusal("step --backend cpu --scale 0.015625 --m 1 --samples 1 --trace-tma /dev/null",
                     "--trace-tma needs the cuda backend");
  expect_cli_refusal("step --backend cpu --scale 0.015625 --m 1 --samples 1 --trace-tma /dev/null",
                     "the cpu backend has none");
  expect_cli_refusal("step --ranks 2 --trace-tma /dev/null", "not with --search-table or --ranks");
  expect_cli_refusal("step --search-table /dev/null --trace-tma /dev/null", "not with --search-table or --ranks");
}

// --chain-floor and --chain-attribution (the step's launches as a dependent chain of streaming probes) likewise: they
// stream on a GPU, in one process.
TEST(StepCli, TheChainFloorIsRefusedWhereItCannotBeMeasured) {
  expect_cli_refusal("step --backend cpu --scale 0.015625 --m 1 --samples 1 --chain-floor",
                     "--chain-floor needs the cuda backend (the probe streams on the GPU); the cpu backend");
  expect_cli_refusal("step --ranks 2 --chain-floor",
                     "--chain-floor measures one process's step: not with --search-table or --ranks");
  expect_cli_refusal("step --backend cpu --scale 0.015625 --m 1 --samples 1 --chain-attribution",
                     "--chain-attribution needs the cuda backend");
  expect_cli_refusal("step --ranks 2 --chain-attribution", "--chain-attribution measures one process's step");
}

}  // namespace
}  // namespace skinnygemm::tune
