// Host side of the skinny kernel families (mma, simt): instance lookup and the launcher.
#pragma once

#include <cuda_runtime.h>

#include "runtime/backends.h"
#include "kernels/common/skinny_common.cuh"
#include "skinnygemm/config.h"
#include "skinnygemm/problem.h"

namespace skinnygemm::cuda {

using SkinnyKernel = void (*)(SkinnyParams);

// The instance for (family, dtype, tile_m, unroll), or nullptr when it is not built.
// Defined in src/kernels/<family>/<family>_<dtype>.cu, one file per (family, dtype) so they compile in parallel.
SkinnyKernel find_mma_bf16(int tile_m, int unroll);
SkinnyKernel find_mma_fp16(int tile_m, int unroll);
SkinnyKernel find_reg_bf16(int tile_m, int unroll);
SkinnyKernel find_reg_fp16(int tile_m, int unroll);
SkinnyKernel find_bulk_bf16(int tile_m, int unroll);
SkinnyKernel find_bulk_fp16(int tile_m, int unroll);
SkinnyKernel find_simt_bf16(int tile_m, int unroll);
SkinnyKernel find_simt_fp16(int tile_m, int unroll);
SkinnyKernel find_skinny_kernel(const Config& config, DType dtype);

// Launches config on problem (the caller checked supports()). With segments (count 1..4), the epilogue writes
// each segment's output rows to its own destination instead of y (runtime/backends.h, OutputSegment).
void launch_skinny(const Problem& problem, const Config& config, const void* x, const void* w, void* y,
                   cudaStream_t stream, const OutputSegment* segments = nullptr, int count = 0);

}  // namespace skinnygemm::cuda
