#include "backends/cuda/cublaslt.h"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cublaslt_unsplit.h"
#include "backends/cuda/launch.cuh"
#include "kernels/family.h"
#include "runtime/backends.h"
#include "skinnygemm/config.h"

namespace skinnygemm::cuda {

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;  // what cuBLASLt's split-K algorithms ask for on Hopper

using Heuristics = std::vector<cublasLtMatmulHeuristicResult_t>;
// cuBLASLt's heuristic answers for one problem and operand alignment, and the one cublaslt_unsplit runs among them.
struct Answers {
  Heuristics algos;
  int unsplit = 0;
};

// One problem's cuBLASLt operation: its descriptors, then what is resolved against them, once each: the heuristic's
// answers per operand alignment and the algorithms named by identity. Never freed: launches point into it.
// Keys are numbers, not text: building Problem::str() and an alignment string on every call cost about a microsecond of
// the cuBLASLt path's host time (session 44).
using AnswersKey = std::tuple<uint32_t, uint32_t, uint32_t, bool>;  // w, x, y alignment (bytes), any reduction scheme
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  std::map<AnswersKey, Answers> heuristics;           // by operand alignments and the reduction schemes allowed
  std::map<std::string, cublasLtMatmulAlgo_t> named;  // by config name; each passed cublasLtMatmulAlgoCheck
};
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, DType>;  // m n k ldx ldw ldy dtype
PlanKey plan_key(const Problem& p) { return {p.m, p.n, p.k, p.x_stride(), p.w_stride(), p.y_stride(), p.dtype}; }

struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  // One workspace per stream: two streams running cuBLASLt at once (a side-stream projection, an engine's
  // second stream) must never share one. Allocated on a stream's first call, then reused (capture-safe).
  std::map<StreamKey, void*> workspaces;  // the device is the state's own
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
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
  void*& ws = s.workspaces[stream_key(stream)];
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

// The attributes an identity carries besides the algorithm id (which cublasLtMatmulAlgoInit sets), each in the
// width cuBLASLt stores it in.
enum class Width { U32, I32, U16 };
using IdentityValue = int CublasltIdentity::*;
struct IdentityAttribute {
  cublasLtMatmulAlgoConfigAttributes_t attribute;
  const char* name;
  Width width;
  IdentityValue value;
};
constexpr IdentityAttribute kIdentityAttributes[] = {
    {CUBLASLT_ALGO_CONFIG_TILE_ID, "TILE_ID", Width::U32, &CublasltIdentity::tile},
    {CUBLASLT_ALGO_CONFIG_STAGES_ID, "STAGES_ID", Width::U32, &CublasltIdentity::stages},
    {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "SPLITK_NUM", Width::I32, &CublasltIdentity::split_k},
    {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "REDUCTION_SCHEME", Width::U32, &CublasltIdentity::reduction},
    {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "CTA_SWIZZLING", Width::U32, &CublasltIdentity::swizzle},
    {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "CUSTOM_OPTION", Width::U32, &CublasltIdentity::custom},
    {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "CLUSTER_SHAPE_ID", Width::U16, &CublasltIdentity::cluster},
    {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, "INNER_SHAPE_ID", Width::U16, &CublasltIdentity::inner}};

template <typename T>
int get_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T v{};
  std::size_t written = 0;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &v, sizeof(v), &written));
  return static_cast<int>(v);
}

template <typename T>
cublasStatus_t set_attribute(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute, int value) {
  const T v = static_cast<T>(value);
  return cublasLtMatmulAlgoConfigSetAttribute(&algo, attribute, &v, sizeof(v));
}

cudaDataType_t data_type(const Problem& p) { return p.dtype == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F; }

// y[M,N] = x[M,K] w[N,K]^T in cuBLASLt's column-major terms: D(N x M) = op(A)(N x K) B(K x M) with
// A = w seen as a K x N column-major matrix (transposed), B = x seen as K x M column-major.
Plan& plan_locked(DeviceState& s, const Problem& p) {
  auto& slot = s.plans[plan_key(p)];
  if (slot) return *slot;
  auto plan = std::make_unique<Plan>();
  const cudaDataType_t t = data_type(p);
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  SKINNYGEMM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  SKINNYGEMM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof(no_trans)));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, t, p.k, p.n, p.w_stride()));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, t, p.k, p.m, p.x_stride()));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->d, t, p.n, p.m, p.y_stride()));
  slot = std::move(plan);
  return *slot;
}

