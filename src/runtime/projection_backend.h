// The CUDA calls a fused projection needs (device memory it owns, strided row copies, stream fork/join),
// behind a host-only interface so that src/runtime never includes a CUDA header. Implemented by
// src/backends/cuda/projection.cu; in builds without CUDA, src/backends/no_cuda/projection_stub.cpp throws instead.
// Streams and events are cudaStream_t / cudaEvent_t passed as void*; a null stream is the default stream.
#pragma once

#include <cstddef>
#include <cstdint>

namespace skinnygemm::cuda {

// Device memory on the current device; what names the buffer in the error when the allocation fails.
void* device_alloc(std::size_t bytes, const char* what);
void device_free(void* ptr) noexcept;

// rows rows of row_bytes bytes, device to device, asynchronous on stream (capturable).
void copy_rows(void* dst, int64_t dst_pitch, const void* src, int64_t src_pitch, int64_t row_bytes, int64_t rows,
               void* stream);
// Zeros rows rows of row_bytes bytes (pitch apart), asynchronous on stream.
void zero_rows(void* dst, int64_t pitch, int64_t row_bytes, int64_t rows, void* stream);
void stream_synchronize(void* stream);
void device_synchronize();

// An event without timing (cheapest to record and wait on).
void* event_create();
void event_destroy(void* event) noexcept;
// Records event on from_stream and makes to_stream wait for it: everything queued on from_stream so far
// happens before anything queued on to_stream afterwards. Capturable (the wait joins to_stream to a capture).
void record_and_wait(void* event, void* from_stream, void* to_stream);

}  // namespace skinnygemm::cuda
