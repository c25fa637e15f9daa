// The launcher of the skinny family (bulk): a prepared launch holds the kernel, grid, shared
// memory and parameters resolved once, and each family's device half (src/kernels/<family>/device.cu) is
// SkinnyFamilyDevice over its own instance lookup.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "kernels/common/skinny_common.cuh"
#include "kernels/family.h"

namespace skinnygemm::cuda {

// Persistent: as many CTAs as are resident walk the row blocks. OneBlockPerCta: a CTA per row block (the bulk
// ring: a persistent grid would keep the next kernel's CTAs off the SMs, docs/kernels.md "Session 4").
enum class SkinnyGrid { Persistent, OneBlockPerCta };

// The launch of kernel (an instance of config; null: an Error saying it is not built) on problem; with segments (count 1..4) the epilogue writes each
// segment's output rows to its own destination instead of y (runtime/backends.h, OutputSegment).
std::unique_ptr<PreparedLaunch> prepare_skinny(SkinnyKernel kernel, const Problem& problem, const Config& config,
                                               const DeviceInfo& device, const OutputSegment* segments, int count,
                                               SkinnyGrid grid);

// A family's device half from its instance lookup (nullptr when the (dtype, config) instance is not built).
template <SkinnyKernel (*Find)(const Config&, DType), SkinnyGrid kGrid>
struct SkinnyFamilyDevice {
  static bool built(const Config& c) { return Find(c, DType::BF16) != nullptr && Find(c, DType::FP16) != nullptr; }
  static std::unique_ptr<PreparedLaunch> prepare(const Problem& p, const Config& c, const DeviceInfo& device,
                                                 const OutputSegment* segments, int count) {
    return prepare_skinny(Find(c, p.dtype), p, c, device, segments, count, kGrid);
  }
  static constexpr FamilyDevice device{&built, &prepare, /*writes_segments=*/true};
};

}  // namespace skinnygemm::cuda
