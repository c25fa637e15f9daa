// The step's CUDA device when the library is built without CUDA. CMakeLists.txt compiles this file only then;
// otherwise lab/cuda/step.cu provides the definition.
#include "lab/step_runner.h"

namespace skinnygemm::tune {

std::unique_ptr<StepDevice> make_cuda_step_device(const StepModel& model, int64_t, StepRank) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found), so the step of "
                  << model.model << " at TP" << model.tp << " cannot run on a GPU; rebuild with "
                  << "-DSKINNYGEMM_CUDA=ON or use --backend cpu with a small --scale");
}

}  // namespace skinnygemm::tune
