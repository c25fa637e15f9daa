// The MLA layer on the GPU at Kimi-K3 TP8 dimensions (lab/cuda/mla*.cu, lab/mla_runner.cpp): every variant's
// layer output against the host FP64 reference (lab/mla_reference.cpp, nothing shared with the GPU code) at
// M = 1, 8, 16 and context 512; the device's own GPU reference against the host's; the attention kernel alone at
// contexts that straddle its tile and chunk boundaries, element by element; CUDA-graph capture and replay of the
// side-stream variant with new inputs; and a small run of the whole benchmark protocol.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "gpu/gpu_util.h"
#include "lab/mla_runner.h"

namespace skinnygemm::tune {
namespace {

constexpr int64_t kMaxM = 16;

// The host FP64 reference of the layer on the device's current x, weight copy 0 and cache copy 0.
std::vector<double> host_reference(MlaDevice& dev, const MlaDims& d, int64_t m, int64_t context) {
  const MlaMemory& mem = dev.memory();
  const auto weights = dev.read(mem.weights[0], 1, mla_weight_layout(d).bytes / 2, mla_weight_layout(d).bytes / 2);
  const auto x = dev.read(mem.buffers[kMlaX], m, d.hidden, d.hidden);
  const int64_t cache_elems = mla_cache_bytes(d, m, context) / 2;
  const auto cache = dev.read(mem.cache, 1, cache_elems, cache_elems);
  return mla_reference_layer(d, weights.data(), x.data(), cache.data(), context * d.cache_row(), m, context);
}

std::vector<uint16_t> layer_output(MlaDevice& dev, const MlaDims& d, int64_t m) {
  return dev.read(dev.memory().buffers[kMlaOut], m, d.hidden, d.hidden);
}

class GpuMla : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::available()) GTEST_SKIP() << "no CUDA device: GPU tests need an H200";
    dims_ = mla_dims("kimi_k3", 8);
    dev_ = make_cuda_mla_device(dims_, kMaxM);
  }
  MlaDims dims_;
  std::unique_ptr<MlaDevice> dev_;
};

TEST_F(GpuMla, EveryVariantMatchesTheHostReference) {
  std::vector<MlaExecutor> ex;
  for (MlaVariant v : parse_mla_variants("cublaslt,skinny_separate,skinny_fused,skinny_side_gate"))
    ex.emplace_back(dims_, *dev_, v, 0, kMaxM);
  for (int64_t m : {1, 8, 16}) {
    const int64_t context = 512;
    dev_->prepare(m, context, 21);
    dev_->reset_activations(4);
    const std::vector<double> want = host_reference(*dev_, dims_, m, context);
    // The benchmark's own reference (GPU, FP64 sums) agrees with the host's far inside the tolerance.
    const std::vector<double> gpu_ref = dev_->reference(m, context);
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      err += (gpu_ref[i] - want[i]) * (gpu_ref[i] - want[i]);
      norm += want[i] * want[i];
    }
    EXPECT_LE(std::sqrt(err / norm), 1e-3) << "GPU reference vs host reference, m=" << m;
    for (MlaExecutor& e : ex) {
      dev_->reset_activations(4);  // same x, every intermediate and the appended slot poisoned
      e.run(m, context, 0);
      const double rel = mla_relative_error(layer_output(*dev_, dims_, m), want, m, dims_.hidden, dims_.dtype);
      EXPECT_LE(rel, kMlaTolerance) << mla_variant_name(e.variant()) << " m=" << m << " context=" << context
                                    << "; repro: skinnygemm mla --backend cuda --m " << m << " --context " << context
                                    << " --variants " << mla_variant_name(e.variant());
    }
  }
}

