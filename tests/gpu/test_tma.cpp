// GPU tier of the TMA family (src/kernels/tma): every listed config bitwise on small integers (including the
// stream-K split reduction), random inputs against FP64 across the token tiles' thresholds with N and K tails,
// FP16 and strided rows, per-segment outputs, the same bits twice, and the lab's timeline (tma::set_trace).
#include <cuda_runtime.h>
#include <gmock/gmock.h>

#include <atomic>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/cuda/launch.cuh"
#include "gpu/gpu_util.h"
#include "kernels/tma/tma_family.h"
#include "kernels/tma/tma_shape.h"

namespace skinnygemm::test {
namespace {

std::vector<uint16_t> run_tma(const Problem& p, const HostOperands& h, const std::string& config) {
  const std::size_t ny = matrix_elems(p.m, p.n, p.y_stride());
  DeviceArray x(h.x), w(h.w), y(std::vector<uint16_t>(ny, kPoison));
  Options o;
  o.backend = Backend::Cuda;
  o.config = config;
  const Choice c = gemm(p, x.get(), w.get(), y.get(), o);
  EXPECT_EQ(c.config.name(), config);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return y.download(ny);
}

TEST(GpuTma, EveryListedConfigIsBitwiseExactOnSmallIntegers) {
  SKIP_WITHOUT_GPU();
  const DeviceInfo dev = cuda::device_info();
  int tested = 0;
  // Operands and reference once per (dtype, M): 712 configs x 4 problems (the reference per config took 73 s of
  // the 246 configs' run at a47ee5c).
  struct Case {
    HostOperands h;
    std::vector<uint16_t> want;
  };
  std::map<std::pair<int, int64_t>, Case> cases;
  for (DType dtype : {DType::BF16, DType::FP16})
    for (const Config& c : listed_configs(Family::Tma)) {
      // N = 100: a partial row tile; K = 8200: a partial K box, and 129 (65) stages split over up to 264 CTAs.
      // Stream-K also at M = 2-4, either side of its polled gather's largest M (tma_launch.cu: 2; its lab knob moves it).
      std::vector<int64_t> ms{1, c.tile_m};
      if (c.cluster == 0 && c.lead < 0) ms.insert(ms.begin() + 1, {2, 3, 4});
      for (int64_t m : ms) {
        const Problem p{m, 100, 8200, dtype};
        std::string why_not;
        ASSERT_TRUE(supports(c, p, dev, 16, &why_not)) << c.name() << ": " << why_not;
        auto it = cases.find({static_cast<int>(dtype), m});
        if (it == cases.end()) {
          Case fresh{random_operands(p, static_cast<uint32_t>(cases.size() + 1), /*small_ints=*/true), {}};
          fresh.want = naive(p, fresh.h);
          it = cases.emplace(std::make_pair(static_cast<int>(dtype), m), std::move(fresh)).first;
        }
        ASSERT_TRUE(bitwise_equal(p, run_tma(p, it->second.h, c.name()).data(), it->second.want.data())) << c.name();
        ++tested;
      }
    }
  int streamk = 0;
  for (const Config& c : listed_configs(Family::Tma)) streamk += c.cluster == 0 && c.lead < 0;
  EXPECT_EQ(tested, 4 * static_cast<int>(listed_configs(Family::Tma).size()) + 6 * streamk);
}

// Session 51: the structural pick's one-box tiles take the deepest ring that keeps three CTAs per SM (7 / 6 / 5 stages
// at token tiles 8 / 16 / 32: shared-memory arithmetic in first_cut.cpp); the GPU holds three of those and two of a
// ring one stage deeper.
TEST(GpuTma, TheOneBoxTilesDeepestRingKeepsThreeCtasPerSm) {
  SKIP_WITHOUT_GPU();
  for (const auto& [name, deeper] : std::vector<std::pair<std::string, std::string>>{
           {"tma_m8_r64_b1_s7_c2_d6", "tma_m8_r64_b1_s8_c2_d6"},
           {"tma_m16_r64_b1_s6_c2_d6", "tma_m16_r64_b1_s7_c2_d6"},
           {"tma_m32_r64_b1_s5_c2_d6", "tma_m32_r64_b1_s6_c2_d6"}}) {
    EXPECT_EQ(tma::resident_ctas_per_sm(Config::parse(name)), 3) << name;
    EXPECT_EQ(tma::resident_ctas_per_sm(Config::parse(deeper)), 2) << deeper;
  }
}

// One 3D copy per stage where K is a multiple of 64 (K = 8192; 8256 has an odd number of 64-wide boxes, so a two-box
// stage's second box lies past K and must read as zeros), 2D copies box by box where it is not (8200): the listed two-box
// decompositions and the unlisted 4-, 8- and 16-box stages of the 16- and 32-row tiles (named lab candidates), bitwise on
// small integers at M = 1 and the token tile, N with a partial row tile.
TEST(GpuTma, OneCopyPerStageAndCopiesPerBoxGiveTheSameBits) {
  SKIP_WITHOUT_GPU();
  const DeviceInfo dev = cuda::device_info();
  for (const char* config :
       {"tma_m8_r64_b2_s4_c2_u1", "tma_m16_r64_b2_s5_c2_d6", "tma_m8_r64_b2_s3_x8", "tma_m16_r32_b2_s6_x2",
        "tma_m8_r16_b8_s4_x1", "tma_m16_r16_b8_s3_x1", "tma_m8_r16_b4_s8_x1", "tma_m8_r16_b8_s4_x2",
        "tma_m16_r32_b4_s4_x2", "tma_m8_r32_b8_s3_x2", "tma_m8_r16_b8_s4_c2_u1", "tma_m16_r32_b4_s5_c2_d6",
        "tma_m8_r16_b16_s4_x1", "tma_m16_r16_b16_s3_x1"})
    for (int64_t k : {8192, 8256, 8200}) {
      const Config c = Config::parse(config);
      for (int64_t m : {int64_t{1}, static_cast<int64_t>(c.tile_m)}) {
        const Problem p{m, 300, k, DType::BF16};
        std::string why_not;
        ASSERT_TRUE(supports(c, p, dev, 16, &why_not)) << config << ": " << why_not;
        const HostOperands h = random_operands(p, 70 + static_cast<uint32_t>(m + k), /*small_ints=*/true);
        ASSERT_TRUE(bitwise_equal(p, run_tma(p, h, config).data(), naive(p, h).data())) << config << " m=" << m << " k=" << k;
      }
    }
  // The 3D view's row stride is the operand's, not 128 x K / 64: strided rows of x, w and y, in both dtypes.
  for (DType dtype : {DType::BF16, DType::FP16})
    for (const char* config : {"tma_m16_r64_b2_s4_c2_u1", "tma_m8_r16_b8_s4_x1"}) {
      const Config c = Config::parse(config);
      Problem p{c.tile_m, 300, 1024, dtype};
      p.ldx = 1024 + 64, p.ldw = 1024 + 8, p.ldy = 300 + 20;
      const HostOperands h = random_operands(p, 90, /*small_ints=*/true);
      const std::vector<uint16_t> y = run_tma(p, h, config);
      ASSERT_TRUE(bitwise_equal(p, y.data(), naive(p, h).data())) << config << " " << dtype_name(dtype);
      ASSERT_TRUE(padding_untouched(p, y.data())) << config;
    }
}

// The row stream (session 39): every rows x token tile bitwise on small integers with N tails (300, 2100: a last tile of 4
// rows), K of one stage and several (a last stage past K: 1088), M across the token tiles and the 8-token boundary of
// its fragments (1, 3, 8, 9, 16); strided rows in both dtypes; the same bits twice (per-segment outputs: PerSegmentOutputs).
TEST(GpuTma, TheRowStreamIsBitwiseExact) {
  SKIP_WITHOUT_GPU();
  const DeviceInfo dev = cuda::device_info();
  for (const char* config : {"tma_m8_r8_b16_s3_rs", "tma_m16_r8_b16_s3_rs", "tma_m8_r16_b8_s4_rs", "tma_m16_r16_b8_s4_rs",
                             "tma_m8_r32_b4_s5_rs", "tma_m16_r32_b4_s3_rs"}) {
    const Config c = Config::parse(config);
    struct Shape { int64_t n, k; };
    for (Shape s : {Shape{300, 1024}, Shape{2100, 1088}, Shape{136, 7168}})
      for (int64_t m : {1, 3, 8, 9, 16}) {
        if (m > c.tile_m) continue;
        const Problem p{m, s.n, s.k, DType::BF16};
        std::string why_not;
        ASSERT_TRUE(supports(c, p, dev, 16, &why_not)) << config << ": " << why_not;
        const HostOperands h = random_operands(p, 40 + static_cast<uint32_t>(m + s.n + s.k), /*small_ints=*/true);
        ASSERT_TRUE(bitwise_equal(p, run_tma(p, h, config).data(), naive(p, h).data()))
            << config << " m=" << m << " n=" << s.n << " k=" << s.k;
      }
  }
  for (DType dtype : {DType::BF16, DType::FP16})
    for (const char* config : {"tma_m16_r8_b16_s3_rs", "tma_m8_r32_b4_s4_rs"}) {
      const Config c = Config::parse(config);
      Problem p{c.tile_m - 1, 300, 1024, dtype};
      p.ldx = 1024 + 64, p.ldw = 1024 + 8, p.ldy = 300 + 20;
      const HostOperands h = random_operands(p, 91, /*small_ints=*/true);
      const std::vector<uint16_t> y = run_tma(p, h, config);
      ASSERT_TRUE(bitwise_equal(p, y.data(), naive(p, h).data())) << config << " " << dtype_name(dtype);
      ASSERT_TRUE(padding_untouched(p, y.data())) << config;
    }
  const Problem q{16, 1536, 7168, DType::BF16};
  const HostOperands hq = random_operands(q, 6);
  EXPECT_TRUE(bitwise_equal(q, run_tma(q, hq, "tma_m16_r16_b8_s4_rs").data(), run_tma(q, hq, "tma_m16_r16_b8_s4_rs").data()));
}

TEST(GpuTma, RandomInputsAcrossThresholdsAndTails) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 300;
  struct Shape { int64_t n, k; };
  for (Shape s : {Shape{1, 8}, Shape{17, 136}, Shape{1000, 1000}, Shape{2112, 7168}})
    for (int64_t m : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64}) {
      const Problem p{m, s.n, s.k, DType::BF16};
      const HostOperands h = random_operands(p, ++seed);
      const int sms = cuda::device_info().sms;
      Config wide = tma::first_cut_config(p, sms);  // 128-row tiles, one box per stage, stream-K, every split
      wide.rows = 128, wide.boxes = 1, wide.stages = 4, wide.ctas_per_sm = 1, wide.min_units = 1, wide.cluster = 0;
      Config cluster = wide;  // split-K by a cluster of two
      cluster.ctas_per_sm = cluster.min_units = 0, cluster.cluster = 2;
      Config slab = cluster;  // 16-row tiles, one CTA each over the whole K, its four warps splitting the K steps
      slab.rows = 16, slab.boxes = 2, slab.stages = 8, slab.cluster = 1;
      Config lead = wide;  // the lead split of 64-row tiles, lead 3
      lead.rows = 64, lead.boxes = 2, lead.stages = 4, lead.ctas_per_sm = 2, lead.min_units = 0, lead.lead = 3;
      // Clusters of four on 64- and 32-row tiles: the 16-byte DSMEM push with its 4-byte stores for the tokens of a group
      // of four past M (M = 3, 7, 9, ...), after the K warps' sum on the 32-row tiles (a helper's review, session 22:
      // the 128-row cluster above keeps the 4-byte path, so no test had put M % 4 != 0 through the new one).
      Config cluster64 = cluster;
      cluster64.rows = 64, cluster64.boxes = 2, cluster64.cluster = 4;
      Config cluster32 = cluster64;
      cluster32.rows = 32;
      const std::vector<double> exact = fp64(p, h);
      const std::vector<uint16_t> rounded = naive(p, h);
      for (const Config& c : {tma::first_cut_config(p, sms), wide, cluster, slab, lead, cluster64, cluster32}) {
        if (!supports(c, p, cuda::device_info(), 16)) continue;  // K = 8: one stage, no split by a cluster
        const std::vector<uint16_t> y = run_tma(p, h, c.name());
        ASSERT_TRUE(within_naive_bound(p, h, y, exact, rounded, c.name()));
      }
    }
}