struct Alignments {
  uint32_t w, x, y;  // bytes, 1..256
};

uint32_t pointer_alignment(const void* ptr) {
  const auto v = reinterpret_cast<uintptr_t>(ptr);
  uint32_t a = 1;
  while (a < 256 && (v & a) == 0) a <<= 1;
  return a;
}

Alignments alignments_of(const void* x, const void* w, const void* y) {
  return {pointer_alignment(w), pointer_alignment(x), pointer_alignment(y)};
}

// Heuristics assume 256-byte aligned pointers unless told otherwise; an algorithm picked for aligned
// operands fails with NOT_SUPPORTED on misaligned ones, so the answers are kept per operand alignments.
const Answers& heuristics_locked(DeviceState& s, Plan& plan, const Problem& p, Alignments align, bool any_reduction) {
  Answers& answers = plan.heuristics[AnswersKey{align.w, align.x, align.y, any_reduction}];
  if (!answers.algos.empty()) return answers;
  cublasLtMatmulPreference_t pref = nullptr;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::size_t ws = kWorkspaceBytes;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                               &ws, sizeof(ws)));
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align.w},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align.x},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align.y},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align.y}};
  for (const auto& [attr, bytes] : alignments)
    SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &bytes, sizeof(bytes)));
  // FP32 accumulation end to end: split-K partials in the compute type only. The in-place and output-type
  // schemes reduce BF16/FP16 partials; on the H200 a fused 6288x7168 M=16 call differed from our kernels on
  // the same rows by 27 BF16 ulps (0.0134 vs 0.0118, tests/gpu/test_projection.cpp, 2026-11-29).
  const uint32_t schemes = any_reduction ? CUBLASLT_REDUCTION_SCHEME_MASK : CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                               &schemes, sizeof(schemes)));
  Heuristics found(kCublasltAlgos);
  int count = 0;
  const cublasStatus_t restricted = cublasLtMatmulAlgoGetHeuristic(
      s.handle, plan.op, plan.a, plan.b, plan.d, plan.d, pref, kCublasltAlgos, found.data(), &count);
  if (restricted != CUBLAS_STATUS_SUCCESS || count == 0) {
    // Never lose the fallback over the precision filter: if no algorithm passes it, take cuBLASLt's own set.
    const uint32_t all = CUBLASLT_REDUCTION_SCHEME_MASK;
    SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                                 &all, sizeof(all)));
    SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(s.handle, plan.op, plan.a, plan.b, plan.d, plan.d, pref,
                                                           kCublasltAlgos, found.data(), &count));
  }
  cublasLtMatmulPreferenceDestroy(pref);
  found.resize(count);
  found.erase(std::remove_if(found.begin(), found.end(),
                             [](const cublasLtMatmulHeuristicResult_t& r) { return r.state != CUBLAS_STATUS_SUCCESS; }),
              found.end());
  SKINNYGEMM_CHECK(!found.empty(), "cuBLASLt has no algorithm for " << p.str());
  std::vector<LtAnswer> shapes;
  for (const cublasLtMatmulHeuristicResult_t& r : found) {
    LtAnswer a;
    a.split_k = get_attribute<int32_t>(r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
    cublaslt_tile_shape(get_attribute<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID), &a.tile_rows, &a.tile_tokens);
    shapes.push_back(a);
  }
  answers.unsplit = unsplit_answer(shapes, static_cast<int>(p.m));
  answers.algos = std::move(found);
  return answers;
}

// The answer a config's algo runs: the default (-1, and cublaslt_torch among its own answers) is the first,
// cublaslt_a<i> the i-th, cublaslt_unsplit the rule's (cublaslt_unsplit.h).
int answer_index(const Answers& answers, int algo) {
  return algo == kCublasltUnsplit ? answers.unsplit : algo < 0 ? 0 : algo;
}

