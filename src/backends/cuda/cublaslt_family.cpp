// The cublaslt family: cuBLASLt with its default algorithm (cublaslt) or its i-th heuristic answer
// (cublaslt_a<i>), both reducing split-K partials in FP32, or the default with every reduction scheme allowed as
// torch's F.linear gets it (cublaslt_torch, a baseline only); the fallback and every benchmark's baseline. Host half (the cost model and names); the device
// half is backends/cuda/cublaslt.cu.
#include <algorithm>
#include <cmath>

#include "kernels/common/tiled.h"
#include "runtime/config_names.h"
#include "skinnygemm/error.h"

namespace skinnygemm {

#ifdef SKINNYGEMM_WITH_CUDA
namespace cuda {
extern const FamilyDevice cublaslt_device;  // backends/cuda/cublaslt.cu
}
#endif

namespace {

constexpr double kStreamBytesPerUs = 4.35e6;  // H200 streaming read, bytes/us (measured 4.3-4.4 TB/s)
// cuBLASLt's default algorithm (session-5 fit, scripts/heuristic_cv.py --constants, on 1322 default timings): a
// fixed cost that grows with K while the stream is short (split-K and its reduction kernel), the stream, and M.
// Cross-validated median error 4%, 90th percentile 9%. The "short" terms fade as 1 / (1 + MB / 20) once the stream
// dominates; "m64" is M / 64.
struct LtConstants {
  double fixed_us, mb_us, k2048_short_us, k4096_us, m64_us, mb_m64_us, log2_k_short_us;
  // Not fitted: where N % 8 != 0 the rows of y are not 16-byte aligned and cuBLASLt's default slows down:
  // 9999x2048 measured 1.5x (M = 1) to 6x (M = 64) its aligned prediction (heuristic-blind-85bb96e.json); the
  // model takes the low end.
  double misaligned_factor;
};
constexpr LtConstants kLt{2.442, 0.2415, 1.411, 0.9846, 0.3083, 0.005854, 0.2189, 1.5};

Config parse(const std::string& name, const std::vector<std::string>& parts, Family id) {
  Config c;
  c.family = id;
  SKINNYGEMM_CHECK(parts.size() <= 2,
                   "config '" << name << "': expected cublaslt, cublaslt_torch or cublaslt_a<index>");
  if (parts.size() == 2 && parts[1] == "torch") {
    c.algo = kCublasltTorch;
  } else if (parts.size() == 2) {
    c.algo = number_after(name, parts[1], "a", "algorithm index");
    SKINNYGEMM_CHECK(c.algo < kCublasltAlgos,
                     "config '" << name << "': algorithm index " << c.algo << " must be < " << kCublasltAlgos);
  }
  return c;
}

std::string print(const Config& c) {
  if (c.algo == kCublasltTorch) return "cublaslt_torch";
  return c.algo >= 0 ? "cublaslt_a" + std::to_string(c.algo) : "cublaslt";
}

std::vector<Config> listed_algos(Family id) {
  std::vector<Config> out;
  Config c;
  c.family = id;
  out.push_back(c);
  for (int a = 0; a < kCublasltAlgos; ++a) {
    c.algo = a;
    out.push_back(c);
  }
  return out;
}

bool supports(const Config&, const Problem&, const DeviceInfo& dev, int, std::string* why_not) {
  return !dev.is_cpu || fail(why_not, "cublaslt needs a GPU");
}

int64_t no_smem(const Config&, const Problem&) { return 0; }
int no_registers(const Config&) { return 0; }

CostBreakdown lt_estimate(const Config&, const Problem& p, const DeviceInfo&) {
  CostBreakdown b;
  const double bytes = static_cast<double>(p.weight_bytes());
  b.stream_us = bytes / kStreamBytesPerUs;
  const double mb = bytes / 1e6, m64 = static_cast<double>(p.m) / 64, small = 1 / (1 + mb / 20);
  const double k = static_cast<double>(p.k);
  const LtConstants& c = kLt;
  b.us = c.fixed_us + c.mb_us * mb + c.k2048_short_us * (p.k >= 2048 ? small : 0.0) +
         c.k4096_us * (p.k >= 4096 ? 1.0 : 0.0) + c.m64_us * m64 + c.mb_m64_us * mb * m64 +
         c.log2_k_short_us * std::min(std::log2(k / 128), 7.0) * small;
  b.us = std::max(b.us, 0.05) * (p.n % 8 != 0 ? c.misaligned_factor : 1.0);
  return b;
}

std::vector<ModelConstants> lt_constants() {
  const LtConstants& c = kLt;
  return {{"cublaslt",
           {{"fixed_us", c.fixed_us}, {"mb_us", c.mb_us}, {"k2048_short_us", c.k2048_short_us},
            {"k4096_us", c.k4096_us}, {"m64_us", c.m64_us}, {"mb_m64_us", c.mb_m64_us},
            {"log2_k_short_us", c.log2_k_short_us}, {"misaligned_factor", c.misaligned_factor}}}};
}

}  // namespace

extern const FamilyDescriptor cublaslt_family{"cublaslt", /*gpu=*/true, /*kernel=*/false, /*tiled=*/nullptr,
                                              parse, print, listed_algos,
                                              supports, /*fits_shape=*/nullptr, no_smem, no_registers,
                                              lt_estimate, /*heuristic_scores=*/nullptr, /*single_wave=*/false,
                                              lt_constants, SKINNYGEMM_DEVICE_HALF(cuda::cublaslt_device),
                                              /*first_cut=*/nullptr};

}  // namespace skinnygemm
