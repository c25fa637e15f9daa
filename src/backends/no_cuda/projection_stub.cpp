// The fused projection's CUDA calls when the library is built without CUDA. CMakeLists.txt compiles this file only
// then; otherwise src/backends/cuda/projection.cu provides the definitions.
#include "runtime/projection_backend.h"
#include "skinnygemm/error.h"

namespace skinnygemm::cuda {

namespace {
constexpr const char* kNoCuda =
    "skinnygemm was built without CUDA (SKINNYGEMM_CUDA=OFF or no nvcc found); a fused projection on the cuda "
    "backend needs -DSKINNYGEMM_CUDA=ON, or use the cpu backend";
}  // namespace

void* device_alloc(std::size_t bytes, const char* what) {
  SKINNYGEMM_FAIL("cannot allocate " << bytes << " bytes of device memory for " << what << ": " << kNoCuda);
}

// Nothing can have been allocated, so there is nothing to free.
void device_free(void*) noexcept {}

void copy_rows(void*, int64_t, const void*, int64_t, int64_t row_bytes, int64_t rows, void*) {
  SKINNYGEMM_FAIL("cannot copy " << rows << " rows of " << row_bytes << " bytes on the GPU: " << kNoCuda);
}

void zero_rows(void*, int64_t, int64_t row_bytes, int64_t rows, void*) {
  SKINNYGEMM_FAIL("cannot zero " << rows << " rows of " << row_bytes << " bytes on the GPU: " << kNoCuda);
}

void stream_synchronize(void*) { SKINNYGEMM_FAIL("cannot synchronize a CUDA stream: " << kNoCuda); }

void device_synchronize() { SKINNYGEMM_FAIL("cannot synchronize a CUDA device: " << kNoCuda); }

void* event_create() { SKINNYGEMM_FAIL("cannot create a CUDA event: " << kNoCuda); }

void event_destroy(void*) noexcept {}

void record_and_wait(void*, void*, void*) { SKINNYGEMM_FAIL("cannot fork or join CUDA streams: " << kNoCuda); }

}  // namespace skinnygemm::cuda
