// The MLA layer's CUDA device when the library is built without CUDA. CMakeLists.txt compiles this file only then;
// otherwise lab/cuda/mla.cu provides the definition.
#include "lab/mla_runner.h"

namespace skinnygemm::tune {

std::unique_ptr<MlaDevice> make_cuda_mla_device(const MlaDims& dims, int64_t) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found), so the MLA layer of "
                  << dims.name() << " cannot run on a GPU; rebuild with -DSKINNYGEMM_CUDA=ON or use --backend cpu "
                  << "with a small --scale");
}

}  // namespace skinnygemm::tune
