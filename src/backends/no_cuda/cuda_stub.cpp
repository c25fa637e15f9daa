// The CUDA seam when the library is built without CUDA (CMake drops this file from CUDA builds), so that
// selection, the CLI and the tests can ask "is there a GPU?" and get a clear answer instead of a link error.
#include "runtime/backends.h"
#include "skinnygemm/error.h"

namespace skinnygemm::cuda {

bool built() { return false; }

bool available() { return false; }

int device_count() { return 0; }

int current_device() { return 0; }

const DeviceInfo& device_info() {
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

Config cublaslt_identity(const Problem& problem, int position, int) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA, so cuBLASLt cannot name its algorithm at position "
                  << position << " for " << problem.str() << "; rebuild with -DSKINNYGEMM_CUDA=ON on a GPU machine");
}

}  // namespace skinnygemm::cuda
