// The CUDA seam when the library is built without CUDA (CMake drops this file from CUDA builds), so that
// selection, the CLI and the tests can ask "is there a GPU?" and get a clear answer instead of a link error.
#include "core/backends.h"
#include "skinnygemm/error.h"

namespace skinnygemm::cuda {

bool built() { return false; }

bool available() { return false; }

int device_count() { return 0; }

DeviceInfo device_info() {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found), so there is no "
                  "CUDA device to describe; rebuild with -DSKINNYGEMM_CUDA=ON or use the cpu backend");
}

bool config_is_built(const Config&) { return false; }

void gemm(const Problem& problem, const void*, const void*, void*, const Config& config, void*) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA, so config '"
                  << config.name() << "' cannot run " << problem.str()
                  << "; rebuild with -DSKINNYGEMM_CUDA=ON or use the cpu backend");
}

void gemm_segments(const Problem& problem, const void*, const void*, const OutputSegment*, int, const Config& config,
                   void*) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA, so config '"
                  << config.name() << "' cannot run " << problem.str() << " into segments");
}

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
