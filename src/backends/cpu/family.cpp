// The cpu family: the CPU backend's kernel (backends/cpu/cpu_gemm.cpp), cpu_r<rows> with `rows` weight rows per
// inner block. Launched by the CPU backend itself, so it has no device half.
#include <iterator>

#include "kernels/common/tiled.h"
#include "runtime/config_names.h"
#include "skinnygemm/error.h"

namespace skinnygemm {

namespace {

constexpr double kCpuBytesPerUs = 12e3;  // CPU backend at M = 1 (2 cores, AVX2; helper measurement)

Config parse(const std::string& name, const std::vector<std::string>& parts, Family id) {
  SKINNYGEMM_CHECK(parts.size() == 2, "config '" << name << "': expected cpu_r<rows>");
  Config c;
  c.family = id;
  c.rows = number_after(name, parts[1], "r", "rows per block");
  SKINNYGEMM_CHECK(listed(kCpuRows, c.rows),
                   "config '" << name << "': rows r" << c.rows << " is not built; expected one of " << join(kCpuRows));
  return c;
}

std::string print(const Config& c) { return "cpu_r" + std::to_string(c.rows); }

std::vector<Config> listed_rows(Family id) {
  std::vector<Config> out;
  for (int r : kCpuRows) {
    Config c;
    c.family = id;
    c.rows = r;
    out.push_back(c);
  }
  return out;
}

bool supports(const Config&, const Problem&, const DeviceInfo& dev, int, std::string* why_not) {
  return dev.is_cpu || fail(why_not, "cpu configs run on the CPU backend only");
}

int64_t no_smem(const Config&, const Problem&) { return 0; }
int no_registers(const Config&) { return 0; }

}  // namespace

// The CPU's cost model (every config on the CPU device is scored with it: cost_model.cpp).
CostBreakdown estimate_cpu(const Config& c, const Problem& p, const DeviceInfo&) {
  CostBreakdown b;
  b.stream_us = static_cast<double>(p.weight_bytes()) / kCpuBytesPerUs;
  // Measured on 2 cores (7168x7168): r2/r4 best at M = 1, r8 from M = 8; r1 slowest; time ~2x by M = 8.
  const double block_penalty = c.rows == 1 ? 1.5 : (c.rows == 8) == (p.m >= 8) ? 1.0 : 1.05;
  b.us = b.stream_us * block_penalty * (1.0 + 0.12 * static_cast<double>(p.m - 1));
  b.wave_eff = b.inflight_eff = 1;
  return b;
}

extern const FamilyDescriptor cpu_family{"cpu", /*gpu=*/false, /*kernel=*/true, /*tiled=*/nullptr,
                                         parse, print, listed_rows, /*storable=*/nullptr,
                                         supports, /*fits_shape=*/nullptr, no_smem, no_registers,
                                         estimate_cpu, /*heuristic_scores=*/nullptr, /*single_wave=*/false,
                                         /*fitted_constants=*/nullptr, /*device=*/nullptr, /*first_cut=*/nullptr, /*structural_pick=*/nullptr};

}  // namespace skinnygemm
