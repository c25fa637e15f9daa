// Host time per call on the GPU (lab/overhead.h): gemm() on a plan-cache hit, Plan::run and FusedProjection::run,
// each in a graph-free loop of real launches, against the launch itself (an empty kernel through the same
// cudaLaunchKernelEx call with the same PDL attribute).
#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <string>
#include <vector>

#include "backends/cuda/check.cuh"
#include "backends/cuda/launch.cuh"
#include "kernels/tma/tma_family.h"
#include "lab/cuda/owned.cuh"
#include "lab/overhead.h"
#include "lab/timing.h"
#include "skinnygemm/plan.h"
#include "skinnygemm/projection.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm::tune {

namespace {

constexpr std::size_t kRawWorkspaceBytes = 32u << 20;  // the library's cuBLASLt workspace per stream (cublaslt.cu)

// A 128-byte argument block: the pointers, sizes and strides of a GEMM launch (the TMA family's tensor maps live
// in its plan, not in the launch arguments), so that the baseline copies about as much as a real launch.
struct EmptyParams {
  const void* p[4];
  int64_t v[12];
};
static_assert(sizeof(EmptyParams) == 128);

__global__ void empty_kernel(EmptyParams) {}

// The path and the launch alone, sample by sample in turn: drift of the host's clock or load hits both.
struct Paired {
  SampleSummary total, launch;
};
Paired time_paired(int samples, int calls, const std::function<void()>& path, const std::function<void()>& launch,
                   const std::function<void()>& drain) {
  std::vector<double> t, l;
  for (int s = 0; s < samples; ++s) {
    l.push_back(time_host_calls(1, calls, launch, drain).median);
    t.push_back(time_host_calls(1, calls, path, drain).median);
  }
  return {summarize_samples(std::move(t)), summarize_samples(std::move(l))};
}

// What the library's launches pay inside other libraries, so that the plan_run rows' host time splits into ours and
// theirs: cuBLASLt's own cublasLtMatmul on descriptors made once, asked as the library asks (FP32 reductions, a 32 MiB
// workspace), and the driver's encodes of the two tensor maps a TMA launch makes per call.
template <typename T, cublasStatus_t (*Destroy)(T)>
struct LtDeleter {
  void operator()(T handle) const { Destroy(handle); }
};
template <typename T, cublasStatus_t (*Destroy)(T)>
using LtOwned = std::unique_ptr<std::remove_pointer_t<T>, LtDeleter<T, Destroy>>;

// A cublasLtMatmul closure on its own handle and descriptors (kept alive by the returned object), and the
// algorithm's id and split-K for the row's problem column.
struct RawCublaslt {
  LtOwned<cublasLtHandle_t, cublasLtDestroy> handle;
  LtOwned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> op;
  LtOwned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> a, b, d;
  cublasLtMatmulHeuristicResult_t found{};
  std::string algo;
};

RawCublaslt raw_cublaslt(const Problem& p) {
  RawCublaslt r;
  cublasLtHandle_t handle = nullptr;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtCreate(&handle));
  r.handle.reset(handle);
  cublasLtMatmulDesc_t op = nullptr;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  r.op.reset(op);
  const cublasOperation_t trans = CUBLAS_OP_T;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  const cudaDataType_t t = CUDA_R_16BF;
  cublasLtMatrixLayout_t layouts[3] = {};
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layouts[0], t, p.k, p.n, p.k));
  r.a.reset(layouts[0]);
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layouts[1], t, p.k, p.m, p.k));
  r.b.reset(layouts[1]);
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layouts[2], t, p.n, p.m, p.n));
  r.d.reset(layouts[2]);
  cublasLtMatmulPreference_t pref_raw = nullptr;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_raw));
  const LtOwned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref(pref_raw);
  const std::size_t ws = kRawWorkspaceBytes;
  const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  SKINNYGEMM_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref_raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_raw, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                               &schemes, sizeof(schemes)));
  int count = 0;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, op, layouts[0], layouts[1], layouts[2], layouts[2],
                                                         pref_raw, 1, &r.found, &count));
  SKINNYGEMM_CHECK(count == 1, "cuBLASLt offered no algorithm for " << p.str());
  int id = 0, split = 0;
  std::size_t written = 0;
  const cublasLtMatmulAlgo_t& algo = r.found.algo;
  SKINNYGEMM_CUBLAS_CHECK(
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &written));
  SKINNYGEMM_CUBLAS_CHECK(
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof(split), &written));
  r.algo = "algorithm " + std::to_string(id) + ", split-K " + std::to_string(split);
  return r;
}

}  // namespace

