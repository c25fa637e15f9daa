// Host time per call on the GPU (lab/overhead.h): gemm() on a plan-cache hit, Plan::run and FusedProjection::run,
// each in a graph-free loop of real launches, against the launch itself (an empty kernel through the same
// cudaLaunchKernelEx call with the same PDL attribute).
#include <algorithm>
#include <cstdint>
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

// As many parameter bytes as a GEMM launch passes (pointers, sizes and strides), so that the launch baseline
// copies the same argument block.
struct EmptyParams {
  const void* p[4];
  int64_t v[12];
};

__global__ void empty_kernel(EmptyParams) {}

OverheadRow gpu_row(const char* path, const Problem& p, const SampleSummary& total, const SampleSummary& launch,
                    double target_us) {
  OverheadRow r;
  r.path = path;
  r.problem = p.str();
  r.total_us = total.median;
  r.launch_us = launch.median;
  r.host_us = total.median - launch.median;
  r.best_host_us = total.min - launch.min;
  r.spread = total.spread;
  r.target_us = target_us;
  return r;
}

}  // namespace

std::vector<OverheadRow> measure_host_overhead_cuda(const OverheadOptions& o) {
  const int calls = std::min(o.calls, 256);
  cuda::Allocations mem;  // before the stream: freed after it has gone
  cuda::Stream stream;
  const Problem p{1, 256, 256, DType::BF16};
  char* x = mem.get(p.m * p.k * 2, "x");
  char* w = mem.get(p.n * p.k * 2, "w");
  char* y = mem.get(p.m * p.n * 2, "y");
  SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(x, 0, p.m * p.k * 2, stream.s));
  SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(w, 0, p.n * p.k * 2, stream.s));
  const auto drain = [&] { SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.s)); };
  Options gpu;
  gpu.backend = Backend::Cuda;
  gpu.stream = stream.s;

  const cuda::LaunchShape one{dim3(1), dim3(32), 0, 1};
  const EmptyParams params{};
  cuda::launch(empty_kernel, one, stream.s, params);
  const SampleSummary launch =
      time_host_calls(o.samples, calls, [&] { cuda::launch(empty_kernel, one, stream.s, params); }, drain);

  std::vector<OverheadRow> rows;
  gemm(p, x, w, y, gpu);  // the miss: makes and caches the plan
  const SampleSummary hit = time_host_calls(o.samples, calls, [&] { gemm(p, x, w, y, gpu); }, drain);
  rows.push_back(gpu_row("gemm_cache_hit", p, hit, launch, 0.2));

  const Plan plan(p, gpu);
  plan.run(x, w, y, stream.s);
  const SampleSummary run = time_host_calls(o.samples, calls, [&] { plan.run(x, w, y, stream.s); }, drain);
  rows.push_back(gpu_row("plan_run", p, run, launch, 0.1));

  // Two 128-row segments into adjacent columns of one output: one fused GEMM in place (one launch).
  Segment a{w, 128, 0, y, 256, 1, "a", p.k, DType::BF16};
  Segment b{w + 128 * p.k * 2, 128, 0, y + 128 * 2, 256, 1, "b", p.k, DType::BF16};
  FusedProjection fused({a, b}, Backend::Cuda, 1);
  RunOptions ro;
  ro.gemm = gpu;
  fused.run(x, p.k, 1, ro);
  const SampleSummary fused_run = time_host_calls(o.samples, calls, [&] { fused.run(x, p.k, 1, ro); }, drain);
  rows.push_back(gpu_row("fused_run", Problem{1, 256, p.k, DType::BF16}, fused_run, launch, 0.3));
  rows.push_back(gpu_row("launch_alone", Problem{1, 0, 0, DType::BF16}, launch, SampleSummary{}, 0));
  drain();
  return rows;
}

}  // namespace skinnygemm::tune
