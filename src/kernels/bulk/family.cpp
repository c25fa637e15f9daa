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

// Scored at the smallest token tile holding M up to M = 32 (bulk_heuristic_scores). Session 34's tuning run
// (docs/benchmarks/h200/tune/tune-small-reg-points-7bb53b6.json.gz: every bulk config on 144 / 152 / 176 / 224 x 7168
// at M = 5-32) put the best stage ring 1.21-2.50x ahead of cuBLASLt's best at M = 5-29 (1.21-1.39x at 17-29), and
// session 33 measured it 15-29% faster than the register ring at M = 5-16; there are no bulk timings above M = 32.
constexpr int64_t kHeuristicMaxM = 32;

// Clusters of eight CTAs that reduce through the leader (token tiles 8 and 16) fill at most this many SMs at a time:
// with one CTA per SM, split 8 against split 4 of the same config on 144 / 152 / 176 / 224 x 7168 (9 / 10 / 11 / 14
// clusters, all within 132 SMs) ran 1.21-1.51x the time at w1x8 u4, where the two do the same stages per warp, and
// on held-out 250 x 8200-16384 (16 clusters) 1.5-1.6x (u4_sk8 5.65-6.36 us, u4_sk4 3.56-4.37); at two CTAs per SM
// (u2, up to 16 clusters) split 8 runs at split 4's time or less, and the 32-token tile (barrier reduction) does
// too at one CTA per SM (1.00-1.05x). Such launches count as a second wave, so the heuristic does not rank them.
constexpr int kCluster8Sms = 64;

// Constants fitted by scripts/heuristic_cv.py --constants to the configs the heuristic ranks at the tuning points
// (docs/benchmarks/h200/tune/). A CTA owns 16 rows and K / split of them; its `slots` stages refill once per HBM
// round trip (at least one round trip however short K is); each of its K warps takes whole stages in turn, so a warp
// walks ceil(stages / warps_k) of them (w1x8 at 4-7 stages per CTA: one each; split 8 there removes no work); a stage
// costs more for each staged x row and for each 8-token MMA tile; CTAs per SM are set by shared memory (depends on
// M) and threads; CTAs beyond one resident wave wait for a second; a cluster split costs a reduction.
struct BulkConstants {
  double gap_us, hbm_bytes_per_us, round_us, stage_us, x_row, split_us, split_lin_us, tile_row;
};
constexpr BulkConstants kBulk{0, 4.8e6, 1.548, 0.5867, 0.04152, 0, 0.1459, 0.5869};

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

// SMs a wave of c's CTAs spreads over: every SM, or kCluster8Sms for clusters of eight reducing through the leader.
double bulk_wave_sms(const Config& c, const DeviceInfo& dev) {
  const double sms = std::max(1, dev.sms);
  return c.split_k == 8 && bulk_leader_reduce(c.tile_m) ? std::min<double>(sms, kCluster8Sms) : sms;
}

CostBreakdown bulk_estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  const BulkConstants& k = kBulk;
  CostBreakdown b;
  const double bytes = static_cast<double>(p.weight_bytes());
  const double sms = std::max(1, dev.sms);
  // Shared memory and threads bound the resident CTAs (+ the runtime's reserved shared memory per CTA).
  const int64_t per_sm = resident_ctas_per_sm(dev, c.threads(), 0, bulk_smem_bytes(c, p) + 1024);
  const int64_t ctas = ceil_div(p.n, 16) * c.split_k;
  const int64_t stages_per_cta = ceil_div(ceil_div(p.k, kBulkChunkK), c.split_k);
  const double slots = bulk_slots(c.unroll);
  const double wave_ctas = bulk_wave_sms(c, dev) * static_cast<double>(per_sm);
  const double waves = std::ceil(static_cast<double>(ctas) / wave_ctas);
  const double cta_bytes = 16.0 * (static_cast<double>(p.k) / c.split_k) * 2;
  b.stream_us = bytes / k.hbm_bytes_per_us;
  const double mem_us = std::max(b.stream_us, waves * per_sm * cta_bytes / (k.hbm_bytes_per_us / sms));
  const double x_rows = static_cast<double>(std::min<int64_t>(p.m, c.tile_m));
  const double stage_us = k.stage_us * (1 + k.x_row * (x_rows - 1) + k.tile_row * (c.tile_m / 8 - 1));
  b.chain_us = waves * (std::max(1.0, static_cast<double>(stages_per_cta) / slots) * k.round_us +
                        static_cast<double>(ceil_div(stages_per_cta, c.warps_k)) * stage_us);
  b.ctas_per_sm = static_cast<int>(per_sm);
  b.waves = static_cast<double>(ctas) / wave_ctas;
  b.wave_eff = b.waves / waves;
  b.inflight_eff = b.stream_us / mem_us;
  b.us = k.gap_us + std::max(mem_us, b.chain_us) + k.split_us * std::log2(static_cast<double>(c.split_k)) +
         k.split_lin_us * (c.split_k - 1);
  return b;
}

std::vector<ModelConstants> bulk_constants() {
  const BulkConstants& k = kBulk;
  return {{"bulk",
           {{"gap_us", k.gap_us}, {"hbm_bytes_per_us", k.hbm_bytes_per_us}, {"round_us", k.round_us},
            {"stage_us", k.stage_us}, {"x_row", k.x_row}, {"split_us", k.split_us}, {"split_lin_us", k.split_lin_us},
            {"tile_row", k.tile_row}}}};
}

// The smallest token tile holding M (8, 16, 32) in layouts w1x4 and w1x8, up to M = kHeuristicMaxM.
bool bulk_heuristic_scores(const Config& c, const Problem& p) {
  const int* tile = std::find_if(std::begin(kSkinnyTileM), std::end(kSkinnyTileM), [&](int t) { return t >= p.m; });
  return p.m <= kHeuristicMaxM && tile != std::end(kSkinnyTileM) && c.tile_m == *tile && c.warps_n == 1 &&
         (c.warps_k == 4 || c.warps_k == 8);
}

}  // namespace

// single_wave: the model misses what a second wave costs (7168x1536 M = 1 predicted 0.82x cuBLASLt, measured
// 1.04x), so the heuristic ranks the stage ring only where every CTA is resident at once (clusters of eight within
// kCluster8Sms SMs); the constants are fitted to those configs alone.
extern const FamilyDescriptor bulk_family{"bulk", /*gpu=*/true, /*kernel=*/true, &kTraits,
                                          parse_tiled, print_tiled, listed_tiled, /*storable=*/nullptr,
                                          tiled_supports, bulk_fits_shape, bulk_smem_bytes, bulk_registers,
                                          bulk_estimate, bulk_heuristic_scores, /*single_wave=*/true,
                                          bulk_constants, SKINNYGEMM_DEVICE_HALF(cuda::bulk_device),
                                          /*first_cut=*/nullptr, /*structural_pick=*/nullptr};

}  // namespace skinnygemm
