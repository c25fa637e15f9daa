// Launchers of the MLA layer's kernels (lab/cuda/mla_kernels.cuh) for the CUDA device (lab/cuda/mla.cu): argument
// checks with messages that name the value, then one cuda::launch per kernel (PDL when on).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "lab/mla.h"

namespace skinnygemm::cuda::mla {

void rmsnorm(const tune::MlaNormArgs& args, cudaStream_t stream);
void head_proj(const tune::MlaHeadProjArgs& args, cudaStream_t stream);

// CTAs of the split kernel resident at once on the current device (SMs x blocks per SM).
int64_t attention_slots();
// How the split kernel divides each sequence's context (tune::mla_split with this device's slots).
tune::MlaSplit attention_split(int64_t m, int64_t context, int64_t heads);
// Scratch units (one per sequence and chunk) the split kernel may need for up to max_m sequences: m x splits is
// at most 4 x slots / head groups + m.
int64_t attention_max_units(int64_t max_m);
// The split kernel into o_part ([units][heads][512] floats) and ml ([units][heads] float2), then the combine into
// args.o_lat; units = m x splits must be <= capacity_units.
void attention(const tune::MlaAttentionArgs& args, float* o_part, void* ml, int64_t capacity_units, cudaStream_t stream);

}  // namespace skinnygemm::cuda::mla
