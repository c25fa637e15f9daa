// The step's CUDA device when the library is built without CUDA. The whole body is guarded so that the
// top-level CMakeLists needs no change: in CUDA builds (SKINNYGEMM_WITH_CUDA=1 on the library target) this
// file compiles to nothing and src/cuda/step.cu provides the definition.
#include "tune/step_runner.h"

#ifndef SKINNYGEMM_WITH_CUDA

namespace skinnygemm::tune {

std::unique_ptr<StepDevice> make_cuda_step_device(const StepModel& model, int64_t, StepRank) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found), so the step of "
                  << model.model << " at TP" << model.tp << " cannot run on a GPU; rebuild with "
                  << "-DSKINNYGEMM_CUDA=ON or use --backend cpu with a small --scale");
}

}  // namespace skinnygemm::tune

#endif  // SKINNYGEMM_WITH_CUDA
