// The GPU half of the benchmark (lab/bench_device.h) in builds without CUDA: a clear error instead of a link error.
#include "lab/bench_device.h"
#include "skinnygemm/error.h"

namespace skinnygemm::cuda {

void check_bench_memory(const Problem& problem) { check_bench_memory(problem, 0); }

void check_bench_memory(const Problem& problem, int64_t) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA, so " << problem.str()
                  << " cannot be benchmarked on a GPU; rebuild with -DSKINNYGEMM_CUDA=ON or use the cpu backend");
}

BenchResult bench(const BenchRequest& request) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA, so config '"
                  << request.config.name() << "' cannot be benchmarked on " << request.problem.str()
                  << "; rebuild with -DSKINNYGEMM_CUDA=ON or benchmark the cpu backend");
}
}  // namespace skinnygemm::cuda
