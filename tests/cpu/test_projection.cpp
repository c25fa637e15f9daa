// Fused projections on the CPU backend: every rung that runs here (fused GEMM, separate) gives the same bits
// as plain skinnygemm::gemm calls per segment. The CPU backend's summation order depends only on k (never on
// N, the row block or the thread count), so each output element is the same dot product either way; any
// difference is a layout bug (wrong offset, stride or padding), not rounding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_util.h"
#include "runtime/backends.h"
#include "runtime/projection_impl.h"
#include "skinnygemm/projection.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;
using test::kPoison;

using test::expect_error;

// Adjacent: rows of one allocation, one strided ldw (zero-copy). Gaps: separate places with their own ldw
// (packed). Padded: adjacent rows, but two segments ask for padding (packed, zero rows added).
enum class Layout { Adjacent, Gaps, Padded };
const char* layout_name(Layout l) {
  return l == Layout::Adjacent ? "adjacent" : l == Layout::Gaps ? "gaps" : "padded";
}

constexpr int64_t kK = 520;  // past one 512-wide CPU chunk, not a multiple of 16: exercises the K tail
constexpr int64_t kLdx = kK + 4;

// Weights, inputs and poisoned destinations for segments of the given sizes; ldy = n + 3 (strided outputs).
struct Operands {
  DType dtype;
  int64_t max_m;
  std::vector<uint16_t> wbuf, x;
  std::vector<std::vector<uint16_t>> ys;
  std::vector<Segment> segs;

  Operands(Layout layout, DType dt, std::vector<int64_t> sizes, int64_t m_rows = 64) : dtype(dt), max_m(m_rows) {
    std::mt19937 rng(1);
    const int64_t ldw = layout == Layout::Gaps ? kK + 16 : kK + 8, gap = layout == Layout::Gaps ? 5 : 0;
    int64_t rows = 0;
    for (int64_t n : sizes) rows += n + gap;
    wbuf = test::random_values(dt, static_cast<std::size_t>(rows * ldw), rng);
    x = test::random_values(dt, static_cast<std::size_t>(max_m * kLdx), rng);
    int64_t row = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const int64_t n = sizes[i];
      ys.emplace_back(test::matrix_elems(max_m, n, n + 3), kPoison);
      Segment s{wbuf.data() + row * ldw, n, ldw, nullptr, n + 3, 1, "s" + std::to_string(i), kK, dt};
      if (layout == Layout::Gaps) s.ldw = kK + static_cast<int64_t>(i) * 5;  // differing strides, all in bounds
      if (layout == Layout::Padded) s.pad_to = i == 0 ? 16 : i == 2 ? 8 : 1;
      row += n + gap;
      segs.push_back(s);
    }
    for (std::size_t i = 0; i < segs.size(); ++i) segs[i].y = ys[i].data();
  }
  void repoison() { for (auto& y : ys) std::fill(y.begin(), y.end(), kPoison); }
  Problem problem(std::size_t i, int64_t m) const {
    return Problem{m, segs[i].n, kK, dtype, kLdx, segs[i].ldw, segs[i].ldy};
  }
  // Plain gemm per segment into fresh poisoned outputs (the reference the projection must equal bitwise).
  std::vector<std::vector<uint16_t>> separate(int64_t m) const {
    std::vector<std::vector<uint16_t>> out;
    Options o;
    o.backend = Backend::Cpu;
    for (std::size_t i = 0; i < segs.size(); ++i) {
      out.emplace_back(ys[i].size(), kPoison);
      gemm(problem(i, m), x.data(), segs[i].w, out.back().data(), o);
    }
    return out;
  }
  ::testing::AssertionResult equals_separate(int64_t m) const {
    const auto ref = separate(m);
    for (std::size_t i = 0; i < segs.size(); ++i) {
      if (auto r = test::bitwise_equal(problem(i, m), ys[i].data(), ref[i].data()); !r) return r << " " << segs[i].name;
      if (auto r = test::padding_untouched(problem(i, m), ys[i].data()); !r) return r << " " << segs[i].name;
      // Rows past m must still hold the poison: nothing wrote more tokens than asked.
      for (std::size_t j = test::matrix_elems(m, segs[i].n, segs[i].ldy); j < ys[i].size(); ++j)
        if (ys[i][j] != kPoison)
          return ::testing::AssertionFailure() << segs[i].name << ": element " << j << " past M=" << m << " written";
    }
    return ::testing::AssertionSuccess();
  }
};