// o_lat of the attention kernel against an FP64 softmax over the same (device) inputs, element by element: partial
// tiles (context 1, 31, 33), one-tile chunks (3 x 4000: 125 chunks of 32), and chunks of several tiles with a
// shorter last one (16 x 20000: 63 chunks of 320 tokens; sequences 0 and 15, heads 0 and 11 checked).
TEST_F(GpuMla, AttentionAloneMatchesAnExactSoftmax) {
  const MlaDims& d = dims_;
  MlaExecutor ex(d, *dev_, MlaVariant::SkinnySeparate, 0, kMaxM);
  const int64_t H = d.heads, L = d.kv_lora, R = d.cache_row();
  struct Case {
    int64_t m, context;
    std::vector<int64_t> ts, hs;
  };
  const std::vector<Case> cases = {{3, 1, {0, 1, 2}, {0, 5, 11}},   {3, 31, {0, 1, 2}, {0, 5, 11}},
                                   {3, 33, {0, 1, 2}, {0, 5, 11}},  {3, 4000, {0, 2}, {0, 11}},
                                   {16, 20000, {0, 15}, {0, 11}}};
  const auto f = [](uint16_t v) { return static_cast<double>(bf16_to_float(v)); };
  for (const Case& c : cases) {
    const int64_t m = c.m, context = c.context;
    dev_->prepare(m, context, 33);
    dev_->reset_activations(8);
    ex.run(m, context, 0);  // q_lat, q and the appended slot as the layer makes them
    const MlaMemory& mem = dev_->memory();
    const auto q_lat = dev_->read(mem.buffers[kMlaQLat], m, H * L, H * L);
    const auto q = dev_->read(mem.buffers[kMlaQ], m, d.q_width(), d.q_width());
    const auto cache = dev_->read(mem.cache, 1, m * context * R, m * context * R);
    const auto got = dev_->read(mem.buffers[kMlaOLat], m, H * L, H * L);
    int bad = 0;
    for (int64_t t : c.ts)
      for (int64_t h : c.hs) {
        std::vector<double> p(static_cast<std::size_t>(context));
        double mx = -INFINITY;
        for (int64_t s = 0; s < context; ++s) {
          const uint16_t* row = cache.data() + (t * context + s) * R;
          double v = 0;
          for (int64_t l = 0; l < L; ++l) v += f(q_lat[t * H * L + h * L + l]) * f(row[l]);
          for (int64_t r = 0; r < d.rope; ++r) v += f(q[t * d.q_width() + h * d.qk_head() + d.nope + r]) * f(row[L + r]);
          p[s] = v * d.softmax_scale();
          mx = std::max(mx, p[s]);
        }
        double sum = 0;
        for (double& v : p) sum += (v = std::exp(v - mx));
        for (int64_t l = 0; l < L; ++l) {
          double want = 0, scale = 0;
          for (int64_t s = 0; s < context; ++s) {
            want += p[s] * f(cache[(t * context + s) * R + l]);
            scale = std::max(scale, std::fabs(f(cache[(t * context + s) * R + l])));
          }
          want /= sum;
          // BF16 output (1/128 relative) plus the BF16 probabilities' error, bounded by 1/256 of the largest row value.
          const double g = f(got[t * H * L + h * L + l]);
          if (!(std::fabs(g - want) <= std::fabs(want) / 128 + scale / 256) && bad++ < 5)
            ADD_FAILURE() << "m=" << m << " context=" << context << " o_lat[t=" << t << "][h=" << h << "][" << l
                          << "] = " << g << ", exact " << want << " (chunks: " << dev_->attention_split(m, context).splits
                          << ")";
        }
      }
  }
}

TEST_F(GpuMla, SideStreamVariantCapturesAndReplaysInAGraph) {
  const MlaDims& d = dims_;
  MlaExecutor ex(d, *dev_, MlaVariant::SkinnySideGate, 0, kMaxM);
  const int64_t m = 8, context = 512;
  dev_->prepare(m, context, 5);
  dev_->reset_activations(1);
  ex.run(m, context, 0);  // outside the capture first: selection and plans are set up here
  auto stream = static_cast<cudaStream_t>(dev_->stream());
  CUDA_OK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  ex.run(m, context, 0);
  // Fails (cudaErrorStreamCaptureUnjoined) if the gate's side stream was not joined back.
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (uint32_t seed : {11u, 12u, 13u}) {
    dev_->reset_activations(seed);  // new x; every intermediate and the appended slot poisoned
    const std::vector<double> want = host_reference(*dev_, d, m, context);
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    EXPECT_LE(mla_relative_error(layer_output(*dev_, d, m), want, m, d.hidden, d.dtype), kMlaTolerance)
        << "replay with seed " << seed;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(GpuMlaRun, SmallGridEveryVariantChecksAndTimes) {
  SKIP_WITHOUT_GPU();
  MlaRunOptions o;
  o.backend = Backend::Cuda;
  o.ms = {1, 2};
  o.contexts = {512, 2048};
  o.samples = 5;
  const MlaReport rep = run_mla(o);
  ASSERT_EQ(rep.results.size(), 16u);
  EXPECT_GT(rep.stream_read_tbps, 1.0);
  for (const MlaResult& r : rep.results) {
    EXPECT_EQ(r.error, "") << r.name << " m=" << r.m << " context=" << r.context;
    EXPECT_GT(r.us, 0);
    EXPECT_GT(r.attention_tbps, 0);
    EXPECT_GT(r.efficiency, 0);
    EXPECT_GE(r.copies, 2);
  }
  EXPECT_EQ(rep.picks.size(), 4u);
  for (const MlaPick& p : rep.picks) EXPECT_GT(p.cublaslt_us, 0);
}

}  // namespace
}  // namespace skinnygemm::tune
