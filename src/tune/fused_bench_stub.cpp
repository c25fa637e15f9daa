// The fused-projection benchmark's CUDA device when the library is built without CUDA. The whole body is guarded
// so that the top-level CMakeLists needs no change: in CUDA builds (SKINNYGEMM_WITH_CUDA=1 on the library target)
// this file compiles to nothing and src/cuda/fused_bench.cu provides the definition.
#include "tune/fused_bench_device.h"

#ifndef SKINNYGEMM_WITH_CUDA

namespace skinnygemm::tune {

std::unique_ptr<FusedBenchDevice> make_cuda_fused_device(const FusedSpec& spec, int64_t) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found), so the fusion "
                  << spec.name << " cannot be benchmarked on a GPU; rebuild with -DSKINNYGEMM_CUDA=ON or use "
                  << "--backend cpu (with a small --scale)");
}

}  // namespace skinnygemm::tune

#endif  // SKINNYGEMM_WITH_CUDA
