// The launcher of the skinny family (bulk): a prepared launch holds the kernel, grid, shared
// memory and parameters resolved once, and each family's device half (src/kernels/<family>/device.cu) is
// SkinnyFamilyDevice over its own instance lookup.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "kernels/common/skinny_common.cuh"
#include "kernels/family.h"

namespace skinnygemm::cuda {

// The launch of kernel (an instance of config; null: an Error saying it is not built) on problem, one CTA (or cluster
// along x) per row block: a persistent grid would keep the next kernel's CTAs off the SMs (docs/kernels.md "Session
// 4"; the persistent option, unused since, was deleted in session 43). With segments (count 1..4) the epilogue writes
// each segment's output rows to its own destination instead of y (runtime/backends.h, OutputSegment).
std::unique_ptr<PreparedLaunch> prepare_skinny(SkinnyKernel kernel, const Problem& problem, const Config& config,
                                               const OutputSegment* segments, int count);

// A family's device half from its instance lookup (nullptr when the (dtype, config) instance is not built).
template <SkinnyKernel (*Find)(const Config&, DType)>
struct SkinnyFamilyDevice {
  static bool built(const Config& c) { return Find(c, DType::BF16) != nullptr && Find(c, DType::FP16) != nullptr; }
  static std::unique_ptr<PreparedLaunch> prepare(const Problem& p, const Config& c, const DeviceInfo&,
                                                 const OutputSegment* segments, int count) {
    return prepare_skinny(Find(c, p.dtype), p, c, segments, count);
  }
  static constexpr FamilyDevice device{&built, &prepare, /*writes_segments=*/true};
};

}  // namespace skinnygemm::cuda
