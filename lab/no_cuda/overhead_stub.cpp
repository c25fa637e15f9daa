// The GPU host-overhead measurement when the library is built without CUDA (lab/cuda/overhead.cu otherwise).
#include "lab/overhead.h"
#include "skinnygemm/error.h"

namespace skinnygemm::tune {

std::vector<OverheadRow> measure_host_overhead_cuda(const OverheadOptions&) {
  SKINNYGEMM_FAIL("skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found): `overhead --backend "
                  "cuda` needs a CUDA build; the CPU paths run with --backend cpu");
}

}  // namespace skinnygemm::tune
