// The bulk family (kernels/bulk/kernel.cuh): the swapped-operand MMAs fed by a CTA-wide ring of bulk copies, one
// row block per CTA, the whole ring in flight before the PDL wait.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "kernels/bulk/tiling.h"
#include "kernels/common/residency.h"
#include "kernels/common/tiled.h"

namespace skinnygemm {

#ifdef SKINNYGEMM_WITH_CUDA
namespace cuda {
extern const FamilyDevice bulk_device;  // kernels/bulk/device.cu
}
#endif

namespace {

constexpr TiledTraits kTraits{kSkinnyTileM, std::size(kSkinnyTileM), kBulkChunkK};

// The stage ring stops at M = 4 as in the shipped table (scripts/tune-table): a register ring launched behind a
// stage ring runs at half speed (docs/kernels.md, "Session 4").
constexpr int64_t kHeuristicMaxM = 4;

// Constants of the session-5 model (fitted like the reg family's, kernels/reg/family.cpp). A CTA owns 16 rows and
// K / split of them; its `slots` stages refill once per HBM round trip (at least one round trip however short K
// is); CTAs per SM are set by shared memory (depends on M) and threads; CTAs beyond one resident wave wait for a
// second; a cluster split costs a reduction.
struct BulkConstants {
  double gap_us, hbm_bytes_per_us, round_us, stage_us, x_row, split_us, split_lin_us, wave_us, slot_us;
};
constexpr BulkConstants kBulk{0.8603, 5.066e6, 0.621, 0.8985, 0.03689, 0, 0.09956, 2.765, 0};

int bulk_registers(const Config& c) { return c.tile_m <= 16 ? 40 : c.tile_m == 32 ? 56 : 80; }  // ptxas -v

int64_t bulk_smem_bytes(const Config& c, const Problem& p) {
  return bulk_launch_smem_bytes(c.tile_m, static_cast<int>(std::min<int64_t>(p.m, c.tile_m)), c.warps_k, c.unroll,
                                c.split_k);
}

// One warp row whose K warps share the ring's slots evenly, and a stage for every CTA of the split (warps without
// a stage idle: allowed).
bool bulk_slices_fit(const Config& c, const Problem& p, const Decomposition& d, std::string* why_not) {
  if (c.warps_n != 1 || bulk_slots(c.unroll) % c.warps_k != 0)
    return fail(why_not, c.name() + ": the bulk ring needs one warp row (w1xK) and its " +
                             std::to_string(bulk_slots(c.unroll)) + " slots shared evenly by the K warps");
  if (d.k_chunks < c.split_k)
    return fail(why_not, "K=" + std::to_string(p.k) + " has " + std::to_string(d.k_chunks) +
                             " stages of 256, fewer than the " + std::to_string(c.split_k) + " CTAs splitting K");
  return true;
}

bool bulk_fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not) {
  return tiled_fits_shape(c, p, dev, why_not, bulk_slices_fit);
}

CostBreakdown bulk_estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  const BulkConstants& k = kBulk;
  CostBreakdown b;
  const double bytes = static_cast<double>(p.weight_bytes());
  const double sms = std::max(1, dev.sms);
  // Shared memory and threads bound the resident CTAs (+ the runtime's reserved shared memory per CTA).
  const int64_t per_sm = resident_ctas_per_sm(dev, c.threads(), 0, bulk_smem_bytes(c, p) + 1024);
  const int64_t ctas = ceil_div(p.n, 16) * c.split_k;
  const double stages_per_cta = static_cast<double>(ceil_div(ceil_div(p.k, kBulkChunkK), c.split_k));
  const double slots = bulk_slots(c.unroll);
  const double waves = std::ceil(static_cast<double>(ctas) / (sms * static_cast<double>(per_sm)));
  const double cta_bytes = 16.0 * (static_cast<double>(p.k) / c.split_k) * 2;
  b.stream_us = bytes / k.hbm_bytes_per_us;
  const double mem_us = std::max(b.stream_us, waves * per_sm * cta_bytes / (k.hbm_bytes_per_us / sms));
  const double x_rows = static_cast<double>(std::min<int64_t>(p.m, c.tile_m));
  b.chain_us = waves * (std::max(1.0, stages_per_cta / slots) * k.round_us +
                        stages_per_cta / c.warps_k * k.stage_us * (1 + k.x_row * (x_rows - 1)));
  b.ctas_per_sm = static_cast<int>(per_sm);
  b.waves = static_cast<double>(ctas) / (sms * static_cast<double>(per_sm));
  b.wave_eff = b.waves / waves;
  b.inflight_eff = b.stream_us / mem_us;
  b.us = k.gap_us + std::max(mem_us, b.chain_us) + k.split_us * std::log2(static_cast<double>(c.split_k)) +
         k.split_lin_us * (c.split_k - 1) + k.wave_us * (waves - 1) + k.slot_us * slots;
  return b;
}

std::vector<ModelConstants> bulk_constants() {
  const BulkConstants& k = kBulk;
  return {{"bulk",
           {{"gap_us", k.gap_us}, {"hbm_bytes_per_us", k.hbm_bytes_per_us}, {"round_us", k.round_us},
            {"stage_us", k.stage_us}, {"x_row", k.x_row}, {"split_us", k.split_us}, {"split_lin_us", k.split_lin_us},
            {"wave_us", k.wave_us}, {"slot_us", k.slot_us}}}};
}

// The 8-token tile in layouts w1x4 and w1x8, up to M = kHeuristicMaxM.
bool bulk_heuristic_scores(const Config& c, const Problem& p) {
  return c.tile_m == 8 && p.m <= kHeuristicMaxM && c.warps_n == 1 && (c.warps_k == 4 || c.warps_k == 8);
}

}  // namespace

// single_wave: the model misses what a second wave costs (7168x1536 M = 1 predicted 0.82x cuBLASLt, measured
// 1.04x), so the heuristic scores the stage ring only where every CTA is resident at once.
extern const FamilyDescriptor bulk_family{"bulk", /*gpu=*/true, /*kernel=*/true, &kTraits,
                                          parse_tiled, print_tiled, listed_tiled, /*storable=*/nullptr,
                                          tiled_supports, bulk_fits_shape, bulk_smem_bytes, bulk_registers,
                                          bulk_estimate, bulk_heuristic_scores, /*single_wave=*/true,
                                          bulk_constants, SKINNYGEMM_DEVICE_HALF(cuda::bulk_device),
                                          /*first_cut=*/nullptr, /*structural_pick=*/nullptr};

}  // namespace skinnygemm
