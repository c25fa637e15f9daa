// Instance lookup of the TMA family: every (rows, token tile, boxes) of config.h that tma_shape.h's boxes_built
// accepts, for one dtype; one .cu per dtype so that the two compile in parallel.
#pragma once

#include "kernels/tma/row_stream.cuh"
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
  // 4, 8 and 16 boxes per stage (one 3D copy each, tma_launch.cu): lab candidates, named but not listed (family.cpp),
  // built where tma_shape.h's boxes_built says so, until the step judges them.
  auto by_boxes = [&](auto rows_c) -> Kernel {
    constexpr int R = decltype(rows_c)::value;
    auto wide = [&](auto boxes_c) -> Kernel {
      constexpr int B = decltype(boxes_c)::value;
      if constexpr (boxes_built(R, 16, B)) {
        if (tile_m == 8) return &tma_gemm_kernel<T, R, 8, B>;
        if (tile_m == 16) return &tma_gemm_kernel<T, R, 16, B>;
      }
      return nullptr;
    };
    if (boxes == 1) return by_tile(rows_c, std::integral_constant<int, 1>{});
    if (boxes == 2) return by_tile(rows_c, std::integral_constant<int, 2>{});
    if (boxes == 4) return wide(std::integral_constant<int, 4>{});
    if (boxes == 8) return wide(std::integral_constant<int, 8>{});
    if (boxes == 16) return wide(std::integral_constant<int, 16>{});
    return nullptr;
  };
  switch (rows) {
    case 16: return by_boxes(std::integral_constant<int, 16>{});
    case 32: return by_boxes(std::integral_constant<int, 32>{});
    case 64: return by_boxes(std::integral_constant<int, 64>{});
    case 128: return by_boxes(std::integral_constant<int, 128>{});
    default: return nullptr;
  }
}

// The row stream's instances (row_stream.cuh): one per weight-row count; the token tile is a launch argument.
template <typename T>
Kernel find_row_stream(int rows) {
  switch (rows) {
    case 8: return &row_stream_kernel<T, 8>;
    case 16: return &row_stream_kernel<T, 16>;
    case 32: return &row_stream_kernel<T, 32>;
    default: return nullptr;
  }
}

Kernel find_bf16(int rows, int tile_m, int boxes);
Kernel find_fp16(int rows, int tile_m, int boxes);
Kernel find_row_stream_bf16(int rows);
Kernel find_row_stream_fp16(int rows);

}  // namespace skinnygemm::tma
