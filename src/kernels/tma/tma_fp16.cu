// The TMA family's fp16 instances (kernels/tma/tma_instances.cuh).
#include "kernels/tma/tma_instances.cuh"

namespace skinnygemm::tma {
Kernel find_fp16(int rows, int tile_m, int boxes) { return find_instance<__half>(rows, tile_m, boxes); }
Kernel find_row_stream_fp16(int rows) { return find_row_stream<__half>(rows); }
}  // namespace skinnygemm::tma
