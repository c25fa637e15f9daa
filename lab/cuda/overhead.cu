// Host time per call on the GPU (lab/overhead.h): gemm() on a plan-cache hit, Plan::run and FusedProjection::run,
// each in a graph-free loop of real launches, against the launch itself (an empty kernel through the same
// cudaLaunchKernelEx call with the same PDL attribute).
#include <cublasLt.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/check.cuh"
#include "backends/cuda/launch.cuh"
#include "lab/cuda/owned.cuh"
#include "lab/overhead.h"
#include "lab/timing.h"
#include "skinnygemm/plan.h"
#include "skinnygemm/projection.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm::tune {

namespace {

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
// theirs: cuBLASLt's own cublasLtMatmul on descriptors made once, and the driver's two tensor-map encodes a TMA launch
// makes per call (2D maps of x and w, as the family's box-by-box path encodes them).
SampleSummary time_raw_cublaslt(int samples, int calls, const Problem& p, const void* x, const void* w, void* y,
                                cudaStream_t stream, const std::function<void()>& drain) {
  cublasLtHandle_t handle = nullptr;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtCreate(&handle));
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  const cudaDataType_t t = CUDA_R_16BF;
  const cublasOperation_t trans = CUBLAS_OP_T;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans)));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a, t, p.k, p.n, p.k));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b, t, p.k, p.m, p.k));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d, t, p.n, p.m, p.n));
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t found{};
  int count = 0;
  SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, op, a, b, d, d, pref, 1, &found, &count));
  SKINNYGEMM_CHECK(count == 1, "cuBLASLt offered no algorithm for " << p.str());
  const float alpha = 1.f, beta = 0.f;
  const auto matmul = [&] {
    SKINNYGEMM_CUBLAS_CHECK(cublasLtMatmul(handle, op, &alpha, w, a, x, b, &beta, y, d, y, d, &found.algo, nullptr, 0,
                                           stream));
  };
  matmul();
  std::vector<double> t_us;
  for (int s = 0; s < samples; ++s) t_us.push_back(time_host_calls(1, calls, matmul, drain).median);
  drain();
  cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {a, b, d}) cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(handle);
  return summarize_samples(std::move(t_us));
}

SampleSummary time_map_encodes(int samples, int calls, const Problem& p, const void* x, const void* w) {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  SKINNYGEMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault,
                                                         &found));
  SKINNYGEMM_CHECK(found == cudaDriverEntryPointSuccess && entry, "the CUDA driver has no cuTensorMapEncodeTiled");
  const auto encode_tiled = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  const auto encode = [&](const void* base, int64_t rows, int box_rows, CUtensorMap* map) {
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(p.k), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(p.k) * 2};
    const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)}, element_strides[2] = {1, 1};
    const CUresult r = encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides,
                                    box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    SKINNYGEMM_CHECK(r == CUDA_SUCCESS, "cuTensorMapEncodeTiled failed (CUresult " << static_cast<int>(r) << ")");
  };
  CUtensorMap maps[2];
  const auto both = [&] { encode(w, p.n, 32, &maps[0]), encode(x, p.m, 8, &maps[1]); };
  std::vector<double> t_us;
  for (int s = 0; s < samples; ++s) t_us.push_back(time_host_calls(1, calls, both, [] {}).median);
  return summarize_samples(std::move(t_us));
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

  // The same plan on the TMA family's first cut and on cuBLASLt, the picks at M <= 16 and above it on most shapes. Their
  // launches do per-call work the plan above may not: the TMA launch encodes its two tensor maps and looks up device
  // facts and the stream's workspace under locks on every call, cuBLASLt looks up its plan by a string key (a
  // read-only review, session 43). Reported without a target until measured.
  const DeviceInfo device = device_info(Backend::Cuda);
  for (const char* forced : {"tma", "cublaslt"}) {
    if (!supports(forced_config(forced, p, device), p, device, 16)) continue;  // the TMA family off sm_90
    Options f = gpu;
    f.config = forced;
    const Plan forced_plan(p, f);
    forced_plan.run(x, w, y, stream.s);
    const Paired r = time_paired(o.samples, calls, [&] { forced_plan.run(x, w, y, stream.s); }, launch, drain);
    rows.push_back(overhead_row(std::string("plan_run_") + forced, p.str() + " " + forced_plan.choice().config.name(),
                                r.total, r.launch, 0));
  }

  const SampleSummary lt = time_raw_cublaslt(o.samples, calls, p, x, w, y, stream.s, drain);
  rows.push_back(overhead_row("cublaslt_matmul_alone", p.str() + " cublasLtMatmul, descriptors made once", lt, hit.launch, 0));
  if (device.cc_major == 9) {
    const SampleSummary maps = time_map_encodes(o.samples, calls, p, x, w);
    rows.push_back(overhead_row("tma_two_map_encodes", p.str() + " two cuTensorMapEncodeTiled, no launch", maps,
                                SampleSummary{}, 0));
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
