// The seam between the host-only core and the backends. No CUDA header here: the core and every CPU test
// build without a toolkit. When the library is built without CUDA, src/backends/no_cuda/cuda_stub.cpp answers instead.
#pragma once

#include <string>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {

// The fused-kernel rung of a FusedProjection: merged output rows [begin, begin + rows) go to y (row stride ldy
// elements, column 0 = row begin); merged rows outside every segment (padding) are not written.
struct OutputSegment {
  int64_t begin = 0, rows = 0;
  void* y = nullptr;
  int64_t ldy = 0;
};
constexpr int kMaxOutputSegments = 4;  // what the kernels' parameter block holds
// Throws Error unless count (0..kMaxOutputSegments) segments each fit the problem's N output rows and have a
// destination; every launcher that writes segments checks them here.
void check_segments(const Problem& problem, const OutputSegment* segments, int count);
// Whether ptr sits on a multiple of dtype's element size (null does): the kernels load and store whole elements (a
// 2-byte store to an odd address faults on the GPU).
bool element_aligned(const void* ptr, DType dtype);
// Throws Error "<what>=<ptr> is not aligned to its <n>-byte elements (<context>)" unless element_aligned. what and
// context are stream expressions evaluated only on failure: validate() runs on every gemm() and Plan::run, and
// building Problem::str() for each check whether or not it failed cost 1.1-1.6 us a call (session 43, `skinnygemm
// overhead`'s validate_operands).
#define SKINNYGEMM_CHECK_ALIGNED(ptr, dtype, what, context)                                                     \
  SKINNYGEMM_CHECK(::skinnygemm::element_aligned(ptr, dtype), what << "=" << (ptr) << " is not aligned to its " \
                                                                   << ::skinnygemm::dtype_size(dtype)          \
                                                                   << "-byte elements (" << context << ")")

namespace cpu {
// y = x·w^T with FP32 accumulation, multi-threaded; config must be a cpu_* config.
void gemm(const Problem& problem, const void* x, const void* w, void* y, const Config& config);
// FP64 reference: out[i*n + j] = sum_k x[i,k]*w[j,k] in double (out has m*n elements).
void reference_f64(const Problem& problem, const void* x, const void* w, double* out);
// The same with FP32 accumulation in plain k order, rounded to the dtype (the "naive low-precision"
// reference that GPU tolerances are measured against).
void reference_naive(const Problem& problem, const void* x, const void* w, void* y);
}  // namespace cpu

namespace cuda {
bool built();      // compiled with CUDA
bool available();  // built() and a usable device is present
int device_count();  // visible CUDA devices (CUDA_VISIBLE_DEVICES applies); 0 without CUDA or a device
// The current device, cached per device id: the reference stays valid (entries are never removed), so a launch reads
// it without copying the name string.
const DeviceInfo& device_info();
int current_device();      // cudaGetDevice: what a per-call cache keys on (no DeviceInfo copy)
bool config_is_built(const Config& config);  // an instance exists for this kernel config
// Launches on stream (cudaStream_t). config is bulk_*, tma_* or cublaslt*.
void gemm(const Problem& problem, const void* x, const void* w, void* y, const Config& config, void* stream);
// One skinny-kernel launch (config: bulk/tma, supports() checked) whose epilogue writes each
// OutputSegment's rows to its own destination (problem.ldy is ignored; 1..kMaxOutputSegments segments).
void gemm_segments(const Problem& problem, const void* x, const void* w, const OutputSegment* segments, int count,
                   const Config& config, void* stream);
// The identity (a cublaslt_id... config) of cuBLASLt's heuristic answer at position (what cublaslt_a<position> runs;
// -1: the default, kCublasltUnsplit: what cublaslt_unsplit runs) for problem on operands whose pointers are all
// `alignment` bytes aligned (1..256), checked to run as a config.
// Throws Error when cuBLASLt offers fewer algorithms or the identity does not resolve.
Config cublaslt_identity(const Problem& problem, int position, int alignment);

}  // namespace cuda

}  // namespace skinnygemm
