// Every kernel launch goes through launch(): programmatic dependent launch (PDL) on SM90+ unless
// SKINNYGEMM_PDL=0, an optional thread-block cluster, and an error check right after the launch.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/check.cuh"

namespace skinnygemm::cuda {

bool pdl_enabled();  // SKINNYGEMM_PDL != "0" and the device is SM90+ (cached)

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
  cudaGetLastError();  // a failed launch leaves its error behind for the next unrelated check: clear it
  SKINNYGEMM_CUDA_CHECK(status);
}

}  // namespace skinnygemm::cuda
