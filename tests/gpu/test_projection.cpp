// Fused projections on the GPU at Kimi-K3 TP8 dimensions (models/kimi_k3.json):
//   MLA qkv_a 2112 + g 1536 (one allocation: zero-copy), KDA QKVG 6144 + [f_a|b] 140 padded to 144 (packed),
//   router 896 + latent down 3584 + shared gate_up 1536 (three allocations: packed), all at K = 7168.
// Fused outputs must equal separate skinnygemm::gemm calls within rtol 1e-2, atol 1e-3 (the fused problem has
// another N, so selection may pick another config and summation order), and bit for bit on small-integer
// inputs, where every FP32 partial sum is exact in any order. Also CUDA-graph capture + replay of run() and
// of run_split() with two streams.
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_util.h"
#include "skinnygemm/projection.h"

namespace skinnygemm::test {
namespace {

constexpr int64_t kK = 7168;
constexpr int64_t kLdx = kK + 64;  // strided input rows (still 16-byte aligned)
constexpr int64_t kMaxM = 16;
constexpr int64_t kMs[] = {1, 8, 16};

struct K3Fusion {
  const char* name;
  std::vector<const char*> names;
  std::vector<int64_t> rows, pad_to;
  bool one_allocation;  // the segments are adjacent rows of one allocation
  bool zero_copy;       // what detection must find (padding forces a packed copy)
};

const K3Fusion kMla{"mla", {"qkv_a", "g"}, {2112, 1536}, {1, 1}, true, true};
const K3Fusion kKda{"kda", {"qkvg", "f_a|b"}, {6144, 140}, {1, 16}, true, false};
const K3Fusion kMoe{"moe", {"router", "latent_down", "shared_gate_up"}, {896, 3584, 1536}, {1, 1, 1}, false, false};

// Device weights, input and poisoned strided destinations (ldy = n + 8) for the fused run and the reference.
class K3Setup {
 public:
  K3Setup(const K3Fusion& f, bool small_ints, uint32_t seed) : small_ints_(small_ints), rng_(seed) {
    int64_t total = 0;
    for (int64_t n : f.rows) total += n;
    if (f.one_allocation) weights_.push_back(std::make_unique<DeviceArray>(values(total * kK, true)));
    int64_t row = 0;
    for (std::size_t i = 0; i < f.rows.size(); ++i) {
      const int64_t n = f.rows[i], ldy = n + 8;
      if (!f.one_allocation) weights_.push_back(std::make_unique<DeviceArray>(values(n * kK, true)));
      const uint16_t* w = f.one_allocation ? weights_[0]->get() + row * kK : weights_[i]->get();
      ys_.push_back(std::make_unique<DeviceArray>(matrix_elems(kMaxM, n, ldy)));
      refs_.push_back(std::make_unique<DeviceArray>(matrix_elems(kMaxM, n, ldy)));
      segs.push_back(Segment{w, n, kK, ys_.back()->get(), ldy, f.pad_to[i], f.names[i], kK, DType::BF16});
      row += n;
    }
    x_ = std::make_unique<DeviceArray>(values(kMaxM * kLdx, false));
  }
  const uint16_t* x() const { return x_->get(); }
  void new_input() { x_->upload(values(kMaxM * kLdx, false)); }
  // Poisons every destination and reference (NaN in bf16), so an output nobody wrote cannot pass.
  void poison() {
    for (std::size_t i = 0; i < segs.size(); ++i) {
      const std::size_t bytes = matrix_elems(kMaxM, segs[i].n, segs[i].ldy) * 2;
      cudaMemset(ys_[i]->get(), 0xFF, bytes);
      cudaMemset(refs_[i]->get(), 0xFF, bytes);
    }
    cudaDeviceSynchronize();  // the runs go to non-blocking streams, which do not wait for the legacy stream
  }
  void separate(int64_t m, cudaStream_t stream) const {
    Options o;
    o.backend = Backend::Cuda;
    o.stream = stream;
    for (std::size_t i = 0; i < segs.size(); ++i)
      gemm(Problem{m, segs[i].n, kK, DType::BF16, kLdx, kK, segs[i].ldy}, x(), segs[i].w, refs_[i]->get(), o);
  }
  // Fused destinations against the separate references: bitwise on small integers, else rtol 1e-2 atol 1e-3;
  // the row padding (columns n..ldy-1) still poisoned.
  ::testing::AssertionResult compare(int64_t m, const std::string& what) const {
    for (std::size_t i = 0; i < segs.size(); ++i) {
      const std::size_t elems = matrix_elems(m, segs[i].n, segs[i].ldy);
      const std::vector<uint16_t> got = ys_[i]->download(elems), want = refs_[i]->download(elems);
      for (int64_t t = 0; t < m; ++t)
        for (int64_t j = 0; j < segs[i].ldy && t * segs[i].ldy + j < static_cast<int64_t>(elems); ++j) {
          const uint16_t g = got[t * segs[i].ldy + j], r = want[t * segs[i].ldy + j];
          const double a = bf16_to_float(g), b = bf16_to_float(r);
          const bool ok = j >= segs[i].n ? g == kPoison
                          : small_ints_  ? g == r
                                         : std::fabs(a - b) <= 1e-3 + 1e-2 * std::fabs(b);
          if (!ok)
            return ::testing::AssertionFailure()
                   << what << " segment " << segs[i].name << " m=" << m << ": y[" << t << "][" << j << "] = " << a
                   << " (0x" << std::hex << g << "), separate " << b << " (0x" << r << std::dec << ")"
                   << (j >= segs[i].n ? " (row padding must stay untouched)" : "");
        }
    }
    return ::testing::AssertionSuccess();
  }

