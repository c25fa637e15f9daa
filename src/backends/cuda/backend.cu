// cuda::gemm: K = 0 writes zeros; otherwise the config's family prepares its launch and runs it. (gemm() and
// FusedProjection prepare once through a Plan instead; this is the one-off path of the lab and the tests.)
#include "backends/cuda/check.cuh"
#include "kernels/family.h"
#include "runtime/backends.h"

namespace skinnygemm::cuda {

bool config_is_built(const Config& config) {
  const FamilyDescriptor& f = family(config.family);
  return f.gpu && f.device && f.device->built(config);
}

void gemm(const Problem& p, const void* x, const void* w, void* y, const Config& config, void* stream) {
  const std::size_t e = dtype_size(p.dtype);
  if (p.k == 0) {
    SKINNYGEMM_CUDA_CHECK(cudaMemset2DAsync(y, p.y_stride() * e, 0, p.n * e, p.m, static_cast<cudaStream_t>(stream)));
    return;
  }
  const FamilyDescriptor& f = family(config.family);
  SKINNYGEMM_CHECK(f.gpu && f.device, "config " << config.name() << " cannot run on the CUDA backend");
  f.device->prepare(p, config, device_info(), nullptr, 0)->run(x, w, y, stream);
}

void gemm_segments(const Problem& p, const void* x, const void* w, const OutputSegment* segments, int count,
                   const Config& config, void* stream) {
  const FamilyDescriptor& f = family(config.family);
  SKINNYGEMM_CHECK(f.device && f.device->writes_segments,
                   "config " << config.name() << " cannot write per-segment outputs (only the skinny kernels can)");
  SKINNYGEMM_CHECK(p.k > 0, "K=0 into segments: nothing to launch (the caller writes zeros)");
  f.device->prepare(p, config, device_info(), segments, count)->run(x, w, nullptr, stream);
}

}  // namespace skinnygemm::cuda
