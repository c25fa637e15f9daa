// CUDA-graph capture + replay and back-to-back PDL launches with no host synchronization.
#include <cuda_runtime.h>

#include "gpu/gpu_util.h"
#include "skinnygemm/plan.h"

namespace skinnygemm::test {
namespace {

TEST(GpuGraphs, CaptureAndReplayWithNewInputs) {
  SKIP_WITHOUT_GPU();
  for (const char* config : {"", "bulk_m8_w1x8_u4_sk4", "cublaslt"}) {
    const Problem p{5, 2112, 7168, DType::BF16};
    HostOperands h = random_operands(p, 11);
    DeviceArray x(h.x), w(h.w), y(matrix_elems(p.m, p.n, p.y_stride()));
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Options o;
    o.backend = Backend::Cuda;
    o.stream = stream;
    o.config = config;
    gemm(p, x.get(), w.get(), y.get(), o);  // first call outside capture (cuBLASLt workspace, heuristics)
    CUDA_OK(cudaStreamSynchronize(stream));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    gemm(p, x.get(), w.get(), y.get(), o);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (uint32_t replay = 0; replay < 3; ++replay) {
      h = random_operands(p, 20 + replay);
      x.upload(h.x);
      w.upload(h.w);
      CUDA_OK(cudaMemset(y.get(), 0xFF, matrix_elems(p.m, p.n, p.y_stride()) * 2));
      // cudaMemset and the uploads go to the legacy stream, which the non-blocking stream does not wait for:
      // without this the poison could land after the replay's output (seen once at 85bb96e under ctest -j 4:
      // y[0][0] = NaN, the poison).
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaGraphLaunch(exec, stream));
      CUDA_OK(cudaStreamSynchronize(stream));
      std::vector<uint16_t> nv(matrix_elems(p.m, p.n, p.y_stride()));
      cpu::reference_naive(p, h.x.data(), h.w.data(), nv.data());
      std::vector<double> ref(static_cast<std::size_t>(p.m * p.n));
      cpu::reference_f64(p, h.x.data(), h.w.data(), ref.data());
      ASSERT_TRUE(within_naive_bound(p, h, y.download(nv.size()), ref, nv, std::string("graph replay ") + config));
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// A Plan runs on the stream it was made with when run() is given none (Options::stream; until session 43 it ran on the
// default stream): captured on that stream, the run is a node of the graph, and a capture error where it is not.
TEST(GpuGraphs, APlanRunsOnItsOptionsStream) {
  SKIP_WITHOUT_GPU();
  const Problem p{4, 1536, 7168, DType::BF16};
  const HostOperands h = random_operands(p, 5);
  DeviceArray x(h.x), w(h.w), y(matrix_elems(p.m, p.n, p.y_stride()));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Options o;
  o.backend = Backend::Cuda;
  o.stream = stream;
  const Plan plan(p, o);
  plan.run(x.get(), w.get(), y.get());  // outside capture first (workspaces)
  CUDA_OK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  plan.run(x.get(), w.get(), y.get());
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  std::size_t nodes = 0;
  CUDA_OK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_GE(nodes, 1u) << plan.choice().config.name() << " did not run on Options::stream";
  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_OK(cudaMemset(y.get(), 0xFF, matrix_elems(p.m, p.n, p.y_stride()) * 2));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  const std::vector<uint16_t> nv = naive(p, h);
  ASSERT_TRUE(within_naive_bound(p, h, y.download(nv.size()), fp64(p, h), nv, "plan on Options::stream"));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// A chain of projections where each output is the next input: with PDL the next kernel streams its weights
// before the previous one finishes, and must still read the finished x. No host sync until the end.
TEST(GpuGraphs, BackToBackPdlChainReadsFinishedInputs) {
  SKIP_WITHOUT_GPU();
  const int64_t m = 6;
  const int64_t widths[] = {7168, 2112, 1536, 7168, 144, 4096, 3072};
  const int layers = static_cast<int>(std::size(widths)) - 1;
  std::mt19937 rng(3);
  std::vector<std::unique_ptr<DeviceArray>> acts, weights;
  std::vector<std::vector<uint16_t>> host_w;
  acts.push_back(std::make_unique<DeviceArray>(random_values(DType::BF16, m * widths[0], rng)));
  for (int l = 0; l < layers; ++l) {
    // Scaled by 1/sqrt(K) so activations stay O(1) along the chain (no huge cancelling sums).
    host_w.push_back(random_values(DType::BF16, widths[l + 1] * widths[l], rng));
    for (uint16_t& v : host_w.back())
      v = float_to_bf16(bf16_to_float(v) / std::sqrt(static_cast<float>(widths[l])));
    weights.push_back(std::make_unique<DeviceArray>(host_w.back()));
    acts.push_back(std::make_unique<DeviceArray>(std::vector<uint16_t>(m * widths[l + 1], kPoison)));
  }
  // Selection's picks, then the bulk ring forced: it lets the next kernel in at its start and reads x only
  // after griddepcontrol.wait, so a missing wait would show here as a stale activation.
  for (const char* config : {"", "bulk_m8_w1x4_u2_sk1"}) {
    Options o;
    o.backend = Backend::Cuda;
    o.config = config;
    for (int l = 0; l < layers; ++l)
      CUDA_OK(cudaMemset(acts[l + 1]->get(), 0xff, m * widths[l + 1] * 2));
    for (int round = 0; round < 2; ++round)  // second round: everything warm, pure back-to-back launches
      for (int l = 0; l < layers; ++l)
        gemm(Problem{m, widths[l + 1], widths[l], DType::BF16}, acts[l]->get(), weights[l]->get(),
             acts[l + 1]->get(), o);
    CUDA_OK(cudaDeviceSynchronize());
    for (int l = 0; l < layers; ++l) {
      const Problem p{m, widths[l + 1], widths[l], DType::BF16};
      HostOperands h{acts[l]->download(m * widths[l]), host_w[l]};
      std::vector<uint16_t> nv(m * widths[l + 1]);
      cpu::reference_naive(p, h.x.data(), h.w.data(), nv.data());
      std::vector<double> ref(m * widths[l + 1]);
      cpu::reference_f64(p, h.x.data(), h.w.data(), ref.data());
      ASSERT_TRUE(within_naive_bound(p, h, acts[l + 1]->download(nv.size()), ref, nv,
                                     std::string(config) + " layer " + std::to_string(l)));
    }
  }
}

}  // namespace
}  // namespace skinnygemm::test
