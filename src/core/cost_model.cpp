#include "core/cost_model.h"

#include "core/tiling.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace skinnygemm {

namespace {
// NOTE: model constants. Only the ranking of configs matters to the heuristic; the absolute level is
// calibrated against measurements in docs/kernels.md.
constexpr double kStreamBytesPerUs = 4.35e6;  // H200 streaming read, bytes/us (shared/reference: 4.3-4.4 TB/s)
constexpr double kLatencyUs = 0.8;            // one dependent round trip to HBM under load
constexpr double kInflightNeeded = 40e3;      // bytes in flight per SM to saturate (Little's law)
constexpr double kFixedUs = 1.0;              // launch + first load + epilogue
constexpr double kClusterReduceUs = 0.5;      // cluster barrier + DSMEM partial reads
constexpr double kClocksPerUs = 1.75e3;       // SM clock under load, cycles/us
constexpr double kMmaPerClockPerSm = 0.5;     // mma.sync m16n8k16 bf16 issue rate per SM
constexpr double kFmaPerClockPerSm = 128;     // FP32 FMA per SM per clock
constexpr double kCpuBytesPerUs = 3e3;        // CPU backend streaming rate (2 cores)

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

Decomposition decompose(const Config& c, const Problem& p) {
  Decomposition d;
  d.row_tiles = ceil_div(p.n, 16);
  d.row_blocks = ceil_div(d.row_tiles, std::max(1, c.warps_n));
  d.ctas = d.row_blocks * std::max(1, c.split_k);
  d.k_chunks = ceil_div(p.k, 32);
  d.chunks_per_warp = ceil_div(d.k_chunks, std::max(1, c.warps_k * c.split_k));
  return d;
}

int estimated_registers(const Config& c) {
  // ptxas -v, sm_90a, bf16: w and x in the shared-memory chunk ring (docs/kernels.md).
  const bool u4 = c.unroll == 4;
  if (c.family == Family::Simt) return c.tile_m == 1 ? (u4 ? 63 : 48) : c.tile_m == 2 ? 57 : 79;
  switch (c.tile_m) {
    case 8: return u4 ? 60 : 48;
    case 16: return u4 ? 66 : 59;
    case 32: return 104;
    default: return 175;
  }
}

int64_t smem_bytes(const Config& c) {
  return skinny_smem_bytes(c.family == Family::Mma, c.tile_m, c.warps_n, c.warps_k, c.unroll);
}

CostBreakdown estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  CostBreakdown b;
  const double bytes = static_cast<double>(p.weight_bytes());
  if (c.family == Family::Cpu || dev.is_cpu) {
    b.stream_us = bytes / kCpuBytesPerUs;
    // Fewer rows per block re-read x more often; more rows need more registers. Mildly prefer 4.
    const double block_penalty = c.rows == 4 ? 1.0 : c.rows == 8 ? 1.05 : c.rows == 2 ? 1.1 : 1.3;
    b.us = b.stream_us * block_penalty * (1.0 + 0.02 * static_cast<double>(p.m));
    b.wave_eff = b.inflight_eff = 1;
    return b;
  }
  if (c.family == Family::Cublaslt) {
    b.stream_us = bytes / kStreamBytesPerUs;
    b.us = b.stream_us / 0.65 + 2.0;  // what cuBLASLt reaches on narrow shapes (shared/reference)
    return b;
  }
  const Decomposition d = decompose(c, p);
  const int threads = c.threads();
  const int regs = (estimated_registers(c) + 7) / 8 * 8;
  const int64_t smem = smem_bytes(c) + 1024;
  int per_sm = std::min<int64_t>(2048 / threads, 32);
  per_sm = std::min<int64_t>(per_sm, 65536 / (static_cast<int64_t>(regs) * threads));
  per_sm = std::min<int64_t>(per_sm, (228 * 1024) / smem);
  per_sm = std::max(per_sm, 1);
  b.ctas_per_sm = per_sm;
  const double sms = std::max(1, dev.sms);
  const double slots = sms * per_sm;
  const double waves = static_cast<double>(d.ctas) / slots;
  b.wave_eff = waves / std::ceil(waves);
  const double resident_ctas = std::min<double>(static_cast<double>(d.ctas), slots);
  const double warps_per_sm = resident_ctas / sms * c.warps_n * c.warps_k;
  const double inflight = warps_per_sm * 32 * c.unroll * 32;  // each lane: 2 x 16 B per chunk
  b.inflight_eff = std::min(1.0, inflight / kInflightNeeded);
  b.stream_us = bytes / kStreamBytesPerUs;
  const double mem_us = b.stream_us / (b.wave_eff * b.inflight_eff);
  b.chain_us = std::ceil(static_cast<double>(d.chunks_per_warp) / c.unroll) * kLatencyUs * std::ceil(waves);
  if (c.family == Family::Mma) {
    const double mmas = static_cast<double>(d.row_tiles) * d.k_chunks * 2 * (c.tile_m / 8);
    b.compute_us = mmas / (sms * kMmaPerClockPerSm * kClocksPerUs);
  } else {
    const double fmas = static_cast<double>(d.row_tiles) * 16 * d.k_chunks * 32 * c.tile_m;
    b.compute_us = fmas / (sms * kFmaPerClockPerSm * kClocksPerUs);
  }
  const double reduce_us = (c.split_k > 1 ? kClusterReduceUs : 0) + (c.warps_k > 1 ? 0.1 : 0);
  b.us = std::max({mem_us, b.chain_us, b.compute_us}) + reduce_us + kFixedUs;
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
