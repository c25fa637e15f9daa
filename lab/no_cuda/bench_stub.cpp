// The GPU half of the benchmark (lab/bench_device.h) in builds without CUDA: a clear error instead of a link error.
#include "lab/bench_device.h"
#include "skinnygemm/error.h"

namespace skinnygemm::cuda {

BenchResult bench(const BenchRequest& request) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA, so config '"
                  << request.config.name() << "' cannot be benchmarked on " << request.problem.str()
                  << "; rebuild with -DSKINNYGEMM_CUDA=ON or benchmark the cpu backend");
}
}  // namespace skinnygemm::cuda
