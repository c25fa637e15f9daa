// Error checks for CUDA runtime, driver and cuBLASLt calls: throw skinnygemm::Error with file:line,
// the call and the error name. Never exit or abort.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "skinnygemm/error.h"

// A failed call's error is cleared before the throw (cudaGetLastError), so that it does not surface in the caller's next
// unrelated check (torch's launch check after ours): since session 43 a successful launch no longer clears errors that
// are not ours (launch.cuh), so each failure clears its own. A sticky error (a fault on the device) stays regardless.
#define SKINNYGEMM_CUDA_CHECK(call)                                                                   \
  do {                                                                                                \
    cudaError_t skinnygemm_err_ = (call);                                                             \
    if (skinnygemm_err_ != cudaSuccess) cudaGetLastError();                                           \
    SKINNYGEMM_CHECK(skinnygemm_err_ == cudaSuccess, "CUDA error " << cudaGetErrorName(skinnygemm_err_) \
                                                                   << " (" << cudaGetErrorString(skinnygemm_err_) \
                                                                   << ") in " #call);                 \
  } while (0)

#define SKINNYGEMM_CUBLAS_CHECK(call)                                                                 \
  do {                                                                                                \
    cublasStatus_t skinnygemm_st_ = (call);                                                           \
    SKINNYGEMM_CHECK(skinnygemm_st_ == CUBLAS_STATUS_SUCCESS,                                         \
                     "cuBLASLt error " << cublasLtGetStatusName(skinnygemm_st_) << " ("                \
                                       << cublasLtGetStatusString(skinnygemm_st_) << ") in " #call); \
  } while (0)