RunOptions cpu_options(std::optional<Rung> rung = std::nullopt) {
  RunOptions o{Options{}, rung};
  o.gemm.backend = Backend::Cpu;
  return o;
}

using Params = std::tuple<Layout, Rung, DType, int64_t>;
class ProjectionRungs : public ::testing::TestWithParam<Params> {};

TEST_P(ProjectionRungs, EqualsSeparateGemmBitwise) {
  const auto [layout, rung, dtype, m] = GetParam();
  Operands s(layout, dtype, {13, 100, 7});
  FusedProjection proj(s.segs, Backend::Cpu);
  EXPECT_EQ(proj.zero_copy(), layout == Layout::Adjacent);
  const RunResult r = proj.run(s.x.data(), kLdx, m, cpu_options(rung));
  EXPECT_EQ(r.rung, rung) << r.reason;
  EXPECT_EQ(r.choices.size(), rung == Rung::FusedGemm ? 1u : 3u) << r.reason;
  EXPECT_TRUE(s.equals_separate(m)) << layout_name(layout) << ", " << rung_name(rung) << ": " << r.reason;
}

std::string param_name(const ::testing::TestParamInfo<Params>& info) {
  const auto [layout, rung, dtype, m] = info.param;
  return std::string(layout_name(layout)) + (rung == Rung::FusedGemm ? "_fused_" : "_separate_") + dtype_name(dtype) +
         "_m" + std::to_string(m);
}

INSTANTIATE_TEST_SUITE_P(CpuRungs, ProjectionRungs,
                         ::testing::Combine(::testing::Values(Layout::Adjacent, Layout::Gaps, Layout::Padded),
                                            ::testing::Values(Rung::FusedGemm, Rung::Separate),
                                            ::testing::Values(DType::BF16, DType::FP16),
                                            ::testing::Values<int64_t>(1, 7, 16, 64)),
                         param_name);

TEST(Projection, ZeroCopyDetection) {
  Operands s(Layout::Adjacent, DType::BF16, {13, 100, 7});
  FusedProjection adjacent(s.segs, Backend::Cpu);
  EXPECT_TRUE(adjacent.zero_copy() && adjacent.packed_bytes() == 0);
  EXPECT_EQ(adjacent.weights(), s.segs[0].w);  // used in place
  EXPECT_EQ(adjacent.weight_stride(), kK + 8);
  EXPECT_EQ(adjacent.total_n(), 120);
  auto with = [&](auto change) {
    std::vector<Segment> v = s.segs;
    change(v);
    return FusedProjection(v, Backend::Cpu);
  };
  // Each of these breaks adjacency, so the projection packs a copy (rows of exactly K) and reports its size.
  const FusedProjection reversed = with([](auto& v) { std::swap(v[0], v[1]); });
  const FusedProjection gap = with([](auto& v) { v[2].w = static_cast<const uint16_t*>(v[2].w) + 1; });
  const FusedProjection stride = with([](auto& v) { v[1].ldw = kK; });
  const FusedProjection padded = with([](auto& v) { v[2].pad_to = 8; });  // 7 -> 8
  for (const FusedProjection* p : {&reversed, &gap, &stride, &padded}) {
    EXPECT_FALSE(p->zero_copy()) << p->name();
    EXPECT_EQ(p->packed_bytes(), p->total_n() * kK * 2) << p->name();
    EXPECT_EQ(p->weight_stride(), kK) << p->name();
    EXPECT_NE(p->weights(), s.segs[0].w) << p->name();
  }
  EXPECT_EQ(padded.total_n(), 121);
  // A pad_to the size already meets needs no padding: still zero-copy.
  EXPECT_TRUE(with([](auto& v) { v[1].pad_to = 50; }).zero_copy());
}

