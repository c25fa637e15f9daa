// Instance lookup of the TMA family: every (rows, token tile, boxes) of config.h for one dtype; one .cu per dtype
// so that the two compile in parallel.
#pragma once

#include "kernels/tma/tma_gemm.cuh"

namespace skinnygemm::tma {

using Kernel = void (*)(CUtensorMap, CUtensorMap, TmaParams);

template <typename T>
Kernel find_instance(int rows, int tile_m, int boxes) {
  auto by_tile = [&](auto rows_c, auto boxes_c) -> Kernel {
    constexpr int R = decltype(rows_c)::value, B = decltype(boxes_c)::value;
    switch (tile_m) {
      case 8: return &tma_gemm_kernel<T, R, 8, B>;
      case 16: return &tma_gemm_kernel<T, R, 16, B>;
      case 32: return &tma_gemm_kernel<T, R, 32, B>;
      case 64: return &tma_gemm_kernel<T, R, 64, B>;
      default: return nullptr;
    }
  };
  using I64 = std::integral_constant<int, 64>;
  using I128 = std::integral_constant<int, 128>;
  using B1 = std::integral_constant<int, 1>;
  using B2 = std::integral_constant<int, 2>;
  if (rows == 64) return boxes == 1 ? by_tile(I64{}, B1{}) : boxes == 2 ? by_tile(I64{}, B2{}) : nullptr;
  if (rows == 128) return boxes == 1 ? by_tile(I128{}, B1{}) : boxes == 2 ? by_tile(I128{}, B2{}) : nullptr;
  return nullptr;
}

Kernel find_bf16(int rows, int tile_m, int boxes);
Kernel find_fp16(int rows, int tile_m, int boxes);

}  // namespace skinnygemm::tma
