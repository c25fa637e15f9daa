#include "lab/device_presets.h"

#include <utility>

#include "skinnygemm/error.h"

namespace skinnygemm::tune {
namespace {

// An H200 (SXM, 141 GB) as the machines of docs/benchmarks/h200 report it, CUDA 13.0 with cuBLASLt 13.1.0.
DeviceInfo h200() {
  DeviceInfo d;
  d.is_cpu = false;
  d.name = "NVIDIA H200";
  d.sms = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.l2_bytes = 60 << 20;
  d.smem_per_block_optin = 232448;
  d.smem_per_sm = 233472;  // 228 KB
  d.regs_per_sm = 65536;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.cuda_version = "13.0";
  d.cublaslt_version = "13.1.0";
  return d;
}

// An H100 (SXM, 80 GB HBM3) as the device tool's machines report it (docs/benchmarks/h100): the H200's SMs, shared
// memory and registers, a 50 MB L2.
DeviceInfo h100() {
  DeviceInfo d = h200();
  d.name = "NVIDIA H100 80GB HBM3";
  d.l2_bytes = 50 << 20;
  return d;
}

const std::pair<const char*, DeviceInfo (*)()> kPresets[] = {{"h200", h200}, {"h100", h100}};

}  // namespace

DeviceInfo device_preset(const std::string& name) {
  for (const auto& [preset, facts] : kPresets)
    if (name == preset) return facts();
  SKINNYGEMM_FAIL("device preset '" << name << "' is unknown; expected one of: " << device_preset_names());
}

std::string device_preset_names() {
  std::string names;
  for (const auto& preset : kPresets) names += (names.empty() ? "" : ", ") + std::string(preset.first);
  return names;
}

}  // namespace skinnygemm::tune
