// Walks the constexpr lists of include/skinnygemm/config.h (the one source of truth) at compile time and
// returns the instance for a run-time (tile_m, unroll), so that the built set is exactly the listed set.
#pragma once

#include <iterator>

#include "kernels/common/skinny_common.cuh"
#include "skinnygemm/config.h"

namespace skinnygemm::cuda {

template <class Kernels, typename T, int kTile, std::size_t I = 0>
SkinnyKernel find_unroll(int unroll) {
  if constexpr (I == std::size(kUnroll)) {
    return nullptr;
  } else {
    if constexpr (!instance_listed(kTile, kUnroll[I])) {
      return find_unroll<Kernels, T, kTile, I + 1>(unroll);
    } else {
      return unroll == kUnroll[I] ? Kernels::template get<T, kTile, kUnroll[I]>()
                                  : find_unroll<Kernels, T, kTile, I + 1>(unroll);
    }
  }
}

template <class Kernels, typename T, std::size_t I = 0>
SkinnyKernel find_instance(int tile, int unroll) {
  if constexpr (I == std::size(Kernels::kTiles)) {
    return nullptr;
  } else {
    return tile == Kernels::kTiles[I] ? find_unroll<Kernels, T, Kernels::kTiles[I]>(unroll)
                                      : find_instance<Kernels, T, I + 1>(tile, unroll);
  }
}


}  // namespace skinnygemm::cuda
