// Communication between the ranks of a tensor-parallel step (docs/step.md, "Several GPUs"): the interface the
// executor and run_step use, and its NCCL implementation (lab/cuda/step_nccl.cu; lab/no_nccl/step_nccl_stub.cpp in builds
// without NCCL, where every entry point but step_nccl_built() throws "built without NCCL").
// Host-only header: streams and buffers are void*, as in the public API.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "skinnygemm/dtype.h"

namespace skinnygemm::tune {

class StepComm {
 public:
  virtual ~StepComm() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Sums count elements at data (device memory) over the ranks, in place, enqueued on stream. Capturable into
  // a CUDA graph; every rank must enqueue the same sequence of calls with the same counts.
  virtual void all_reduce(void* data, int64_t count, DType dtype, void* stream) = 0;
  // The largest value over the ranks; blocking (waits for stream). Ranks use it to take the same decisions:
  // how often to replay a graph that holds collectives, whether any rank failed a check.
  virtual int64_t max(int64_t value, void* stream) = 0;
};

// Whether this library was built with NCCL (the CMake option SKINNYGEMM_NCCL found nccl.h and libnccl).
bool step_nccl_built();

// A new ncclUniqueId as hex text. The calling process hosts NCCL's bootstrap root for it, so it must stay alive
// until every rank has joined (the parent of the rank processes waits for them).
std::string nccl_unique_id_hex();

// Selects GPU `rank` (of the visible ones) as this process's device, joins the communicator of `ranks` ranks
// named by id_hex (nccl_unique_id_hex's text) and checks one all-reduce of known values (an Error with the
// values when the sum is wrong). Must run before anything else in the process touches a GPU.
std::unique_ptr<StepComm> make_nccl_step_comm(int rank, int ranks, const std::string& id_hex, DType dtype);

}  // namespace skinnygemm::tune
