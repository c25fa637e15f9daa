// The reg family (kernels/reg/kernel.cuh): the swapped-operand MMAs with w and x in a per-lane register ring.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "kernels/common/residency.h"
#include "kernels/common/tiled.h"
#include "kernels/common/tiling.h"

namespace skinnygemm {

#ifdef SKINNYGEMM_WITH_CUDA
namespace cuda {
extern const FamilyDevice reg_device;  // kernels/reg/device.cu
}
#endif

namespace {

constexpr TiledTraits kTraits{kSkinnyTileM, std::size(kSkinnyTileM), kChunkK};

// Constants of the session-5 model, fitted by scripts/heuristic_cv.py --constants (bounded least squares on log
// time) to every candidate of the tuning runs in docs/benchmarks/h200/tune/ (701 points at M = 1..64, 28306
// timings), judged by 5-fold cross-validation over shapes; models/heldout_fourth.json was never measured before.
// One set per token tile (a larger tile changes registers, MMAs and x loads per chunk: one shared model was 17%
// off at the median, per tile 9-10%, m32 18%). Each warp keeps `unroll` chunks in flight and pays a round trip
// per `unroll` chunks of its slice; the SM holding the most CTAs streams the most bytes; a split across a
// cluster costs a DSMEM reduction.
struct RegConstants {
  double gap_us, round_us, hbm_bytes_per_us, split_us, sm_burst, block_us, split_lin_us, chunk_us;
};
constexpr RegConstants kReg8{0.1095, 0.9242, 3.29e6, 0.2519, 1.549, 1.972, 0, 0};
constexpr RegConstants kReg16{0, 0.09544, 3.105e6, 0.36, 3.997, 2.632, 0, 0.4277};
constexpr RegConstants kReg32{0.539, 0, 2.58e6, 0.1979, 1.103, 2.6, 0, 0.6264};
constexpr RegConstants kReg64{0.254, 1.764, 7.0e6, 2.001, 2.094, 3.0, 0, 0};

int reg_registers(const Config& c) {  // ptxas -v, sm_90a, bf16: the register ring across persistent row blocks
  const bool u4 = c.unroll == 4;
  switch (c.tile_m) {
    case 8: return u4 ? 112 : 64;
    case 16: return u4 ? 145 : 90;
    case 32: return u4 ? 246 : 144;
    default: return 244;
  }
}

int64_t reg_smem_bytes(const Config& c, const Problem&) {  // the FP32 partials only: the ring is in registers
  return static_cast<int64_t>(partial_floats(c.tile_m, c.warps_n, c.warps_k)) * 4;
}

bool reg_fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not) {
  return tiled_fits_shape(c, p, dev, why_not, every_warp_has_a_chunk);
}

CostBreakdown reg_estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  const RegConstants& k = c.tile_m <= 8 ? kReg8 : c.tile_m <= 16 ? kReg16 : c.tile_m <= 32 ? kReg32 : kReg64;
  CostBreakdown b;
  const double bytes = static_cast<double>(p.weight_bytes());
  const double sms = std::max(1, dev.sms);
  const int64_t per_sm_limit = resident_ctas_per_sm(dev, c.threads(), reg_registers(c), 0);
  const int64_t row_blocks = ceil_div(ceil_div(p.n, 16), std::max(1, c.warps_n));
  const int64_t clusters =
      std::min<int64_t>(row_blocks, std::max<int64_t>(1, per_sm_limit * static_cast<int64_t>(sms) / c.split_k));
  const int64_t blocks_per_cta = ceil_div(row_blocks, clusters);
  const int64_t ctas_per_sm = ceil_div(clusters * c.split_k, static_cast<int64_t>(sms));
  const int64_t chunks_per_warp = ceil_div(ceil_div(p.k, kChunkK), static_cast<int64_t>(c.warps_k) * c.split_k);
  const double rounds =
      static_cast<double>(blocks_per_cta) * std::max(1.0, static_cast<double>(chunks_per_warp) / std::max(1, c.unroll));
  const double sm_bytes =
      static_cast<double>(ctas_per_sm * blocks_per_cta) * 16.0 * c.warps_n * (static_cast<double>(p.k) / c.split_k) * 2;
  b.stream_us = bytes / k.hbm_bytes_per_us;
  const double mem_us = std::max(b.stream_us, sm_bytes / (k.sm_burst * k.hbm_bytes_per_us / sms));
  b.chain_us = rounds * k.round_us + static_cast<double>(chunks_per_warp * blocks_per_cta) * k.chunk_us;
  b.ctas_per_sm = static_cast<int>(ctas_per_sm);
  b.wave_eff = static_cast<double>(row_blocks * c.split_k) / (static_cast<double>(ctas_per_sm * blocks_per_cta) * sms);
  b.inflight_eff = b.stream_us / mem_us;
  b.us = k.gap_us + std::max(mem_us, b.chain_us) + k.split_us * std::log2(static_cast<double>(c.split_k)) +
         k.block_us * static_cast<double>(blocks_per_cta) + k.split_lin_us * (c.split_k - 1);
  return b;
}

std::vector<ModelConstants> reg_constants() {
  std::vector<ModelConstants> out;
  for (const auto& [model, k] : {std::pair{"reg8", kReg8}, std::pair{"reg16", kReg16}, std::pair{"reg32", kReg32},
                                 std::pair{"reg64", kReg64}})
    out.push_back({model,
                   {{"gap_us", k.gap_us}, {"round_us", k.round_us}, {"hbm_bytes_per_us", k.hbm_bytes_per_us},
                    {"split_us", k.split_us}, {"sm_burst", k.sm_burst}, {"block_us", k.block_us},
                    {"split_lin_us", k.split_lin_us}, {"chunk_us", k.chunk_us}}});
  return out;
}

// Scored at the smallest token tile holding M, in the layouts the tuner measures (w1x8, w1x4, w2x4, w4x2).
bool reg_heuristic_scores(const Config& c, const Problem& p) {
  const int tile = p.m <= 8 ? 8 : p.m <= 16 ? 16 : p.m <= 32 ? 32 : 64;
  const bool layout = (c.warps_n == 1 && (c.warps_k == 8 || c.warps_k == 4)) || (c.warps_n == 2 && c.warps_k == 4) ||
                      (c.warps_n == 4 && c.warps_k == 2);
  return c.tile_m == tile && layout;
}

}  // namespace

extern const FamilyDescriptor reg_family{"reg", /*gpu=*/true, /*kernel=*/true, &kTraits,
                                         parse_tiled, print_tiled, listed_tiled, /*storable=*/nullptr,
                                         tiled_supports, reg_fits_shape, reg_smem_bytes, reg_registers,
                                         reg_estimate, reg_heuristic_scores, /*single_wave=*/false,
                                         reg_constants, SKINNYGEMM_DEVICE_HALF(cuda::reg_device),
                                         /*first_cut=*/nullptr, /*structural_pick=*/nullptr};

}  // namespace skinnygemm