TEST(GpuTma, Fp16AndStridedRows) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 700;
  for (DType dtype : {DType::FP16, DType::BF16})
    for (int64_t m : {1, 9, 64}) {
      Problem p{m, 300, 1048, dtype};
      p.ldx = 1048 + 64;  // strided rows, still 16-byte aligned (the copy engine's stride rule)
      p.ldw = 1048 + 8;
      p.ldy = 300 + 20;
      const HostOperands h = random_operands(p, ++seed);
      const std::string c = tma::first_cut_config(p, cuda::device_info().sms).name();
      const std::vector<uint16_t> y = run_tma(p, h, c);
      ASSERT_TRUE(within_naive_bound(p, h, y, fp64(p, h), naive(p, h), c));
      ASSERT_TRUE(padding_untouched(p, y.data()));
    }
}

TEST(GpuTma, SameInputsGiveSameBits) {
  SKIP_WITHOUT_GPU();
  // Tiles split over many CTAs: the reduction's order is fixed, whoever arrives last.
  for (const char* c : {"tma_m8_r64_b2_s4_c2_u1", "tma_m16_r128_b1_s4_c2_u1", "tma_m64_r64_b2_s3_c2_u2",
                        "tma_m8_r64_b2_s4_x8", "tma_m16_r64_b2_s4_x4", "tma_m16_r16_b2_s12_x1", "tma_m8_r32_b2_s8_x2",
                        "tma_m8_r32_b2_s7_c2_d9", "tma_m16_r32_b2_s7_c2_d9", "tma_m8_r64_b2_s4_c2_d0"}) {
    const Problem p{Config::parse(c).tile_m, 1536, 7168, DType::BF16};
    const HostOperands h = random_operands(p, 5);
    EXPECT_TRUE(bitwise_equal(p, run_tma(p, h, c).data(), run_tma(p, h, c).data())) << c;
  }
}

