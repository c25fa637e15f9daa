#include "runtime/cost_model.h"

#include "kernels/common/tiling.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace skinnygemm {

namespace {
// NOTE: model constants. Only the ranking of configs matters to the heuristic; the levels come from the
// H200 sweeps in docs/kernels.md (2026-11-29).
constexpr double kStreamBytesPerUs = 4.35e6;  // H200 streaming read, bytes/us (shared/reference: 4.3-4.4 TB/s)
constexpr double kSmBurst = 1.6;              // one SM can pull this multiple of its fair share of HBM
constexpr double kLatencyUs = 1.5;            // HBM round trip under full load (the ring's refill period)
constexpr double kL2OverHbm = 2.5;            // x comes from L2 at this multiple of the HBM rate
constexpr double kLaunchUs = 0.2;             // launch and last store beyond the pipeline fill (1536x128: 1.4 us in all)
constexpr double kBlockEpilogueUs = 0.25;     // per row block: barrier, partial sums, stores
constexpr double kClusterEpilogueUs = 1.0;    // per row block with split_k > 1: two cluster barriers, DSMEM
constexpr double kClocksPerUs = 1.75e3;       // SM clock under load, cycles/us
constexpr double kMmaPerClockPerSm = 0.5;     // mma.sync m16n8k16 bf16 issue rate per SM
constexpr double kFmaPerClockPerSm = 128;     // FP32 FMA per SM per clock
constexpr double kRingInstrPerKb = 135;       // cp.async ring: ncu, 3648x7168 M=1 (62K warp instr/SM, 458 KB/SM)
constexpr double kBulkInstrPerKb = 35;        // bulk copies: ~280 per 8 KB stage (count of the loop body)
constexpr double kIssuePerWarpClock = 0.21;   // ncu: 7 warps/SM issued every 4.7 cycles each
constexpr double kCpuBytesPerUs = 12e3;       // CPU backend at M = 1 (2 cores, AVX2; helper measurement)

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

namespace {
// Constants of the session-5 models, fitted by scripts/heuristic_cv.py --constants (bounded least squares on log
// time) to every candidate of the tuning runs in docs/benchmarks/h200/tune/ (701 points at M = 1..64, 28306
// timings) and, for cuBLASLt, 1322 default timings (those points and three held-out reports). Judged there by
// 5-fold cross-validation over shapes; models/heldout_fourth.json was never measured before this model.

// The stage ring (skinny_bulk.cuh). A CTA owns 16 rows and K / split of them; its `slots` stages refill once per
// HBM round trip (at least one round trip however short K is); CTAs per SM are set by shared memory (depends on
// M) and threads; CTAs beyond one resident wave wait for a second; a cluster split costs a reduction.
struct BulkConstants {
  double gap_us, hbm_bytes_per_us, round_us, stage_us, x_row, split_us, split_lin_us, wave_us, slot_us;
};
constexpr BulkConstants kBulk{0.8603, 5.066e6, 0.621, 0.8985, 0.03689, 0, 0.09956, 2.765, 0};

// The register ring (skinny_reg.cuh), one set of constants per token tile (a larger tile changes registers,
// MMAs and x loads per chunk: one shared model was 17% off at the median, per tile 9-10%, m32 18%). Each warp
// keeps `unroll` chunks in flight and pays a round trip per `unroll` chunks of its slice; the SM holding the
// most CTAs streams the most bytes; a split across a cluster costs a DSMEM reduction.
struct RegConstants {
  double gap_us, round_us, hbm_bytes_per_us, split_us, sm_burst, block_us, split_lin_us, chunk_us;
};
constexpr RegConstants kReg8{0.1095, 0.9242, 3.29e6, 0.2519, 1.549, 1.972, 0, 0};
constexpr RegConstants kReg16{0, 0.09544, 3.105e6, 0.36, 3.997, 2.632, 0, 0.4277};
constexpr RegConstants kReg32{0.539, 0, 2.58e6, 0.1979, 1.103, 2.6, 0, 0.6264};
constexpr RegConstants kReg64{0.254, 1.764, 7.0e6, 2.001, 2.094, 3.0, 0, 0};

// cuBLASLt's default algorithm: a fixed cost that grows with K while the stream is short (split-K and its
// reduction kernel), the stream, and M. Cross-validated median error 4%, 90th percentile 9% (was 5% / 13%).
constexpr double kLt[7] = {2.442, 0.2415, 1.411, 0.9846, 0.3083, 0.005854, 0.2189};
// Where N % 8 != 0 the rows of y are not 16-byte aligned and cuBLASLt's default slows down: 9999x2048 measured
// 1.5x (M = 1) to 6x (M = 64) its aligned prediction (heuristic-blind-85bb96e.json); the model takes the low end.
constexpr double kLtMisaligned = 1.5;

CostBreakdown estimate_reg(const Config& c, const Problem& p, const DeviceInfo& dev, double bytes) {
  const RegConstants& k = c.tile_m <= 8 ? kReg8 : c.tile_m <= 16 ? kReg16 : c.tile_m <= 32 ? kReg32 : kReg64;
  CostBreakdown b;
  const double sms = std::max(1, dev.sms);
  const int threads = c.threads();
  const int regs = (estimated_registers(c) + 7) / 8 * 8;
  const int64_t per_sm_limit =
      std::max<int64_t>(1, std::min<int64_t>({2048 / threads, 65536 / (static_cast<int64_t>(regs) * threads), 32}));
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

CostBreakdown estimate_bulk(const Config& c, const Problem& p, const DeviceInfo& dev, double bytes) {
  const BulkConstants& k = kBulk;
  CostBreakdown b;
  const double sms = std::max(1, dev.sms);
  const int64_t smem = smem_bytes(c, p) + 1024;
  const int64_t per_sm = std::max<int64_t>(1, std::min<int64_t>({(228 * 1024) / smem, 2048 / c.threads(), 32}));
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
}  // namespace

bool heuristic_scores(const Config& c, const Problem& p) {
  if (c.family == Family::Bulk)
    return c.tile_m == 8 && p.m <= kHeuristicBulkMaxM && c.warps_n == 1 && (c.warps_k == 4 || c.warps_k == 8);
  if (c.family != Family::Reg) return false;
  const int tile = p.m <= 8 ? 8 : p.m <= 16 ? 16 : p.m <= 32 ? 32 : 64;
  const bool layout = (c.warps_n == 1 && (c.warps_k == 8 || c.warps_k == 4)) || (c.warps_n == 2 && c.warps_k == 4) ||
                      (c.warps_n == 4 && c.warps_k == 2);
  return c.tile_m == tile && layout;
}

bool better_pick(double us, const Config& c, double best_us, const Config& best) {
  if (us < best_us * (1 - 1e-3)) return true;
  return us <= best_us * (1 + 1e-3) && c.unroll < best.unroll;
}

bool best_scored_config(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                        Config* best, double* best_us) {
  const std::vector<Family> families =
      dev.is_cpu ? std::vector<Family>{Family::Cpu} : std::vector<Family>{Family::Bulk, Family::Reg};
  bool found = false;
  for (Family f : families) {
    for (const Config& c : listed_configs(f)) {
      if (!dev.is_cpu && !heuristic_scores(c, p)) continue;
      if (!runnable(c)) continue;
      const CostBreakdown cost = estimate(c, p, dev);
      if (!dev.is_cpu && c.family == Family::Bulk && cost.waves > 1.0) continue;
      if (!found || better_pick(cost.us, c, *best_us, *best)) {
        *best_us = cost.us;
        *best = c;
        found = true;
      }
    }
  }
  return found;
}

Decomposition decompose(const Config& c, const Problem& p) {
  Decomposition d;
  d.row_tiles = ceil_div(p.n, 16);
  d.row_blocks = ceil_div(d.row_tiles, std::max(1, c.warps_n));
  d.ctas = d.row_blocks * std::max(1, c.split_k);
  d.k_chunks = ceil_div(p.k, c.family == Family::Bulk ? kBulkChunkK : kChunkK);
  d.chunks_per_warp = ceil_div(d.k_chunks, std::max(1, c.warps_k * c.split_k));
  return d;
}

int estimated_registers(const Config& c) {
  // ptxas -v, sm_90a, bf16, persistent kernels with the shared-memory chunk ring (docs/kernels.md).
  const bool u4 = c.unroll == 4;
  if (c.family == Family::Simt) return c.tile_m == 4 ? 80 : (u4 ? 64 : 72);
  if (c.family == Family::Bulk) return c.tile_m <= 16 ? 40 : c.tile_m == 32 ? 56 : 80;  // ptxas -v, CTA-wide ring
  if (c.family == Family::Reg) {  // ptxas -v, register ring across persistent row blocks
    switch (c.tile_m) {
      case 8: return u4 ? 112 : 64;
      case 16: return u4 ? 145 : 90;
      case 32: return u4 ? 246 : 144;
      default: return 244;
    }
  }
  switch (c.tile_m) {
    case 8: return u4 ? 60 : 72;
    case 16: return 72;
    case 32: return 90;
    default: return 144;
  }
}

int64_t smem_bytes(const Config& c, const Problem& p) {
  if (c.family == Family::Bulk)
    return bulk_launch_smem_bytes(c.tile_m, static_cast<int>(std::min<int64_t>(p.m, c.tile_m)), c.warps_k, c.unroll,
                                  c.split_k);
  if (c.family == Family::Reg) return static_cast<int64_t>(partial_floats(c.tile_m, c.warps_n, c.warps_k)) * 4;
  return skinny_smem_bytes(c.family == Family::Mma, c.tile_m, c.warps_n, c.warps_k, c.unroll);
}

CostBreakdown estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  CostBreakdown b;
  const double bytes = static_cast<double>(p.weight_bytes());
  if (c.family == Family::Cpu || dev.is_cpu) {
    b.stream_us = bytes / kCpuBytesPerUs;
    // Measured on 2 cores (7168x7168): r2/r4 best at M = 1, r8 from M = 8; r1 slowest; time ~2x by M = 8.
    const double block_penalty = c.rows == 1 ? 1.5 : (c.rows == 8) == (p.m >= 8) ? 1.0 : 1.05;
    b.us = b.stream_us * block_penalty * (1.0 + 0.12 * static_cast<double>(p.m - 1));
    b.wave_eff = b.inflight_eff = 1;
    return b;
  }
  if (c.family == Family::Cublaslt) {
    b.stream_us = bytes / kStreamBytesPerUs;
    const double mb = bytes / 1e6, m64 = static_cast<double>(p.m) / 64, small = 1 / (1 + mb / 20);
    const double k = static_cast<double>(p.k);
    b.us = kLt[0] + kLt[1] * mb + kLt[2] * (p.k >= 2048 ? small : 0.0) + kLt[3] * (p.k >= 4096 ? 1.0 : 0.0) +
           kLt[4] * m64 + kLt[5] * mb * m64 + kLt[6] * std::min(std::log2(k / 128), 7.0) * small;
    b.us = std::max(b.us, 0.05) * (p.n % 8 != 0 ? kLtMisaligned : 1.0);
    return b;
  }
  if (c.family == Family::Reg) return estimate_reg(c, p, dev, bytes);
  if (c.family == Family::Bulk) return estimate_bulk(c, p, dev, bytes);
  const Decomposition d = decompose(c, p);
  const int threads = c.threads();
  const int regs = (estimated_registers(c) + 7) / 8 * 8;
  const int64_t smem = smem_bytes(c, p) + 1024;
  int per_sm = std::min<int64_t>(2048 / threads, 32);
  per_sm = std::min<int64_t>(per_sm, 65536 / (static_cast<int64_t>(regs) * threads));
  per_sm = std::min<int64_t>(per_sm, (228 * 1024) / smem);
  per_sm = std::max(per_sm, 1);
  b.ctas_per_sm = per_sm;
  const double sms = std::max(1, dev.sms);
  // Persistent grid: min(row blocks, resident clusters) clusters walk the row blocks.
  const double clusters = std::min<double>(static_cast<double>(d.row_blocks),
                                           std::max(1.0, std::floor(sms * per_sm / c.split_k)));
  const double blocks_per_cta = std::ceil(static_cast<double>(d.row_blocks) / clusters);
  const double ctas = clusters * c.split_k;
  // Balance: the busiest SM holds ceil(ctas / sms) CTAs, each walking blocks_per_cta row blocks.
  const double avg_blocks_per_sm = static_cast<double>(d.row_blocks) * c.split_k / sms;
  const double max_blocks_per_sm = std::ceil(ctas / sms) * blocks_per_cta;
  b.wave_eff = avg_blocks_per_sm / max_blocks_per_sm;
  // Bytes the busiest SM streams: weights from HBM, x from L2 (cheaper per byte).
  const bool bulk = c.family == Family::Bulk;
  const double chunk_k = bulk ? kBulkChunkK : kChunkK;
  const double slice_k = (static_cast<double>(d.k_chunks) / c.split_k) * chunk_k;
  const double m_eff = std::min<double>(static_cast<double>(p.m), c.tile_m);
  const double w_block_bytes = 16.0 * c.warps_n * slice_k * 2;
  const double x_block_bytes = c.warps_n * slice_k * 2 * m_eff;
  const double sm_bytes = max_blocks_per_sm * (w_block_bytes + x_block_bytes / kL2OverHbm);
  // Rate of the busiest SM: its share of HBM (with some burst), or what its warps keep in flight.
  const double warps = std::ceil(ctas / sms) * c.warps_n * c.warps_k;
  // bulk: the CTA's slots are shared by its warps (not fitted: the heuristic does not score this family).
  const double stage_bytes = bulk ? 16.0 * kBulkChunkK * 2 : 1024.0;
  const double stages_in_flight =
      bulk ? static_cast<double>(bulk_slots(c.unroll)) / c.warps_k : ring_stages(c.unroll) - 1;
  const double inflight = warps * stages_in_flight * stage_bytes;
  const double sm_rate = std::min(kSmBurst * kStreamBytesPerUs / sms, inflight / kLatencyUs);
  b.inflight_eff = sm_rate / (kStreamBytesPerUs / sms);
  b.stream_us = bytes / kStreamBytesPerUs;
  const double mem_us = std::max(sm_bytes / sm_rate, b.stream_us);
  b.chain_us = kLatencyUs;
  // Issue bound: instructions per KB of weights over what the SM's warps issue per clock.
  const double tile_instr = c.family == Family::Simt ? 1.0 + 0.5 * (c.tile_m - 1) : 1.0 + 0.25 * (c.tile_m / 8 - 1);
  const double instr_per_kb = (bulk ? kBulkInstrPerKb : kRingInstrPerKb) * tile_instr;
  const double issue_per_clock = std::min(4.0, warps * kIssuePerWarpClock);
  const double issue_us = max_blocks_per_sm * w_block_bytes / 1024.0 * instr_per_kb / issue_per_clock / kClocksPerUs;
  if (c.family != Family::Simt) {
    const double mmas = static_cast<double>(d.row_tiles) * p.k / 16.0 * (c.tile_m / 8);
    b.compute_us = std::max(issue_us, mmas / (sms * kMmaPerClockPerSm * kClocksPerUs));
  } else {
    const double fmas = static_cast<double>(d.row_tiles) * 16 * p.k * c.tile_m;
    b.compute_us = std::max(issue_us, fmas / (sms * kFmaPerClockPerSm * kClocksPerUs));
  }
  const double epilogue_us = blocks_per_cta * (kBlockEpilogueUs + (c.split_k > 1 ? kClusterEpilogueUs : 0));
  // NOTE: measured, not yet modelled: larger token tiles cost more than their MMAs and x bytes explain
  // (H200 sweeps 2026-11-29: best m16 / best m8 time = 1.55-1.6 on 1536x7168 and 20480x7168, m64 / m8 = 4.2).
  const double tile_factor = c.tile_m <= 8 ? 1.0 : c.tile_m == 16 ? 1.6 : c.tile_m == 32 ? 2.5 : 4.2;
  // NOTE: measured / predicted time of the heuristic's picks in docs/benchmarks/h200/kernels.json (8f0ecd8):
  // median 1.39 for the cp.async ring (mma) at 0.79-1.62 (the bulk family of then has been replaced); the model
  // misses what Nsight Compute showed (issue-bound warps at low occupancy). Scaled so that the comparison
  // with cuBLASLt (predicted at 0.95 of its measured time) is fair until the model is rebuilt.
  const double family_factor = c.family == Family::Bulk ? 1.0 : 1.4;
  b.us = (std::max(mem_us, b.compute_us) + b.chain_us + epilogue_us + kLaunchUs) * tile_factor * family_factor;
  return b;
}

std::string CostBreakdown::str() const {
  std::ostringstream os;
  os.precision(3);
  os << "predicted " << us << " us (stream " << stream_us << ", wave eff " << wave_eff << ", in-flight eff "
     << inflight_eff << ", chain " << chain_us << ", compute " << compute_us << ", " << ctas_per_sm
     << " CTAs/SM)";
  return os.str();
}

}  // namespace skinnygemm