// Kimi-K3's KDA tail: [f_a|b] is 140 rows padded to 144; the padding rows are zeros the projection owns and
// their outputs are dropped (destinations) or written as zeros (contiguous output, past the views).
TEST(Projection, PaddedTailAndContiguousOutput) {
  Operands s(Layout::Adjacent, DType::BF16, {256, 140});
  s.segs[1].pad_to = 16;
  FusedProjection proj(s.segs, Backend::Cpu);
  EXPECT_TRUE(!proj.zero_copy() && proj.total_n() == 400);
  EXPECT_EQ(proj.packed_bytes(), 400 * kK * 2);
  const auto views = proj.views();
  ASSERT_EQ(views.size(), 2u);
  EXPECT_TRUE(views[1].name == "s1" && views[1].offset == 256 && views[1].n == 140);
  const int64_t m = 5, ldy = 410;
  for (Rung rung : {Rung::FusedGemm, Rung::Separate}) {
    std::vector<uint16_t> y(test::matrix_elems(m, 400, ldy), kPoison);
    const RunResult r = proj.run_contiguous(s.x.data(), kLdx, m, y.data(), ldy, cpu_options(rung));
    EXPECT_EQ(r.rung, rung);
    const auto ref = s.separate(m);
    for (std::size_t i = 0; i < 2; ++i)
      for (int64_t t = 0; t < m; ++t)
        for (int64_t j = 0; j < views[i].n; ++j)
          ASSERT_EQ(y[t * ldy + views[i].offset + j], ref[i][t * s.segs[i].ldy + j]) << rung_name(rung) << i;
    // Padding columns 396..399: zeros from the zero weight rows (fused), untouched (separate); never past 400.
    for (int64_t t = 0; t < m; ++t) {
      for (int64_t j = 396; j < 400; ++j) EXPECT_EQ(y[t * ldy + j], rung == Rung::FusedGemm ? 0 : kPoison);
      for (int64_t j = 400; t + 1 < m && j < ldy; ++j) EXPECT_EQ(y[t * ldy + j], kPoison);
    }
  }
  proj.run(s.x.data(), kLdx, m, cpu_options());
  EXPECT_TRUE(s.equals_separate(m));
}

// Destinations that are adjacent columns of one output need neither scratch nor copies.
TEST(Projection, AdjacentOutputsAreWrittenInPlace) {
  Operands s(Layout::Gaps, DType::FP16, {24, 40});
  const int64_t m = 3, ldy = 70;
  std::vector<uint16_t> out(test::matrix_elems(64, ldy, ldy), kPoison);
  s.segs[0].y = out.data();
  s.segs[1].y = out.data() + 24;
  s.segs[0].ldy = s.segs[1].ldy = ldy;
  FusedProjection proj(s.segs, Backend::Cpu);
  EXPECT_EQ(proj.scratch_bytes(), 0);
  const RunResult r = proj.run(s.x.data(), kLdx, m, cpu_options());
  EXPECT_EQ(r.rung, Rung::FusedGemm);
  EXPECT_THAT(r.reason, HasSubstr("in place"));
  const auto ref = s.separate(m);
  for (int64_t t = 0; t < m; ++t)
    for (std::size_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < s.segs[i].n; ++j)
        ASSERT_EQ(out[t * ldy + (i ? 24 : 0) + j], ref[i][t * ldy + j]);
  EXPECT_EQ(out[64], kPoison);  // column 64 of row 0: past both segments
}