std::vector<OverheadRow> measure_host_overhead_cuda(const OverheadOptions& o) {
  const int calls = std::min(o.calls, kGpuOverheadMaxCalls);
  cuda::Allocations mem;  // before the stream: freed after it has gone
  cuda::Stream stream;
  const Problem p{1, 256, 256, DType::BF16};
  const int64_t e = static_cast<int64_t>(dtype_size(p.dtype));
  char* x = mem.get(p.m * p.k * e, "x");
  char* w = mem.get(p.n * p.k * e, "w");
  char* y = mem.get(p.m * p.n * e, "y");
  SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(x, 0, p.m * p.k * e, stream.s));
  SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(w, 0, p.n * p.k * e, stream.s));
  const auto drain = [&] { SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.s)); };
  Options gpu;
  gpu.backend = Backend::Cuda;
  gpu.stream = stream.s;

  const cuda::LaunchShape one{dim3(1), dim3(32), 0, 1};
  const EmptyParams params{};
  const auto launch = [&] { cuda::launch(empty_kernel, one, stream.s, params); };
  launch();

  std::vector<OverheadRow> rows;
  const std::string config = gemm(p, x, w, y, gpu).config.name();  // the miss: makes and caches the plan
  const Paired hit = time_paired(o.samples, calls, [&] { gemm(p, x, w, y, gpu); }, launch, drain);
  rows.push_back(overhead_row("gemm_cache_hit", p.str() + " " + config, hit.total, hit.launch, 0.2));

  const Plan plan(p, gpu);
  plan.run(x, w, y, stream.s);
  const Paired run = time_paired(o.samples, calls, [&] { plan.run(x, w, y, stream.s); }, launch, drain);
  rows.push_back(overhead_row("plan_run", p.str() + " " + config, run.total, run.launch, 0.1));

  // The same plan on the TMA family's first cut and on cuBLASLt, the picks at M <= 16 and above it on most shapes.
  // Their launches do per-call work the plan above may not: the TMA launch encodes its two tensor maps and looks up
  // device facts and the stream's workspace under locks on every call; cuBLASLt looked its plan up by a string key
  // until session 44 (a read-only review, session 43). Reported without a target.
  const DeviceInfo device = device_info(Backend::Cuda);
  std::string tma_config;  // the TMA plan's config, for its encodes' row
  for (const char* forced : {"tma", "cublaslt"}) {
    if (!supports(forced_config(forced, p, device), p, device, 16)) continue;  // the TMA family off sm_90
    Options f = gpu;
    f.config = forced;
    const Plan forced_plan(p, f);
    forced_plan.run(x, w, y, stream.s);
    const Paired r = time_paired(o.samples, calls, [&] { forced_plan.run(x, w, y, stream.s); }, launch, drain);
    if (std::string(forced) == "tma") tma_config = forced_plan.choice().config.name();
    rows.push_back(overhead_row(std::string("plan_run_") + forced, p.str() + " " + forced_plan.choice().config.name(),
                                r.total, r.launch, 0));
  }

  {
    const RawCublaslt lt = raw_cublaslt(p);
    char* workspace = mem.get(kRawWorkspaceBytes, "cuBLASLt workspace");
    const float alpha = 1.f, beta = 0.f;
    const auto matmul = [&] {
      SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmul(lt.handle.get(), lt.op.get(), &alpha, w, lt.a.get(), x, lt.b.get(), &beta,
                                             y, lt.d.get(), y, lt.d.get(), &lt.found.algo, workspace,
                                             kRawWorkspaceBytes, stream.s));
    };
    matmul();
    const Paired r = time_paired(o.samples, calls, matmul, launch, drain);
    rows.push_back(overhead_row("cublaslt_matmul_alone",
                                p.str() + " cublasLtMatmul, descriptors made once, " + lt.algo, r.total, r.launch, 0));
  }
  if (!tma_config.empty()) {
    const Config c = Config::parse(tma_config);
    const bool box3d = tma::encode_launch_maps(p, c, x, w);  // the kind the timed calls make
    const auto both = [&] { tma::encode_launch_maps(p, c, x, w); };
    std::vector<double> t_us;
    for (int s = 0; s < o.samples; ++s) t_us.push_back(time_host_calls(1, calls, both, [] {}).median);
    rows.push_back(overhead_row("tma_two_map_encodes",
                                p.str() + " " + tma_config + "'s two " + (box3d ? "3D" : "2D") + " maps, no launch",
                                summarize_samples(std::move(t_us)), SampleSummary{}, 0));
  }

  // Two 128-row segments into adjacent columns of one output: the fused GEMM in place, one launch.
  Segment a{w, 128, 0, y, 256, 1, "a", p.k, p.dtype};
  Segment b{w + 128 * p.k * e, 128, 0, y + 128 * e, 256, 1, "b", p.k, p.dtype};
  FusedProjection fused({a, b}, Backend::Cuda, 1);
  RunOptions ro;
  ro.gemm = gpu;
  const auto first = fused.run(x, p.k, 1, ro);
  SKINNYGEMM_CHECK(first.choices.size() == 1, "the fused projection of the overhead check ran "
                                                  << first.choices.size() << " launches; its baseline is one");
  const Paired fused_run = time_paired(o.samples, calls, [&] { fused.run(x, p.k, 1, ro); }, launch, drain);
  rows.push_back(overhead_row("fused_run", Problem{1, 256, p.k, p.dtype}.str() + " " + first.choices[0].config.name(),
                              fused_run.total, fused_run.launch, 0.3));
  rows.push_back(overhead_row("launch_alone", "empty kernel, 128-byte arguments, PDL attribute", hit.launch,
                              hit.launch, 0));
  drain();
  return rows;
}

}  // namespace skinnygemm::tune
