// The CUDA calls of a fused projection (runtime/projection_backend.h): device memory it owns, strided row
// copies from its scratch output into each segment's destination, and the event fork/join of run_split.
// Everything called from run() / run_split() is asynchronous and capturable; allocation and event creation
// happen only at construction.
#include "runtime/projection_backend.h"
#include "backends/cuda/check.cuh"

namespace skinnygemm::cuda {

void* device_alloc(std::size_t bytes, const char* what) {
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err != cudaSuccess) cudaGetLastError();  // a failed allocation must not poison the next launch check
  SKINNYGEMM_CHECK(err == cudaSuccess, "cudaMalloc of " << bytes << " bytes for " << what << " failed: "
                                                        << cudaGetErrorName(err) << " (" << cudaGetErrorString(err)
                                                        << ")");
  return ptr;
}

void device_free(void* ptr) noexcept {
  if (ptr) cudaFree(ptr);  // a destructor cannot throw; an error here would be a prior sticky error anyway
}

void copy_rows(void* dst, int64_t dst_pitch, const void* src, int64_t src_pitch, int64_t row_bytes, int64_t rows,
               void* stream) {
  if (rows == 0 || row_bytes == 0) return;
  SKINNYGEMM_CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_pitch), src, static_cast<size_t>(src_pitch),
                                          static_cast<size_t>(row_bytes), static_cast<size_t>(rows),
                                          cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
}

void zero_rows(void* dst, int64_t pitch, int64_t row_bytes, int64_t rows, void* stream) {
  if (rows == 0 || row_bytes == 0) return;
  SKINNYGEMM_CUDA_CHECK(cudaMemset2DAsync(dst, static_cast<size_t>(pitch), 0, static_cast<size_t>(row_bytes),
                                          static_cast<size_t>(rows), static_cast<cudaStream_t>(stream)));
}

void stream_synchronize(void* stream) {
  SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

void device_synchronize() { SKINNYGEMM_CUDA_CHECK(cudaDeviceSynchronize()); }

void* event_create() {
  cudaEvent_t event = nullptr;
  SKINNYGEMM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

void event_destroy(void* event) noexcept {
  if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

void record_and_wait(void* event, void* from_stream, void* to_stream) {
  if (from_stream == to_stream) return;  // one stream is already ordered
  auto ev = static_cast<cudaEvent_t>(event);
  SKINNYGEMM_CUDA_CHECK(cudaEventRecord(ev, static_cast<cudaStream_t>(from_stream)));
  SKINNYGEMM_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(to_stream), ev, 0));
}

}  // namespace skinnygemm::cuda
