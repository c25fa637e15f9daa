// Device facts, read from the device and cached per device id; PDL switch.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "runtime/backends.h"
#include "backends/cuda/check.cuh"
#include "backends/cuda/launch.cuh"

namespace skinnygemm::cuda {

bool built() { return true; }

bool available() {
  static const bool ok = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  }();
  if (!ok) cudaGetLastError();  // clear the sticky "no device" error for later callers
  return ok;
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // "no device" must not poison later calls
    return 0;
  }
  return count;
}

namespace {
std::string version_string(int v, int major_div, int minor_div) {
  return std::to_string(v / major_div) + "." + std::to_string((v % major_div) / minor_div);
}
}  // namespace

int current_device() {
  int dev = 0;
  SKINNYGEMM_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

const DeviceInfo& device_info() {
  int dev = 0;
  SKINNYGEMM_CUDA_CHECK(cudaGetDevice(&dev));
  static std::mutex mutex;
  static std::map<int, DeviceInfo> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(dev);
  if (it != cache.end()) return it->second;
  cudaDeviceProp prop{};
  SKINNYGEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  DeviceInfo d;
  d.is_cpu = false;
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.l2_bytes = prop.l2CacheSize;
  d.smem_per_block_optin = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  d.smem_per_sm = static_cast<int64_t>(prop.sharedMemPerMultiprocessor);
  d.regs_per_sm = prop.regsPerMultiprocessor;
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  int runtime = 0;
  SKINNYGEMM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  d.cuda_version = version_string(runtime, 1000, 10);
  const auto lt = static_cast<int>(cublasLtGetVersion());
  d.cublaslt_version = version_string(lt, 10000, 100) + "." + std::to_string(lt % 100);
  return cache[dev] = d;
}

void allow_dynamic_smem(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  int dev = 0;
  SKINNYGEMM_CUDA_CHECK(cudaGetDevice(&dev));
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, std::size_t> limit;
  std::lock_guard<std::mutex> lock(mutex);
  std::size_t& current = limit[{dev, kernel}];
  if (bytes <= current) return;
  SKINNYGEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
  current = bytes;
}

StreamKey stream_key(cudaStream_t stream) {
  StreamKey key;
  SKINNYGEMM_CUDA_CHECK(cudaGetDevice(&key.device));
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
  const bool per_thread = stream == cudaStreamPerThread || stream == nullptr;  // null is the thread's own here
#else
  const bool per_thread = stream == cudaStreamPerThread;
  if (stream == cudaStreamLegacy) stream = nullptr;  // two names of the one legacy default stream
#endif
  key.stream = stream;
  if (per_thread) key.thread = std::this_thread::get_id();
  return key;
}

bool pdl_enabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("SKINNYGEMM_PDL");
    if (env && std::string(env) == "0") return false;
    return available() && device_info().cc_major >= 9;
  }();
  return enabled;
}

}  // namespace skinnygemm::cuda