TEST(GpuTma, PerSegmentOutputs) {
  SKIP_WITHOUT_GPU();
  const Problem p{5, 700, 2048, DType::BF16};
  const HostOperands h = random_operands(p, 11, /*small_ints=*/true);
  const std::vector<uint16_t> want = naive(p, h);
  DeviceArray x(h.x), w(h.w), a(std::vector<uint16_t>(5 * 300, kPoison)), b(std::vector<uint16_t>(5 * 410, kPoison));
  const OutputSegment segs[2] = {{0, 300, a.get(), 300}, {300, 400, b.get(), 410}};
  for (const Config& c : {tma::first_cut_config(p, cuda::device_info().sms), Config::parse("tma_m8_r64_b2_s4_c2_u1"),
                         Config::parse("tma_m8_r16_b8_s4_rs")}) {
  cuda::gemm_segments(p, x.get(), w.get(), segs, 2, c, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint16_t> ya = a.download(5 * 300), yb = b.download(5 * 410);
  for (int64_t t = 0; t < 5; ++t) {
    for (int64_t r = 0; r < 300; ++r) ASSERT_EQ(ya[t * 300 + r], want[t * 700 + r]) << t << "," << r;
    for (int64_t r = 0; r < 400; ++r) ASSERT_EQ(yb[t * 410 + r], want[t * 700 + 300 + r]) << t << "," << r;
    for (int64_t r = 400; r < 410; ++r) ASSERT_EQ(yb[t * 410 + r], kPoison) << "padding " << t << "," << r;
  }
  }
}

// The lead split's staged epilogue (M >= 2: outputs leave 8 rows per 16-byte store, partials 4 rows per float4) and each
// of its fallbacks to one store per row, bitwise on small integers: a row stride of N + 4 (the rows of 7 tokens in 8 off
// the 16-byte grid), an N tail of 3 rows, segments whose boundary (row 300) falls inside an 8-row chunk with a padded
// destination, both token tiles; K = 2048 gives row tiles in several parts (reducer and others staged), K = 768 one
// part per tile (the whole-tile path).
TEST(GpuTma, TheStagedEpilogueStoresEveryRowOnceWhereverItsChunkFalls) {
  SKIP_WITHOUT_GPU();
  // Two layouts of y: rows 16-byte aligned (y's stride 1008, segments from row 0 and 304 with strides 304 and 712), where
  // the lead split stages y (M >= 2) and its chunks of 8 rows cross N and the segments' ends; and rows that are not
  // (stride 1007; segments from row 300, strides 300 and 709), where it stores y per element (session 32).
  struct Layout { int64_t ldy, split, lda, ldb; };
  for (const Layout lay : {Layout{1008, 304, 304, 712}, Layout{1007, 300, 300, 709}})
  for (const char* config : {"tma_m8_r64_b2_s4_c2_d6", "tma_m16_r64_b2_s4_c2_d6"})
    for (int64_t k : {2048, 768})
      for (int64_t m : {2, 5, 8, 13, 16}) {
        if (m > Config::parse(config).tile_m) continue;
        const std::string at = std::string(config) + " m=" + std::to_string(m) + " k=" + std::to_string(k) +
                               " ldy=" + std::to_string(lay.ldy);
        Problem p{m, 1003, k, DType::BF16};
        p.ldy = lay.ldy;
        const HostOperands h = random_operands(p, 40 + static_cast<uint32_t>(m + k), /*small_ints=*/true);
        const std::vector<uint16_t> want = naive(p, h);
        const std::vector<uint16_t> y = run_tma(p, h, config);
        ASSERT_TRUE(bitwise_equal(p, y.data(), want.data())) << at;
        ASSERT_TRUE(padding_untouched(p, y.data())) << at;
        const Problem q{m, 1003, k, DType::BF16};  // the same x and w (their strides are p's), y dense
        const std::vector<uint16_t> dense = naive(q, h);
        const int64_t rows_b = 1003 - lay.split;
        DeviceArray x(h.x), w(h.w), a(std::vector<uint16_t>(m * lay.lda, kPoison)),
            b(std::vector<uint16_t>(m * lay.ldb, kPoison));
        const OutputSegment segs[2] = {{0, lay.split, a.get(), lay.lda}, {lay.split, rows_b, b.get(), lay.ldb}};
        cuda::gemm_segments(q, x.get(), w.get(), segs, 2, Config::parse(config), nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<uint16_t> ya = a.download(m * lay.lda), yb = b.download(m * lay.ldb);
        for (int64_t t = 0; t < m; ++t) {
          for (int64_t r = 0; r < lay.split; ++r) ASSERT_EQ(ya[t * lay.lda + r], dense[t * 1003 + r]) << at << " " << t << "," << r;
          for (int64_t r = lay.split; r < lay.lda; ++r) ASSERT_EQ(ya[t * lay.lda + r], kPoison) << at << " padding a " << t << "," << r;
          for (int64_t r = 0; r < rows_b; ++r)
            ASSERT_EQ(yb[t * lay.ldb + r], dense[t * 1003 + lay.split + r]) << at << " " << t << "," << r;
          for (int64_t r = rows_b; r < lay.ldb; ++r) ASSERT_EQ(yb[t * lay.ldb + r], kPoison) << at << " padding b " << t << "," << r;
        }
      }
}

// The lead split with two parts per row tile (more than 2/3 as many row tiles as SMs: the step's large shapes, which
// the tests above, with 2-33 tiles, never split in two), bitwise on small integers at both token tiles, staged (M >= 2)
// and not, with an N tail, and the same bits twice (the polled words reset between launches). The reducer reads the
// other part's sums with one bulk copy where rows x token tile <= 1024 (session 26): 64-row tiles, 32-row ones (K warps,
// their buffer after the sums) and 128 x 8; 128 x 16 keeps the polled loads. A lead of 0 at K = 1024 gives both parts
// 4 stages, fewer than the ring holds (the copy issued with no refill), and a reducer that often reads before the other
// part is done (the sentinels polled). (The 32- and 128-row and lead-0 cases were added after session 26's device time:
// not yet run on a GPU.)
TEST(GpuTma, TheLeadSplitOfTwoPartsPerTileIsBitwiseExact) {
  SKIP_WITHOUT_GPU();
  const int sms = cuda::device_info().sms;
  const int64_t tiles = 2 * sms / 3 + 1;  // two CTAs per SM over tiles: 2 parts each (89 tiles on 132 SMs)
  for (const char* config : {"tma_m8_r64_b2_s5_c2_d6", "tma_m16_r64_b2_s5_c2_d6", "tma_m8_r32_b2_s7_c2_d6",
                             "tma_m16_r32_b2_s7_c2_d6", "tma_m8_r128_b1_s4_c2_d6", "tma_m16_r128_b1_s4_c2_d6",
                             "tma_m8_r64_b2_s5_c2_d0", "tma_m16_r64_b2_s5_c2_d0"})
    for (int64_t k : {2048, 1024})
      for (int64_t m : {1, 2, 7, 8, 9, 16}) {
        const Config c = Config::parse(config);
        if (m > c.tile_m) continue;
        const Problem p{m, tiles * c.rows - 3, k, DType::BF16};
        ASSERT_EQ(tma::lead_split_grid_for(p.n, p.k, c.rows, c.boxes, c.ctas_per_sm, c.lead, sms).parts, 2);
        const HostOperands h = random_operands(p, 60 + static_cast<uint32_t>(m + k), /*small_ints=*/true);
        const std::vector<uint16_t> y = run_tma(p, h, config);
        ASSERT_TRUE(bitwise_equal(p, y.data(), naive(p, h).data())) << config << " m=" << m << " k=" << k;
        ASSERT_TRUE(bitwise_equal(p, run_tma(p, h, config).data(), y.data())) << config << " m=" << m << " k=" << k;
      }
}

// The split reductions' workspace is per stream; cudaStreamPerThread is one handle that names another stream in
// every thread. Before session 36 two threads on it shared one workspace while their launches ran at once (counters,
// partials and polled sentinel words raced). The keys first (deterministic), then each thread runs stream-K
// (counters at M = 8), the lead split (polled words) and a cluster split on its per-thread stream, 20 times, both
// starting together and copying on their own streams so that their launches overlap, against one run alone.
TEST(GpuTma, ThreadsOnThePerThreadStreamKeepTheirOwnWorkspaces) {
  SKIP_WITHOUT_GPU();
  // Both threads alive while they take their keys: a thread that has ended may pass its id on to the next one (session
  // 38's call 3 failed here when the first thread was joined before the second started; the standard promises distinct
  // ids to threads alive at once only).
  cuda::StreamKey keys[2];
  std::atomic<int> taken{0};
  auto take = [&](int t) {
    keys[t] = cuda::stream_key(cudaStreamPerThread);
    ++taken;
    while (taken.load() < 2) {
    }
  };
  std::thread first(take, 0), second(take, 1);
  first.join();
  second.join();
  EXPECT_TRUE(keys[0] < keys[1] || keys[1] < keys[0]) << "two threads' per-thread streams share a key";
  const cuda::StreamKey mine = cuda::stream_key(cudaStreamPerThread), again = cuda::stream_key(cudaStreamPerThread);
  EXPECT_FALSE(mine < again || again < mine) << "one thread's per-thread stream changed its key";
  const cuda::StreamKey legacy = cuda::stream_key(cudaStreamLegacy), null = cuda::stream_key(nullptr);
  EXPECT_FALSE(legacy < null || null < legacy) << "the legacy stream's two names got two workspaces";
  for (const char* config : {"tma_m8_r64_b2_s4_c2_u1", "tma_m8_r64_b2_s5_c2_d6", "tma_m8_r64_b2_s4_x4"}) {
    const Problem p{8, 6144, 7168, DType::BF16};
    const HostOperands h = random_operands(p, 77, /*small_ints=*/true);
    const std::vector<uint16_t> want = run_tma(p, h, config);
    const std::size_t ny = matrix_elems(p.m, p.n, p.y_stride());
    std::vector<int> mismatches(2, 0), errors(2, 0);
    std::atomic<int> ready{0};
    auto worker = [&](int t) {
      try {
        DeviceArray x(h.x), w(h.w), y(std::vector<uint16_t>(ny, kPoison));
        std::vector<uint16_t> got(ny);
        Options o;
        o.backend = Backend::Cuda;
        o.config = config;
        o.stream = cudaStreamPerThread;
        ++ready;
        while (ready.load() < 2) {
        }
        for (int i = 0; i < 20; ++i) {
          gemm(p, x.get(), w.get(), y.get(), o);
          if (cudaMemcpyAsync(got.data(), y.get(), ny * sizeof(uint16_t), cudaMemcpyDeviceToHost,
                              cudaStreamPerThread) != cudaSuccess ||
              cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess)
            ++errors[t];
          if (!bitwise_equal(p, got.data(), want.data())) ++mismatches[t];
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << config << " thread " << t << ": " << e.what();
        ++errors[t];
      }
    };
    std::thread a(worker, 0), b(worker, 1);
    a.join(), b.join();
    for (int t = 0; t < 2; ++t) {
      EXPECT_EQ(errors[t], 0) << config << " thread " << t;
      EXPECT_EQ(mismatches[t], 0) << config << " thread " << t << ": runs of 20 with other bits";
    }
  }
}

// The raised shared-memory limit is per device: a kernel launched on device 0 first and then on device 1 must get it
// there too (before session 36 the record was per kernel and device 1's launch failed with an invalid value).
TEST(GpuTma, EveryDeviceGetsTheSharedMemoryLimit) {
  SKIP_WITHOUT_GPU();
  int devices = 0;
  CUDA_OK(cudaGetDeviceCount(&devices));
  if (devices < 2) GTEST_SKIP() << "one CUDA device: the per-device limit needs two";
  const char* config = "tma_m8_r64_b2_s5_c2_d6";  // 99 KB of shared memory
  const Problem p{4, 1536, 2048, DType::BF16};
  const HostOperands h = random_operands(p, 78, /*small_ints=*/true);
  std::vector<uint16_t> first;
  for (int dev : {0, 1}) {
    CUDA_OK(cudaSetDevice(dev));
    const std::vector<uint16_t> y = run_tma(p, h, config);
    if (dev == 0) first = y;
    EXPECT_TRUE(bitwise_equal(p, y.data(), first.data())) << "device " << dev;
  }
  CUDA_OK(cudaSetDevice(0));
}

// The lab's timeline (tma::set_trace, `step --trace-tma`): each launch gets its own words, every CTA writes entry <=
// end of the wait <= first stage landed <= last stage multiplied <= exit and an SM id, the results are the same bits,
// nothing is written or listed with the sink off, and a sink too small for a launch fails naming the sizes.
TEST(GpuTma, TheTimelineHasEveryCtaOfEveryLaunchAndChangesNoResult) {
  SKIP_WITHOUT_GPU();
  const int sms = cuda::device_info().sms;
  struct Case {
    Problem p;
    const char* config;
  };
  // Every way a consumer leaves the kernel: the lead split's parts and reducer (polled handoff),
  // stream-K whose row tiles all fall to several CTAs (at M = 4 reduced by the counter; an N tail), a cluster
  // split-K, and the
  // lead split's staged epilogue (M >= 2) at the 16-token tile.
  const Case cases[] = {{Problem{1, 1536, 2048, DType::BF16}, "tma_m8_r32_b2_s7_c2_d9"},
                        {Problem{4, 4264, 2048, DType::BF16}, "tma_m8_r64_b2_s4_c2_u1"},
                        {Problem{3, 2112, 7168, DType::BF16}, "tma_m8_r64_b2_s3_x8"},
                        {Problem{16, 6016, 7168, DType::BF16}, "tma_m16_r64_b2_s5_c2_d6"}};
  {
    const Config c = Config::parse(cases[1].config);
    const tma::Grid g = tma::grid_for(cases[1].p.n, cases[1].p.k, c.rows, c.boxes, c.ctas_per_sm, c.min_units, sms);
    ASSERT_LT(g.units / g.ctas, g.k_stages) << cases[1].config << ": a CTA holds a whole tile";
  }
  constexpr long long kWords = 1 << 16;
  unsigned long long* words = nullptr;
  ASSERT_EQ(cudaMalloc(&words, kWords * 8), cudaSuccess);
  const std::unique_ptr<unsigned long long, decltype(&cudaFree)> owner(words, &cudaFree);
  struct SinkOff {  // whatever fails below, later tests of this process launch with no sink into freed memory
    ~SinkOff() { tma::set_trace(nullptr, 0); }
  } sink_off;
  ASSERT_EQ(cudaMemset(words, 0, kWords * 8), cudaSuccess);
  struct Operands {
    HostOperands h;
    std::unique_ptr<DeviceArray> x, w, y;
  };
  std::vector<Operands> ops;
  for (const Case& c : cases) {
    Operands o;
    o.h = random_operands(c.p, static_cast<uint32_t>(c.p.n), /*small_ints=*/true);
    o.x = std::make_unique<DeviceArray>(o.h.x);
    o.w = std::make_unique<DeviceArray>(o.h.w);
    o.y = std::make_unique<DeviceArray>(std::vector<uint16_t>(matrix_elems(c.p.m, c.p.n, c.p.y_stride()), kPoison));
    ops.push_back(std::move(o));
  }
  Options o;
  o.backend = Backend::Cuda;
  tma::set_trace(words, kWords);
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    o.config = cases[i].config;
    gemm(cases[i].p, ops[i].x->get(), ops[i].w->get(), ops[i].y->get(), o);
  }
  const std::vector<tma::TraceLaunch> launches = tma::take_trace();
  tma::set_trace(nullptr, 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned long long> host(kWords);
  ASSERT_EQ(cudaMemcpy(host.data(), words, kWords * 8, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(launches.size(), std::size(cases));
  long long next = 0;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const tma::TraceLaunch& l = launches[i];
    EXPECT_EQ(l.config, cases[i].config);
    EXPECT_EQ(l.problem.n, cases[i].p.n);
    EXPECT_EQ(l.offset, next) << l.config;
    ASSERT_GT(l.ctas, 0);
    std::set<unsigned long long> sm_ids;
    int gathered = 0;  // CTAs that wrote word 6: the lead split's reducers and stream-K's owners
    for (int c = 0; c < l.ctas; ++c) {
      const unsigned long long* w = host.data() + l.offset + tma::kTraceWords * static_cast<long long>(c);
      EXPECT_GT(w[0], 0u) << l.config << " CTA " << c;
      EXPECT_LE(w[0], w[1]) << l.config << " CTA " << c;
      EXPECT_LE(w[1], w[2]) << l.config << " CTA " << c;
      // The first stage lands after the wait (its x is read after it), the last is multiplied after that, and both
      // before the exit.
      EXPECT_LE(w[1], w[4]) << l.config << " CTA " << c;
      EXPECT_LE(w[4], w[5]) << l.config << " CTA " << c;
      EXPECT_LE(w[5], w[2]) << l.config << " CTA " << c;
      // A lead-split reducer or a stream-K owner (token tiles 8 and 16) writes when the other parts' sums are in, after
      // its wait and before its exit; other CTAs leave word 6.
      if (w[6] != 0) {
        ++gathered;
        EXPECT_LE(w[1], w[6]) << l.config << " CTA " << c;
        EXPECT_LE(w[6], w[2]) << l.config << " CTA " << c;
      }
      sm_ids.insert(w[3]);
    }
    // Both lead splits have several parts per row tile (1536 x 2048: 48 tiles of 32 rows; 6016 x 7168: 94 of 64), so
    // one reducer per tile. Stream-K gathers at M = 1 only (tma_launch.cu), where the CTA whose range holds a tile's
    // first stage ends inside it (no CTA holds a whole tile: asserted above); at M = 4 the counter's last CTA sums. The
    // cluster split-K has none.
    const Config lc = Config::parse(cases[i].config);
    const long long tiles = (cases[i].p.n + lc.rows - 1) / lc.rows;
    const bool gathers = lc.lead >= 0 || (lc.cluster == 0 && cases[i].p.m == 1);
    EXPECT_EQ(gathered, gathers ? tiles : 0) << l.config;
    // %smid need not be below the SM count (PTX: below %nsmid), but a launch never spans more SMs than there are.
    EXPECT_LE(sm_ids.size(), static_cast<std::size_t>(sms)) << l.config;
    next = l.offset + tma::kTraceWords * static_cast<long long>(l.ctas);
  }
  for (long long i = next; i < kWords; ++i) ASSERT_EQ(host[static_cast<std::size_t>(i)], 0u) << "word " << i;
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const Problem& p = cases[i].p;
    const std::size_t ny = matrix_elems(p.m, p.n, p.y_stride());
    EXPECT_TRUE(bitwise_equal(p, ops[i].y->download(ny).data(), naive(p, ops[i].h).data())) << cases[i].config;
  }
  // With the sink off: no word written, no launch listed.
  ASSERT_EQ(cudaMemset(words, 0, kWords * 8), cudaSuccess);
  o.config = cases[0].config;
  gemm(cases[0].p, ops[0].x->get(), ops[0].w->get(), ops[0].y->get(), o);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(tma::take_trace().empty());
  ASSERT_EQ(cudaMemcpy(host.data(), words, kWords * 8, cudaMemcpyDeviceToHost), cudaSuccess);
  for (long long i = 0; i < kWords; ++i) ASSERT_EQ(host[static_cast<std::size_t>(i)], 0u) << "word " << i;
  tma::set_trace(words, 8);  // one CTA's words and a part; the lead split has 6 x its CTAs
  try {
    gemm(cases[0].p, ops[0].x->get(), ops[0].w->get(), ops[0].y->get(), o);
    ADD_FAILURE() << "a launch past the sink's end was not refused";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("the TMA trace holds 8 words"));
  }
}

}  // namespace
}  // namespace skinnygemm::test