// The exact overlap test of two strided blocks (destinations against each other, x, the weights) against a
// byte-by-byte count, on random blocks of one stride (the closed form) and of two (the row loop).
TEST(Projection, BlockOverlapMatchesTheBytes) {
  using projection_detail::Block;
  std::mt19937 rng(36);
  auto bytes = [](const Block& b) {
    std::vector<int64_t> v;
    for (int64_t r = 0; r < b.rows; ++r)
      for (int64_t c = 0; c < b.cols; ++c) v.push_back(b.base + r * b.ld + c);
    return v;
  };
  for (int i = 0; i < 20000; ++i) {
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Block a{pick(0, 200), pick(0, 6), pick(1, 12), 0}, b{pick(0, 200), pick(0, 6), pick(1, 12), 0};
    a.ld = a.cols + pick(0, 20);
    b.ld = i % 2 ? a.ld : b.cols + pick(0, 20);
    if (i % 2 && b.ld < b.cols) b.cols = b.ld;
    const std::vector<int64_t> ba = bytes(a), bb = bytes(b);
    bool shared = false;
    for (int64_t x : ba) shared = shared || std::find(bb.begin(), bb.end(), x) != bb.end();
    ASSERT_EQ(projection_detail::overlap(a, b), shared)
        << "a{" << a.base << "," << a.rows << "," << a.cols << "," << a.ld << "} b{" << b.base << "," << b.rows << ","
        << b.cols << "," << b.ld << "}";
  }
}

// Adjacent destinations whose rows are shorter than the two segments together (ldy = 24 for N = 24 + 24) do not
// overlap within max_m = 1 row, but one GEMM of N = 48 cannot write them in place: the scratch output takes it
// (before session 36's audit the run threw "ldy=24 is smaller than a row of y (N=48)").
TEST(Projection, AdjacentOutputsWithShortRowsGoThroughTheScratchOutput) {
  Operands s(Layout::Gaps, DType::BF16, {24, 24}, 1);
  std::vector<uint16_t> out(24 + 24, kPoison);
  s.segs[0].y = out.data();
  s.segs[1].y = out.data() + 24;
  s.segs[0].ldy = s.segs[1].ldy = 24;
  FusedProjection proj(s.segs, Backend::Cpu, 1);
  EXPECT_GT(proj.scratch_bytes(), 0);
  const RunResult r = proj.run(s.x.data(), kLdx, 1, cpu_options());
  EXPECT_THAT(r.reason, ::testing::Not(HasSubstr("in place")));
  const auto ref = s.separate(1);
  for (std::size_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < s.segs[i].n; ++j) ASSERT_EQ(out[(i ? 24 : 0) + j], ref[i][j]) << i << " " << j;
}

// The constructor checks the destinations against each other for max_m rows; a run of more rows (the separate
// calls take it) reaches further and is checked again: here b's row 0 is a's row 1 (before session 36's audit the
// run wrote both and returned).
TEST(Projection, RunsOfMoreThanMaxMRowsCheckTheDestinationsAgain) {
  Operands s(Layout::Gaps, DType::BF16, {16, 16}, 2);
  std::vector<uint16_t> out(64, kPoison);
  s.segs[0].y = out.data(), s.segs[0].ldy = 16;
  s.segs[1].y = out.data() + 16, s.segs[1].ldy = 32;
  FusedProjection proj(s.segs, Backend::Cpu, 1);
  EXPECT_NO_THROW(proj.run(s.x.data(), kLdx, 1, cpu_options()));
  expect_error([&] { proj.run(s.x.data(), kLdx, 2, cpu_options()); },
               {"'s1' (#1)'s output overlaps segment 's0' (#0)'s output within m=2", "max_m=1"});
  // Destinations far enough apart run beyond max_m as before.
  std::vector<uint16_t> a(test::matrix_elems(2, 16, 16), kPoison), b(a.size(), kPoison);
  s.segs[0].y = a.data(), s.segs[1].y = b.data(), s.segs[1].ldy = 16;
  FusedProjection apart(s.segs, Backend::Cpu, 1);
  EXPECT_NO_THROW(apart.run(s.x.data(), kLdx, 2, cpu_options()));
}