Config identity_of(const cublasLtMatmulAlgo_t& algo) {
  Config c = Config::parse("cublaslt");
  c.lt_identity.id = get_attribute<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID);
  for (const IdentityAttribute& a : kIdentityAttributes) {
    int& v = c.lt_identity.*a.value;
    v = a.width == Width::U32   ? get_attribute<uint32_t>(algo, a.attribute)
        : a.width == Width::I32 ? get_attribute<int32_t>(algo, a.attribute)
                                : get_attribute<uint16_t>(algo, a.attribute);
  }
  return c;
}

// The algorithm config names, rebuilt from its identity and checked by cuBLASLt for this problem, resolved once.
const cublasLtMatmulAlgo_t& named_locked(DeviceState& s, Plan& plan, const Problem& p, const Config& c) {
  const std::string name = c.name();
  if (const auto it = plan.named.find(name); it != plan.named.end()) return it->second;
  const auto check = [&](cublasStatus_t status, const std::string& call) {
    SKINNYGEMM_CHECK(status == CUBLAS_STATUS_SUCCESS, "config " << name << " cannot run " << p.str() << ": " << call
                                                                << " returned " << cublasLtGetStatusName(status)
                                                                << " (" << cublasLtGetStatusString(status) << ")");
  };
  const cudaDataType_t t = data_type(p);
  const CublasltIdentity& identity = c.lt_identity;
  cublasLtMatmulAlgo_t algo{};
  check(cublasLtMatmulAlgoInit(s.handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, t, t, t, t, identity.id, &algo),
        "cublasLtMatmulAlgoInit of algorithm " + std::to_string(identity.id));
  for (const IdentityAttribute& a : kIdentityAttributes) {
    const int v = identity.*a.value;
    check(a.width == Width::U32   ? set_attribute<uint32_t>(algo, a.attribute, v)
          : a.width == Width::I32 ? set_attribute<int32_t>(algo, a.attribute, v)
                                  : set_attribute<uint16_t>(algo, a.attribute, v),
          std::string("setting CUBLASLT_ALGO_CONFIG_") + a.name + " to " + std::to_string(v));
  }
  cublasLtMatmulHeuristicResult_t checked{};
  check(cublasLtMatmulAlgoCheck(s.handle, plan.op, plan.a, plan.b, plan.d, plan.d, &algo, &checked),
        "cublasLtMatmulAlgoCheck");
  SKINNYGEMM_CHECK(checked.workspaceSize <= kWorkspaceBytes,
                   "config " << name << " cannot run " << p.str() << ": it needs " << checked.workspaceSize
                             << " bytes of workspace, more than the " << kWorkspaceBytes << " each stream has");
  return plan.named.emplace(name, algo).first->second;
}

}  // namespace

int cublaslt_algo_count(const Problem& p, const void* x, const void* w, const void* y) {
  std::lock_guard<std::mutex> lock(g_mutex);
  DeviceState& s = state_locked();
  return static_cast<int>(heuristics_locked(s, plan_locked(s, p), p, alignments_of(x, w, y), false).algos.size());
}

void cublaslt_gemm(const Problem& p, const void* x, const void* w, void* y, int algo, cudaStream_t stream) {
  cublasLtHandle_t handle;
  void* workspace;
  const Plan* plan;
  const Answers* answers;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceState& s = state_locked();
    handle = s.handle;
    workspace = workspace_locked(s, stream);
    Plan& problem_plan = plan_locked(s, p);
    plan = &problem_plan;
    answers = &heuristics_locked(s, problem_plan, p, alignments_of(x, w, y), algo == kCublasltTorch);
  }
  const int index = answer_index(*answers, algo);
  SKINNYGEMM_CHECK(index < static_cast<int>(answers->algos.size()),
                   "cublaslt_a" << algo << ": cuBLASLt offers only " << answers->algos.size() << " algorithms for "
                                << p.str());
  const float alpha = 1.f, beta = 0.f;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmul(handle, plan->op, &alpha, w, plan->a, x, plan->b, &beta, y, plan->d, y,
                                         plan->d, &answers->algos[index].algo, workspace, kWorkspaceBytes, stream));
}

