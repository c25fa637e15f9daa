// The TMA family's bf16 instances (kernels/tma/tma_instances.cuh).
#include "kernels/tma/tma_instances.cuh"

namespace skinnygemm::tma {
Kernel find_bf16(int rows, int tile_m, int boxes) { return find_instance<__nv_bfloat16>(rows, tile_m, boxes); }
Kernel find_row_stream_bf16(int rows) { return find_row_stream<__nv_bfloat16>(rows); }
}  // namespace skinnygemm::tma