  std::vector<Segment> segs;

 private:
  // Weights scaled by 1/sqrt(K) (outputs O(0.3), as in a model) unless small integers are asked for.
  std::vector<uint16_t> values(int64_t count, bool weights) {
    if (small_ints_) return small_int_values(DType::BF16, static_cast<std::size_t>(count), rng_, 3);
    std::vector<uint16_t> v = random_values(DType::BF16, static_cast<std::size_t>(count), rng_);
    if (weights)
      for (uint16_t& e : v) e = float_to_bf16(bf16_to_float(e) / std::sqrt(static_cast<float>(kK)));
    return v;
  }
  bool small_ints_;
  std::mt19937 rng_;
  std::vector<std::unique_ptr<DeviceArray>> weights_, ys_, refs_;
  std::unique_ptr<DeviceArray> x_;
};

RunOptions cuda_options(cudaStream_t stream, std::optional<Rung> rung = std::nullopt) {
  RunOptions o;
  o.gemm.backend = Backend::Cuda;
  o.gemm.stream = stream;
  o.rung = rung;
  return o;
}

TEST(GpuProjection, KimiK3FusionsEqualSeparateProjections) {
  SKIP_WITHOUT_GPU();
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const K3Fusion* f : {&kMla, &kKda, &kMoe})
    for (bool small_ints : {false, true}) {
      K3Setup s(*f, small_ints, 7);
      FusedProjection proj(s.segs, Backend::Cuda, kMaxM);
      EXPECT_EQ(proj.zero_copy(), f->zero_copy) << f->name;
      EXPECT_EQ(proj.packed_bytes() == 0, f->zero_copy) << f->name;
      const Eligibility el = proj.eligibility(device_info(Backend::Cuda), 8);
      EXPECT_EQ(el.rung, Rung::FusedKernel) << el.reason;  // separate destinations: the kernel writes each
      EXPECT_TRUE(el.ladder[0].available) << el.ladder[0].reason;
      for (int64_t m : kMs)
        for (int variant = 0; variant < 3; ++variant) {
          // 0: whatever the ladder picks (the fused kernel, or the fused GEMM where selection picks cuBLASLt for
          // the merged problem); 1: separate; 2: the fused kernel forced, with a forced bulk config.
          const std::optional<Rung> rung = variant == 0 ? std::nullopt
                                           : variant == 1 ? std::optional<Rung>(Rung::Separate)
                                                          : std::optional<Rung>(Rung::FusedKernel);
          RunOptions o = cuda_options(stream, rung);
          if (variant == 2) o.gemm.config = m <= 8 ? "bulk_m8_w1x8_u2_sk2" : "bulk_m16_w1x8_u2_sk2";
          s.poison();
          const RunResult r = proj.run(s.x(), kLdx, m, o);
          if (rung) {
            EXPECT_EQ(r.rung, *rung) << r.reason;
          } else if (r.rung == Rung::FusedGemm) {
            EXPECT_NE(r.reason.find("fused kernel skipped"), std::string::npos) << r.reason;
          } else {
            EXPECT_EQ(r.rung, Rung::FusedKernel) << r.reason;
          }
          s.separate(m, stream);
          CUDA_OK(cudaStreamSynchronize(stream));
          ASSERT_TRUE(s.compare(m, std::string(f->name) + " " + rung_name(r.rung) + (small_ints ? " ints" : "")))
              << r.reason;
        }
      // Side stream, eagerly: the last segment on its own stream, the rest (fused when >= 2) on the main one.
      cudaStream_t side;
      CUDA_OK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
      s.poison();
      const int side_segment = static_cast<int>(s.segs.size()) - 1;
      const RunResult r = proj.run_split(s.x(), kLdx, 8, stream, side, {side_segment}, cuda_options(stream));
      if (s.segs.size() > 2) {
        EXPECT_NE(r.rung, Rung::Separate) << r.reason;  // the fused kernel or, under cuBLASLt picks, the fused GEMM
      } else {
        EXPECT_EQ(r.rung, Rung::Separate) << r.reason;
      }
      s.separate(8, stream);
      CUDA_OK(cudaStreamSynchronize(stream));  // the join makes the main stream wait for the side stream
      ASSERT_TRUE(s.compare(8, std::string(f->name) + " run_split")) << r.reason;
      cudaStreamDestroy(side);
    }
  cudaStreamDestroy(stream);
}

TEST(GpuProjection, GraphCaptureAndReplayOfRunAndRunSplit) {
  SKIP_WITHOUT_GPU();
  cudaStream_t main_stream, side_stream;
  CUDA_OK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&side_stream, cudaStreamNonBlocking));
  for (const K3Fusion* f : {&kMla, &kKda}) {  // vLLM's splits: g, and [f_a|b], on the side stream
    K3Setup s(*f, false, 11);
    FusedProjection proj(s.segs, Backend::Cuda, kMaxM);
    for (int64_t m : {int64_t{1}, int64_t{16}})
      for (bool split : {false, true}) {
        const std::string what = std::string(f->name) + (split ? " run_split" : " run") + " graph";
        const RunOptions o = cuda_options(main_stream);
        auto launch = [&] {
          return split ? proj.run_split(s.x(), kLdx, m, main_stream, side_stream, {1}, o) : proj.run(s.x(), kLdx, m, o);
        };
        launch();  // outside capture first: selection, cuBLASLt workspace and heuristics are set up here
        CUDA_OK(cudaStreamSynchronize(main_stream));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(main_stream, cudaStreamCaptureModeGlobal));
        const RunResult r = launch();
        // Ending the capture fails (cudaErrorStreamCaptureUnjoined) if the side stream was not joined back.
        CUDA_OK(cudaStreamEndCapture(main_stream, &graph));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int replay = 0; replay < 3; ++replay) {
          s.new_input();
          s.poison();
          CUDA_OK(cudaGraphLaunch(exec, main_stream));
          CUDA_OK(cudaStreamSynchronize(main_stream));
          s.separate(m, main_stream);
          CUDA_OK(cudaStreamSynchronize(main_stream));
          ASSERT_TRUE(s.compare(m, what + " replay " + std::to_string(replay))) << r.reason;
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
      }
  }
  cudaStreamDestroy(side_stream);
  cudaStreamDestroy(main_stream);
}

}  // namespace
}  // namespace skinnygemm::test