TEST(Projection, LadderAndEligibility) {
  Operands s(Layout::Gaps, DType::BF16, {13, 100, 7}, /*m_rows=*/80);
  FusedProjection proj(s.segs, Backend::Cpu, /*max_m=*/16);
  EXPECT_EQ(proj.scratch_bytes(), 16 * 120 * 2);
  const Eligibility el = proj.eligibility(cpu_device_info(), 16);
  ASSERT_EQ(el.ladder.size(), 3u);
  EXPECT_FALSE(el.ladder[0].available);
  EXPECT_THAT(el.ladder[0].reason, HasSubstr("CPU backend has no launches to save"));
  EXPECT_EQ(el.rung, Rung::FusedGemm);
  EXPECT_THAT(el.reason, HasSubstr("fused kernel unavailable"));
  EXPECT_THAT(el.reason, HasSubstr("packed copy"));
  EXPECT_EQ(el.weight_alignment, 16);  // our own packed rows: 1040 bytes, 16-byte aligned allocation
  EXPECT_THAT(el.reason, ::testing::Not(HasSubstr("aligned")));
  // Zero-copy weights with a row stride of 1034 bytes: 2-byte aligned, and the reason says what that costs.
  Operands odd(Layout::Adjacent, DType::BF16, {13, 100});
  for (auto& g : odd.segs) g.ldw = kK + 1;
  odd.segs[1].w = static_cast<const uint16_t*>(odd.segs[0].w) + 13 * (kK + 1);  // adjacent at the new stride
  const FusedProjection odd_proj(odd.segs, Backend::Cpu);
  EXPECT_TRUE(odd_proj.zero_copy());
  const Eligibility odd_el = odd_proj.eligibility(cpu_device_info());
  EXPECT_EQ(odd_el.weight_alignment, 2);
  EXPECT_THAT(odd_el.reason, HasSubstr("2-byte aligned"));
  // Past max_m the scratch output is too small: separate calls write straight to the destinations.
  EXPECT_EQ(proj.eligibility(cpu_device_info(), 17).rung, Rung::Separate);
  const RunResult r = proj.run(s.x.data(), kLdx, 80, cpu_options());
  EXPECT_EQ(r.rung, Rung::Separate);
  EXPECT_THAT(r.reason, HasSubstr("M=80 exceeds the scratch output's max_m=16"));
  EXPECT_TRUE(s.equals_separate(80));
  expect_error([&] { proj.run(s.x.data(), kLdx, 17, cpu_options(Rung::FusedGemm)); }, {"fused GEMM", "max_m=16"});
  expect_error([&] { proj.run(s.x.data(), kLdx, 1, cpu_options(Rung::FusedKernel)); },
               {"fused kernel", "CPU backend"});
  DeviceInfo gpu;
  gpu.is_cpu = false;
  gpu.name = "NVIDIA H200";
  expect_error([&] { proj.eligibility(gpu); }, {"NVIDIA H200", "cpu backend"});
}

