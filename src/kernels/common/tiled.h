// What the skinny families (bulk; the TMA family its token tiles) share on the host: their config names
// (<family>_m<tile>_w<n>x<k>_u<unroll>_sk<split>), the listed cross product, the work decomposition and the
// checks of supports() that do not depend on the family. Host-only.
#pragma once

#include <string>
#include <vector>

#include "kernels/family.h"

namespace skinnygemm {

Config parse_tiled(const std::string& name, const std::vector<std::string>& parts, Family id);
std::string print_tiled(const Config& config);
std::vector<Config> listed_tiled(Family id);

// Tile and split arithmetic, shared by the launcher (grid sizes), the cost models and fits_shape.
struct Decomposition {
  int64_t row_tiles = 0;        // ceil(N / 16)
  int64_t row_blocks = 0;       // ceil(row_tiles / warps_n): CTAs along N
  int64_t ctas = 0;             // row_blocks * split_k
  int64_t k_chunks = 0;         // ceil(K / chunk_k of the family)
  int64_t chunks_per_warp = 0;  // ceil(k_chunks / (warps_k * split_k))
};
Decomposition decompose(const Config& config, const Problem& problem);

// The shape checks every tiled family makes (token tile, K a positive multiple of 8, CTAs along N, shared memory
// against the device); the family's own rule about its K slices comes first through slices_fit.
bool tiled_fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not,
                      bool (*slices_fit)(const Config&, const Problem&, const Decomposition&, std::string*));
// A GPU of sm_90a, an instance built into this library, 16-byte aligned operands, then the family's fits_shape.
bool tiled_supports(const Config& c, const Problem& p, const DeviceInfo& dev, int alignment, std::string* why_not);

int64_t ceil_div(int64_t a, int64_t b);

}  // namespace skinnygemm
