// The cublaslt family: cuBLASLt with its default algorithm (cublaslt), its i-th heuristic answer (cublaslt_a<i>), the
// answer of the unsplit rule (cublaslt_unsplit, the heuristic's cuBLASLt pick at M <= 64: cublaslt_unsplit.h), or one
// algorithm by identity (below), each reducing split-K partials in FP32, or the default with every reduction
// scheme allowed as torch's F.linear gets it (cublaslt_torch, a baseline only); the fallback and every benchmark's
// baseline. Host half (the cost model and names); the device half is backends/cuda/cublaslt.cu.
//
// An algorithm by identity:
//   cublaslt_id<algo>_t<tile>_s<stages>_k<split-k>_r<reduction>_w<swizzle>_o<custom>_c<cluster>_i<inner>
// the values of cublasLtMatmulAlgoConfigGetAttribute for CUBLASLT_ALGO_CONFIG_ID, TILE_ID, STAGES_ID, SPLITK_NUM,
// REDUCTION_SCHEME, CTA_SWIZZLING, CUSTOM_OPTION, CLUSTER_SHAPE_ID and INNER_SHAPE_ID, every field present, in this
// order (e.g. cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0). cuBLASLt's heuristic order moves with its version and the
// operands' alignment, so cublaslt_a3 may name another algorithm in another process; an identity names the same
// one wherever cuBLASLt still has it, which is why tables store identities and skip positions (storable below).
// Every toolkit that builds sm_90a (CUDA 12 and later) has the cluster and inner shape attributes; off Hopper
// they read 0.
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

struct IdentityField {
  const char* prefix;
  const char* what;
  int CublasltIdentity::*value;
};
// The fields of an identity name, in name order; parse and print both walk this list.
constexpr IdentityField kIdentityFields[] = {
    {"id", "algorithm id", &CublasltIdentity::id},         {"t", "tile id", &CublasltIdentity::tile},
    {"s", "stages id", &CublasltIdentity::stages},         {"k", "split-K", &CublasltIdentity::split_k},
    {"r", "reduction scheme", &CublasltIdentity::reduction}, {"w", "CTA swizzling", &CublasltIdentity::swizzle},
    {"o", "custom option", &CublasltIdentity::custom},     {"c", "cluster shape id", &CublasltIdentity::cluster},
    {"i", "inner shape id", &CublasltIdentity::inner}};
constexpr std::size_t kIdentityParts = 1 + std::size(kIdentityFields);
constexpr const char* kIdentityForm =
    "cublaslt_id<algo>_t<tile>_s<stages>_k<split-k>_r<reduction>_w<swizzle>_o<custom>_c<cluster>_i<inner>";
// cublasLtReductionScheme_t: none, in place, compute type, output type (one scheme, not a mask).
constexpr int kReductionSchemes[] = {0, 1, 2, 4};

CublasltIdentity parse_identity(const std::string& name, const std::vector<std::string>& parts) {
  SKINNYGEMM_CHECK(parts.size() == kIdentityParts, "config '" << name << "': a cuBLASLt algorithm by identity is "
                                                              << kIdentityForm << " (" << kIdentityParts
                                                              << " parts), got " << parts.size() << " parts");
  CublasltIdentity identity;
  for (std::size_t i = 0; i < std::size(kIdentityFields); ++i) {
    const IdentityField& f = kIdentityFields[i];
    identity.*f.value = number_after(name, parts[i + 1], f.prefix, f.what);
  }
  SKINNYGEMM_CHECK(identity.split_k >= 1, "config '" << name << "': split-K k" << identity.split_k << " must be >= 1");
  SKINNYGEMM_CHECK(listed(kReductionSchemes, identity.reduction),
                   "config '" << name << "': reduction scheme r" << identity.reduction
                              << " is not a cuBLASLt scheme; expected r0 (none), r1 (in place), r2 (compute type) or "
                                 "r4 (output type)");
  SKINNYGEMM_CHECK(identity.swizzle == 0 || identity.swizzle == 1,
                   "config '" << name << "': CTA swizzling w" << identity.swizzle << " must be w0 or w1");
  return identity;
}

Config parse(const std::string& name, const std::vector<std::string>& parts, Family id) {
  Config c;
  c.family = id;
  if (parts.size() >= 2 && parts[1].compare(0, 2, "id") == 0) {
    c.lt_identity = parse_identity(name, parts);
    return c;
  }
  SKINNYGEMM_CHECK(parts.size() <= 2, "config '" << name << "': expected cublaslt, cublaslt_torch, cublaslt_unsplit, "
                                                 << "cublaslt_a<index> or " << kIdentityForm);
  if (parts.size() == 2 && parts[1] == "torch") {
    c.algo = kCublasltTorch;
  } else if (parts.size() == 2 && parts[1] == "unsplit") {
    c.algo = kCublasltUnsplit;
  } else if (parts.size() == 2) {
    c.algo = number_after(name, parts[1], "a", "algorithm index");
    SKINNYGEMM_CHECK(c.algo < kCublasltAlgos,
                     "config '" << name << "': algorithm index " << c.algo << " must be < " << kCublasltAlgos);
  }
  return c;
}

std::string print(const Config& c) {
  if (c.lt_identity.named()) {
    std::string name = "cublaslt";
    for (const IdentityField& f : kIdentityFields)
      name += "_" + std::string(f.prefix) + std::to_string(c.lt_identity.*f.value);
    return name;
  }
  if (c.algo == kCublasltTorch) return "cublaslt_torch";
  if (c.algo == kCublasltUnsplit) return "cublaslt_unsplit";
  return c.algo >= 0 ? "cublaslt_a" + std::to_string(c.algo) : "cublaslt";
}

bool storable(const Config& c, std::string* why_not) {
  return c.algo < 0 ||
         fail(why_not, "cublaslt_a" + std::to_string(c.algo) +
                           " names a position in cuBLASLt's heuristic list, which another cuBLASLt version or operand "
                           "alignment orders differently; tables name cuBLASLt algorithms by identity (" +
                           kIdentityForm + "): rewrite the table with skinnygemm tune --migrate-cublaslt-names "
                           "--table FILE on its GPU");
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

bool supports(const Config& c, const Problem&, const DeviceInfo& dev, int, std::string* why_not) {
  return !dev.is_cpu || fail(why_not, c.name() + " needs a GPU");
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
  // Rows of y that are not 16-byte aligned (N % 8 != 0 packed, or a stride that is not): cuBLASLt's slower kernels.
  const bool misaligned = p.y_stride() * static_cast<int64_t>(dtype_size(p.dtype)) % 16 != 0;
  b.us = std::max(b.us, 0.05) * (misaligned ? c.misaligned_factor : 1.0);
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
                                              parse, print, listed_algos, storable,
                                              supports, /*fits_shape=*/nullptr, no_smem, no_registers,
                                              lt_estimate, /*heuristic_scores=*/nullptr, /*single_wave=*/false,
                                              lt_constants, SKINNYGEMM_DEVICE_HALF(cuda::cublaslt_device),
                                              /*first_cut=*/nullptr, /*structural_pick=*/nullptr};

}  // namespace skinnygemm