TEST(Projection, RejectsInvalidCombinationsWithReasons) {
  Operands s(Layout::Gaps, DType::BF16, {13, 100, 7});
  auto build = [&](auto change, Backend backend = Backend::Cpu) {
    std::vector<Segment> v = s.segs;
    change(v);
    FusedProjection p(v, backend);
  };
  expect_error([&] { build([](auto& v) { v.resize(1); }); }, {"at least 2 segments, got 1"});
  expect_error([&] { build([](auto& v) { v[2].k = 512; }); }, {"segment 's2' (#2)", "K=512", "K=520", "one input"});
  expect_error([&] { build([](auto& v) { v[1].dtype = DType::FP16; }); }, {"'s1'", "fp16", "bf16", "one dtype"});
  expect_error([&] { build([](auto& v) { for (auto& g : v) g.dtype = DType::FP32; }); },
               {"'s0'", "fp32", "not supported"});
  expect_error([&] { build([](auto& v) { v[1].w = nullptr; }); }, {"'s1'", "weights w are null"});
  expect_error([&] { build([](auto& v) { v[0].n = 0; }); }, {"'s0'", "n=0", "> 0"});
  expect_error([&] { build([](auto& v) { v[2].n = -4; }); }, {"'s2'", "n=-4"});
  expect_error([&] { build([](auto& v) { v[1].pad_to = 0; }); }, {"'s1'", "pad_to=0"});
  // Sizes whose arithmetic would wrap (pad_to = 2^62 packed 0 bytes and copied to a wild address before session 36).
  expect_error([&] { build([](auto& v) { v[1].pad_to = int64_t{1} << 62; }); }, {"'s1'", "pad_to=", "to 65536"});
  // Elements are stored whole: an odd destination or weight address is named at construction.
  expect_error([&] { build([](auto& v) { v[1].y = reinterpret_cast<char*>(v[1].y) + 1; }); },
               {"'s1'", ": y=", "is not aligned to its 2-byte elements"});
  expect_error([&] { build([](auto& v) { v[0].w = reinterpret_cast<const char*>(v[0].w) + 1; }); },
               {"'s0'", ": w=", "is not aligned to its 2-byte elements"});
  for (int64_t max_m : {int64_t{0}, int64_t{1} << 40})
    expect_error([&] { FusedProjection(s.segs, Backend::Cpu, max_m); }, {"max_m=" + std::to_string(max_m), "from 1"});
  expect_error([&] { build([](auto& v) { v[1].ldw = 100; }); }, {"'s1'", "ldw=100", "K=520"});
  expect_error([&] { build([](auto& v) { v[2].y = nullptr; }); }, {"2 of 3 segments have a destination"});
  // s1's output starts inside row 0 of s0's output (13 columns, ldy 16).
  expect_error([&] { build([](auto& v) { v[1].y = static_cast<uint16_t*>(v[0].y) + 5; }); },
               {"'s0' (#0)'s output overlaps segment 's1' (#1)'s output", "max_m=64"});
  // Interleaved columns of one output overlap as spans but share no element: accepted (s0 in columns 0..12
  // and s2 in 13..19 of a 20-column output).
  std::vector<uint16_t> shared(test::matrix_elems(64, 20, 20), kPoison);
  EXPECT_NO_THROW(build([&](auto& v) {
    v[0].y = shared.data();
    v[2].y = shared.data() + 13;
    v[0].ldy = v[2].ldy = 20;
  }));
  expect_error([&] { build([&](auto& v) { v[0].y = s.wbuf.data() + 3000; }); }, {"'s0'", "overlaps the weights of"});
  if (!cuda::available())
    expect_error([&] { build([](auto&) {}, Backend::Cuda); }, {cuda::built() ? "no usable GPU" : "built without CUDA"});
  // At run time: x overlapping a destination, a backend other than the projection's, negative M, short ldx.
  FusedProjection proj(s.segs, Backend::Cpu);
  expect_error([&] { proj.run(s.ys[1].data(), kLdx, 2, cpu_options()); }, {"'s1'", "overlaps the input x"});
  RunOptions cuda_opts;
  cuda_opts.gemm.backend = Backend::Cuda;
  expect_error([&] { proj.run(s.x.data(), kLdx, 2, cuda_opts); }, {"cuda backend", "built for cpu"});
  expect_error([&] { proj.run(s.x.data(), kLdx, -1, cpu_options()); }, {"M=-1"});
  expect_error([&] { proj.run(s.x.data(), 100, 1, cpu_options()); }, {"ldx=100", "K=520"});
  // A null x after a run of the same M (whose replay skips gemm's checks: a segfault before session 36).
  proj.run(s.x.data(), kLdx, 2, cpu_options());
  expect_error([&] { proj.run(nullptr, kLdx, 2, cpu_options()); }, {"x is null", "m=2"});
  // An M whose rows no 64-bit size holds is named before any row is tested.
  expect_error([&] { proj.run(s.x.data(), kLdx, int64_t{1} << 60, cpu_options()); }, {"m=1152921504606846976"});
  expect_error([&] { proj.run_contiguous(s.x.data(), kLdx, 1, s.ys[0].data(), 119, cpu_options()); },
               {"ldy=119", "120 columns"});
}