Config cublaslt_identity(const Problem& p, int position, int alignment) {
  SKINNYGEMM_CHECK(alignment >= 1 && alignment <= 256 && (alignment & (alignment - 1)) == 0,
                   "operand alignment " << alignment << " bytes: expected a power of two from 1 to 256");
  std::lock_guard<std::mutex> lock(g_mutex);
  DeviceState& s = state_locked();
  Plan& plan = plan_locked(s, p);
  const auto a = static_cast<uint32_t>(alignment);
  const Answers& answers = heuristics_locked(s, plan, p, {a, a, a}, false);
  const int index = answer_index(answers, position);
  SKINNYGEMM_CHECK(index < static_cast<int>(answers.algos.size()),
                   "cublaslt_a" << position << ": cuBLASLt offers only " << answers.algos.size() << " algorithms for "
                                << p.str() << " with " << alignment << "-byte aligned operands");
  const Config c = identity_of(answers.algos[index].algo);
  Config::parse(c.name());  // a value the name cannot carry fails here, not when a table is read back
  named_locked(s, plan, p, c);
  return c;
}

namespace {

// The cublaslt family's device half (host half: cublaslt_family.cpp): by position (or the default) through
// cublaslt_gemm, whose heuristics follow each call's operand alignment; by identity with the algorithm resolved
// here, once.
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

class NamedCublasltLaunch final : public PreparedLaunch {
 public:
  NamedCublasltLaunch(const Problem& problem, std::string name, const Plan& plan, const cublasLtMatmulAlgo_t& algo)
      : problem_(problem), name_(std::move(name)), plan_(plan), algo_(algo) {}
  void run(const void* x, const void* w, void* y, void* stream) const override {
    const auto s = static_cast<cudaStream_t>(stream);
    cublasLtHandle_t handle;
    void* workspace;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      DeviceState& state = state_locked();
      handle = state.handle;
      workspace = workspace_locked(state, s);
    }
    const float alpha = 1.f, beta = 0.f;
    const cublasStatus_t status = cublasLtMatmul(handle, plan_.op, &alpha, w, plan_.a, x, plan_.b, &beta, y, plan_.d,
                                                 y, plan_.d, &algo_, workspace, kWorkspaceBytes, s);
    // cublasLtMatmulAlgoCheck does not see the pointers: an algorithm that needs better aligned operands fails here.
    if (status != CUBLAS_STATUS_SUCCESS) {
      const Alignments a = alignments_of(x, w, y);
      SKINNYGEMM_FAIL("config " << name_ << " on " << problem_.str() << " (w, x, y aligned to " << a.w << ", " << a.x
                                << ", " << a.y << " bytes): cublasLtMatmul returned "
                                << cublasLtGetStatusName(status) << " (" << cublasLtGetStatusString(status) << ")");
    }
  }

 private:
  Problem problem_;
  std::string name_;  // for the message of a failed call
  const Plan& plan_;
  cublasLtMatmulAlgo_t algo_;
};

bool always_built(const Config&) { return true; }

std::unique_ptr<PreparedLaunch> prepare_cublaslt(const Problem& p, const Config& c, const DeviceInfo&,
                                                 const OutputSegment* segments, int count) {
  SKINNYGEMM_CHECK(count == 0 && segments == nullptr, "cuBLASLt cannot write per-segment outputs");
  if (!c.lt_identity.named()) return std::make_unique<CublasltLaunch>(p, c.algo);
  std::lock_guard<std::mutex> lock(g_mutex);
  DeviceState& s = state_locked();
  Plan& plan = plan_locked(s, p);
  return std::make_unique<NamedCublasltLaunch>(p, c.name(), plan, named_locked(s, plan, p, c));
}

}  // namespace

extern const FamilyDevice cublaslt_device{&always_built, &prepare_cublaslt, /*writes_segments=*/false};

}  // namespace skinnygemm::cuda
