// skinnygemm: decode-time projections y[M,N] = x[M,K] · w[N,K]^T (M = 1..64) at the memory limit.
//
//   skinnygemm::Problem p{/*m=*/4, /*n=*/1536, /*k=*/7168, skinnygemm::DType::BF16};
//   skinnygemm::gemm(p, x, w, y);                  // selects, caches the choice, launches
//   skinnygemm::Options o; o.stream = my_stream; o.config = "tma_m8_r64_b2_s4_x8";
//   skinnygemm::gemm(p, x, w, y, o);               // on a stream, with a forced config
#pragma once

#include <string>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/dtype.h"
#include "skinnygemm/error.h"
#include "skinnygemm/problem.h"
#include "skinnygemm/select.h"
#include "skinnygemm/table.h"

namespace skinnygemm {

const char* version();  // "0.2.0"

enum class Backend {
  Auto,  // CUDA when the library was built with it and a GPU is present, else the CPU
  Cpu,   // pointers are host memory
  Cuda,  // pointers are device memory of the current device
};
const char* backend_name(Backend backend);
Backend parse_backend(const std::string& name);

struct Options {
  Backend backend = Backend::Auto;
  void* stream = nullptr;       // cudaStream_t for the CUDA backend (nullptr = default stream)
  std::string config;           // force a config by name; empty = select
  const Table* table = nullptr; // nullptr = the shipped table for this device, if one matches
};

// Runs the problem and returns the choice that ran. Throws Error on invalid input.
// M = 0 or N = 0 does nothing; K = 0 writes zeros.
Choice gemm(const Problem& problem, const void* x, const void* w, void* y, const Options& options = {});

// The backend Auto resolves to, and that backend's device.
Backend resolve_backend(Backend backend);
DeviceInfo device_info(Backend backend);

// The shipped table matching the device (from the data folder's tables/), or nullptr. Loaded once.
const Table* default_table(const DeviceInfo& device);

// Where models/, tables/ and policies/ are read from: $SKINNYGEMM_DATA_DIR, else share/skinnygemm of the prefix
// this library was loaded from (wherever that prefix now is), else the source tree when this is the library the
// build tree made, else share/skinnygemm next to the running program's bin/.
std::string data_dir();

}  // namespace skinnygemm
