#include "backends/cuda/cublaslt.h"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/check.cuh"
#include "kernels/family.h"
#include "skinnygemm/config.h"

namespace skinnygemm::cuda {

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;  // what cuBLASLt's split-K algorithms ask for on Hopper

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
};

struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  // One workspace per stream: two streams running cuBLASLt at once (a side-stream projection, an engine's
  // second stream) must never share one. Allocated on a stream's first call, then reused (capture-safe).
  std::map<cudaStream_t, void*> workspaces;
  std::map<std::string, std::unique_ptr<Plan>> plans;  // by Problem::str() and operand alignments
};

std::mutex g_mutex;
std::map<int, DeviceState> g_devices;

DeviceState& state_locked() {
  int dev = 0;
  SKINNYGEMM_CUDA_CHECK(cudaGetDevice(&dev));
  DeviceState& s = g_devices[dev];
  if (!s.handle) SKINNYGEMM_CUBLAS_CHECK(cublasLtCreate(&s.handle));
  return s;
}

void* workspace_locked(DeviceState& s, cudaStream_t stream) {
  void*& ws = s.workspaces[stream];
  if (!ws) {
    // Allocation is not a stream operation, but be safe if a caller is capturing on some stream.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    SKINNYGEMM_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    const cudaError_t status = cudaMalloc(&ws, kWorkspaceBytes);
    SKINNYGEMM_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    SKINNYGEMM_CUDA_CHECK(status);
  }
  return ws;
}

// y[M,N] = x[M,K] w[N,K]^T in cuBLASLt's column-major terms: D(N x M) = op(A)(N x K) B(K x M) with
// A = w seen as a K x N column-major matrix (transposed), B = x seen as K x M column-major.
uint32_t pointer_alignment(const void* ptr) {
  const auto v = reinterpret_cast<uintptr_t>(ptr);
  uint32_t a = 1;
  while (a < 256 && (v & a) == 0) a <<= 1;
  return a;
}

// Heuristics assume 256-byte aligned pointers unless told otherwise; an algorithm picked for aligned
// operands fails with NOT_SUPPORTED on misaligned ones, so plans are keyed by the actual alignments.
Plan& plan_locked(DeviceState& s, const Problem& p, const void* x, const void* w, const void* y, bool any_reduction) {
  const uint32_t align_w = pointer_alignment(w), align_x = pointer_alignment(x), align_y = pointer_alignment(y);
  auto& slot = s.plans[p.str() + " a" + std::to_string(align_w) + "/" + std::to_string(align_x) + "/" +
                       std::to_string(align_y) + (any_reduction ? " any-reduction" : "")];
  if (slot) return *slot;
  auto plan = std::make_unique<Plan>();
  const cudaDataType_t t = p.dtype == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  SKINNYGEMM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  SKINNYGEMM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof(no_trans)));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, t, p.k, p.n, p.w_stride()));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, t, p.k, p.m, p.x_stride()));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->d, t, p.n, p.m, p.y_stride()));
  cublasLtMatmulPreference_t pref = nullptr;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::size_t ws = kWorkspaceBytes;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                               &ws, sizeof(ws)));
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_w},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_x},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_y},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_y}};
  for (const auto& [attr, bytes] : alignments)
    SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &bytes, sizeof(bytes)));
  // FP32 accumulation end to end: split-K partials in the compute type only. The in-place and output-type
  // schemes reduce BF16/FP16 partials; on the H200 a fused 6288x7168 M=16 call differed from our kernels on
  // the same rows by 27 BF16 ulps (0.0134 vs 0.0118, tests/gpu/test_projection.cpp, 2026-11-29).
  const uint32_t schemes = any_reduction ? CUBLASLT_REDUCTION_SCHEME_MASK : CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                               &schemes, sizeof(schemes)));
  plan->algos.resize(kCublasltAlgos);
  int found = 0;
  const cublasStatus_t restricted = cublasLtMatmulAlgoGetHeuristic(
      s.handle, plan->op, plan->a, plan->b, plan->d, plan->d, pref, kCublasltAlgos, plan->algos.data(), &found);
  if (restricted != CUBLAS_STATUS_SUCCESS || found == 0) {
    // Never lose the fallback over the precision filter: if no algorithm passes it, take cuBLASLt's own set.
    const uint32_t all = CUBLASLT_REDUCTION_SCHEME_MASK;
    SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                                 &all, sizeof(all)));
    SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(s.handle, plan->op, plan->a, plan->b, plan->d, plan->d,
                                                           pref, kCublasltAlgos, plan->algos.data(), &found));
  }
  cublasLtMatmulPreferenceDestroy(pref);
  plan->algos.resize(found);
  plan->algos.erase(std::remove_if(plan->algos.begin(), plan->algos.end(),
                                   [](const cublasLtMatmulHeuristicResult_t& r) { return r.state != CUBLAS_STATUS_SUCCESS; }),
                    plan->algos.end());
  SKINNYGEMM_CHECK(!plan->algos.empty(), "cuBLASLt has no algorithm for " << p.str());
  slot = std::move(plan);
  return *slot;
}

}  // namespace

int cublaslt_algo_count(const Problem& p, const void* x, const void* w, const void* y) {
  std::lock_guard<std::mutex> lock(g_mutex);
  DeviceState& s = state_locked();
  return static_cast<int>(plan_locked(s, p, x, w, y, false).algos.size());
}

void cublaslt_gemm(const Problem& p, const void* x, const void* w, void* y, int algo, cudaStream_t stream) {
  cublasLtHandle_t handle;
  void* workspace;
  Plan* plan;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceState& s = state_locked();
    handle = s.handle;
    workspace = workspace_locked(s, stream);
    plan = &plan_locked(s, p, x, w, y, algo == kCublasltTorch);
  }
  const int index = algo < 0 ? 0 : algo;
  SKINNYGEMM_CHECK(index < static_cast<int>(plan->algos.size()),
                   "cublaslt_a" << algo << ": cuBLASLt offers only " << plan->algos.size() << " algorithms for "
                                << p.str());
  const float alpha = 1.f, beta = 0.f;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmul(handle, plan->op, &alpha, w, plan->a, x, plan->b, &beta, y, plan->d, y,
                                         plan->d, &plan->algos[index].algo, workspace, kWorkspaceBytes, stream));
}

namespace {

// The cublaslt family's device half (host half: cublaslt_family.cpp).
class CublasltLaunch final : public PreparedLaunch {
 public:
  CublasltLaunch(const Problem& problem, int algo) : problem_(problem), algo_(algo) {}
  void run(const void* x, const void* w, void* y, void* stream) const override {
    cublaslt_gemm(problem_, x, w, y, algo_, static_cast<cudaStream_t>(stream));
  }

 private:
  Problem problem_;
  int algo_;
};

bool always_built(const Config&) { return true; }

std::unique_ptr<PreparedLaunch> prepare_cublaslt(const Problem& p, const Config& c, const DeviceInfo&,
                                                 const OutputSegment* segments, int count) {
  SKINNYGEMM_CHECK(count == 0 && segments == nullptr, "cuBLASLt cannot write per-segment outputs");
  return std::make_unique<CublasltLaunch>(p, c.algo);
}

}  // namespace

extern const FamilyDevice cublaslt_device{&always_built, &prepare_cublaslt, /*writes_segments=*/false};

}  // namespace skinnygemm::cuda
