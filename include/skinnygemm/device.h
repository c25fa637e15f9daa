// What selection, tables and the benchmark need to know about the device that runs a problem.
// Read from the device (cached per device id), never from a table of GPU names.
#pragma once

#include <cstdint>
#include <string>

namespace skinnygemm {

struct DeviceInfo {
  bool is_cpu = true;
  std::string name = "cpu";  // "NVIDIA H200" or "cpu"
  int sms = 0;               // multiprocessors (CPU: hardware threads)
  int cc_major = 0, cc_minor = 0;
  int64_t l2_bytes = 0;
  int64_t smem_per_block_optin = 0;
  // Per-SM limits that bound resident CTAs in the cost models (cudaDeviceProp; 0 on the CPU).
  int64_t smem_per_sm = 0;
  int64_t regs_per_sm = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  std::string cuda_version;      // runtime, "13.0"; empty on CPU
  std::string cublaslt_version;  // "13.1.0"; empty on CPU

  // What a table must match to be used here: name and SM count.
  std::string signature() const;  // "NVIDIA H200/132sm" or "cpu/2t"
};

// The CPU as a device (name "cpu", sms = hardware threads).
DeviceInfo cpu_device_info();

}  // namespace skinnygemm