TEST(Projection, ContiguousOnlyProjectionAndMoves) {
  Operands s(Layout::Adjacent, DType::BF16, {13, 100, 7});
  for (auto& g : s.segs) g.y = nullptr;
  FusedProjection proj(s.segs, Backend::Cpu);
  EXPECT_EQ(proj.scratch_bytes(), 0);
  EXPECT_EQ(proj.name(), "s0+s1+s2");
  expect_error([&] { proj.run(s.x.data(), kLdx, 1, cpu_options()); }, {"no destinations", "run_contiguous"});
  FusedProjection moved = std::move(proj);
  std::vector<uint16_t> y(2 * 120, kPoison);
  EXPECT_EQ(moved.run_contiguous(s.x.data(), kLdx, 2, y.data(), 0, cpu_options()).rung, Rung::FusedGemm);
  const auto ref = s.separate(2);
  EXPECT_EQ(y[120 + 13 + 99], ref[1][1 * 103 + 99]);  // row 1, last column of s1
  // M = 0 does nothing.
  std::vector<uint16_t> before = y;
  EXPECT_TRUE(moved.run_contiguous(s.x.data(), kLdx, 0, y.data(), 0, cpu_options()).choices.empty());
  EXPECT_EQ(y, before);
}

// The CPU has no streams: run_split runs every segment in order, says so, and gives the same bits.
TEST(Projection, RunSplitOnCpuIsSequential) {
  Operands s(Layout::Adjacent, DType::BF16, {13, 100, 7});
  FusedProjection proj(s.segs, Backend::Cpu);
  RunResult r = proj.run_split(s.x.data(), kLdx, 9, nullptr, nullptr, {2}, cpu_options());
  EXPECT_THAT(r.reason, HasSubstr("cpu backend: no streams"));
  EXPECT_EQ(r.rung, Rung::FusedGemm);  // s0 + s1 fused on the main stream
  EXPECT_EQ(r.choices.size(), 2u);     // one fused gemm + s2 on its own
  EXPECT_TRUE(s.equals_separate(9));
  // A side segment in the middle leaves two lone main-stream segments: separate.
  s.repoison();
  r = proj.run_split(s.x.data(), kLdx, 4, nullptr, nullptr, {1}, cpu_options(Rung::FusedGemm));
  EXPECT_EQ(r.rung, Rung::Separate);
  EXPECT_EQ(r.choices.size(), 3u);
  EXPECT_TRUE(s.equals_separate(4));
  expect_error([&] { proj.run_split(s.x.data(), kLdx, 1, nullptr, nullptr, {3}, cpu_options()); }, {"index 3"});
  expect_error([&] { proj.run_split(s.x.data(), kLdx, 1, nullptr, nullptr, {1, 1}, cpu_options()); }, {"twice"});
  RunOptions o = cpu_options();
  int stream_tag = 0;
  o.gemm.stream = &stream_tag;
  expect_error([&] { proj.run_split(s.x.data(), kLdx, 1, nullptr, nullptr, {1}, o); }, {"main_stream"});
}

TEST(Projection, LogPrintsTheRungOncePerM) {
  Operands s(Layout::Adjacent, DType::BF16, {13, 100, 7});
  FusedProjection proj(s.segs, Backend::Cpu);
  ::setenv("SKINNYGEMM_LOG", "1", 1);
  ::testing::internal::CaptureStderr();
  for (int64_t m : {2, 2, 3, 2}) proj.run(s.x.data(), kLdx, m, cpu_options());
  const std::string log = ::testing::internal::GetCapturedStderr();
  ::unsetenv("SKINNYGEMM_LOG");
  for (const std::string what : {"s0+s1+s2 m=2 [cpu, run]: fused GEMM <- ", "s0+s1+s2 m=3 [cpu, run]: fused GEMM <- "})
    EXPECT_TRUE(log.find(what) != std::string::npos && log.find(what) == log.rfind(what)) << "once: " << what << log;
}

}  // namespace
}  // namespace skinnygemm
