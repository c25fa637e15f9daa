// Every kernel launch goes through launch(): programmatic dependent launch (PDL) on SM90+ unless
// SKINNYGEMM_PDL=0, an optional thread-block cluster, and an error check right after the launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <thread>
#include <tuple>

#include "backends/cuda/check.cuh"

namespace skinnygemm::cuda {

bool pdl_enabled();  // SKINNYGEMM_PDL != "0" and the device is SM90+ (cached)

// Raises a kernel's dynamic shared-memory limit on the current device (only needed above the 48 KB default) to the
// largest size any of its launches there has asked for. The attribute is per device, so the record is per (device,
// kernel): one per kernel let a second GPU of the process launch without it and fail (the audit of session 36).
// The shared-memory carveout stays the driver's choice: forcing the largest one on every kernel made the register
// ring (retired in 0.2.0) 1.8x slower, its loads in flight needing L1 (docs/kernels.md "Session 4").
void allow_dynamic_smem(const void* kernel, std::size_t bytes);

// What a per-stream resource (a split reduction's workspace) is keyed by: the device and the handle, and for the
// per-thread default stream (cudaStreamPerThread, one handle that names another stream in every thread) the
// calling thread too. Two handles that name one stream at different times (a destroyed stream's handle reused)
// share the resource: the caller synchronizes a stream before destroying it, as for any work on it.
struct StreamKey {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::thread::id thread;  // set for cudaStreamPerThread only
  bool operator<(const StreamKey& o) const {
    return std::tie(device, stream, thread) < std::tie(o.device, o.stream, o.thread);
  }
};
StreamKey stream_key(cudaStream_t stream);

struct LaunchShape {
  dim3 grid;
  dim3 block;
  std::size_t smem = 0;
  int cluster_x = 1;  // CTAs per cluster along x (1 = no cluster attribute)
};

template <typename... KernelArgs, typename... Args>
void launch(void (*kernel)(KernelArgs...), const LaunchShape& shape, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = shape.grid;
  config.blockDim = shape.block;
  config.dynamicSmemBytes = shape.smem;
  config.stream = stream;
  cudaLaunchAttribute attrs[2];
  unsigned n = 0;
  if (pdl_enabled()) {
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  if (shape.cluster_x > 1) {
    attrs[n].id = cudaLaunchAttributeClusterDimension;
    attrs[n].val.clusterDim.x = static_cast<unsigned>(shape.cluster_x);
    attrs[n].val.clusterDim.y = 1;
    attrs[n].val.clusterDim.z = 1;
    ++n;
  }
  config.attrs = attrs;
  config.numAttrs = n;
  const cudaError_t status = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  // On success a pending error is the caller's (their own launch before ours) and stays theirs; a failed launch's own
  // is cleared by the check (check.cuh). Until session 43 every launch cleared whatever was pending.
  SKINNYGEMM_CUDA_CHECK(status);
}

}  // namespace skinnygemm::cuda
