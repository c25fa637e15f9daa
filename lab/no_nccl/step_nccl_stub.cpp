// The step's NCCL entry points (lab/step_comm.h) when the library is built without NCCL: --ranks still parses and
// fails with this clear message. CMakeLists.txt compiles this file only then; otherwise lab/cuda/step_nccl.cu
// provides the definitions.
#include "lab/step_comm.h"

#include "skinnygemm/error.h"

namespace skinnygemm::tune {

namespace {
[[noreturn]] void no_nccl(const std::string& what) {
  SKINNYGEMM_FAIL(what << ": skinnygemm was built without NCCL (it needs the CUDA backend and "
                             << "nccl.h + libnccl, found by CMake's SKINNYGEMM_NCCL=AUTO; set NCCL_HOME or "
                             << "-DSKINNYGEMM_NCCL=ON to see what is missing), so the step cannot run across GPUs; "
                             << "run it on one GPU with --ranks 1");
}
}  // namespace

bool step_nccl_built() { return false; }

std::string nccl_unique_id_hex() { no_nccl("creating an NCCL id"); }

std::unique_ptr<StepComm> make_nccl_step_comm(int rank, int ranks, const std::string&, DType) {
  no_nccl("rank " + std::to_string(rank) + " of --ranks " + std::to_string(ranks));
}

}  // namespace skinnygemm::tune
