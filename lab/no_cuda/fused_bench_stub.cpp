// The fused-projection benchmark's CUDA device when the library is built without CUDA. CMakeLists.txt compiles this
// file only then; otherwise lab/cuda/fused_bench.cu provides the definition.
#include "lab/fused_bench_device.h"

namespace skinnygemm::tune {

std::unique_ptr<FusedBenchDevice> make_cuda_fused_device(const FusedSpec& spec, int64_t) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found), so the fusion "
                  << spec.name << " cannot be benchmarked on a GPU; rebuild with -DSKINNYGEMM_CUDA=ON or use "
                  << "--backend cpu (with a small --scale)");
}

}  // namespace skinnygemm::tune
