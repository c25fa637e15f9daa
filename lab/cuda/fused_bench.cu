// The fused-projection benchmark's GPU device (lab/fused_bench_device.h): the fusion's weights in rotating
// copies (>= 4x L2 together), x, per-copy destinations and merged outputs, all random or poisoned, timed with the
// protocol's shared graph timing and stream-read probe (lab/cuda/bench_common.cuh, as `skinnygemm bench` does).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "runtime/backends.h"
#include "runtime/projection_backend.h"
#include "lab/cuda/bench_common.cuh"
#include "backends/cuda/check.cuh"
#include "backends/cuda/cublaslt.h"
#include "lab/fused_bench_device.h"

namespace skinnygemm::tune {

namespace {

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// Device memory freed when the owner goes away (also when its constructor throws).
struct DeviceBuffer {
  char* ptr = nullptr;
  DeviceBuffer(int64_t bytes, const char* what)
      : ptr(static_cast<char*>(cuda::device_alloc(static_cast<std::size_t>(std::max<int64_t>(bytes, 256)), what))) {}
  ~DeviceBuffer() { cuda::device_free(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

class CudaFusedDevice final : public FusedBenchDevice {
 public:
  CudaFusedDevice(const FusedSpec& spec, int64_t max_m)
      : info_(cuda::device_info()),
        e_(static_cast<int64_t>(dtype_size(spec.dtype))),
        w_stride_(round_up(spec.rows() * spec.k * e_, 256)),
        copies_(cuda::cold_copies(w_stride_, info_.l2_bytes)),
        // The probe reads the merged problem's bytes (weights with padding + x + y) from any copy's start.
        probe_pad_(round_up(Problem{max_m, spec.merged_n(), spec.k, spec.dtype}.total_bytes(), 256)),
        out_stride_(output_offsets(spec, max_m)),
        merged_stride_(round_up(max_m * spec.merged_n() * e_, 256)),
        w_(copies_ * w_stride_ + probe_pad_, "the fusion's weight copies"),
        x_(max_m * spec.k * e_, "x"),
        out_(copies_ * out_stride_, "the segments' destinations"),
        merged_(copies_ * merged_stride_, "the merged outputs"),
        sink_(sizeof(uint32_t), "the stream-read probe's sink"),
        stream_(cuda::bench_stream()),
        dtype_(spec.dtype) {
    cuda::fill_random(w_.ptr, (copies_ * w_stride_ + probe_pad_) / e_, 0x1234u, dtype_, stream_);
    cuda::fill_random(x_.ptr, max_m * spec.k, 0xBEEFu, dtype_, stream_, 256);
    SKINNYGEMM_CUDA_CHECK(cudaGetLastError());
    // The projections built next read the weights (a packed copy goes through the default stream).
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  std::string name() const override { return info_.name; }
  Backend backend() const override { return Backend::Cuda; }
  void* stream() const override { return stream_; }
  int copies() const override { return copies_; }
  int64_t l2_bytes() const override { return info_.l2_bytes; }
  const void* x() const override { return x_.ptr; }
  const void* weights(int copy) const override { return w_.ptr + copy * w_stride_; }
  void* output(int copy, std::size_t segment) const override {
    return out_.ptr + copy * out_stride_ + offsets_.at(segment);
  }
  void* merged_output(int copy) const override { return merged_.ptr + copy * merged_stride_; }

  void poison() override {
    SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(out_.ptr, 0xFF, copies_ * out_stride_, stream_));
    SKINNYGEMM_CUDA_CHECK(cudaMemsetAsync(merged_.ptr, 0xFF, copies_ * merged_stride_, stream_));
  }

  std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) override {
    std::vector<uint16_t> host(static_cast<std::size_t>(m * n));
    const auto row = static_cast<std::size_t>(n * e_), pitch = static_cast<std::size_t>(ld * e_);
    SKINNYGEMM_CUDA_CHECK(cudaMemcpy2DAsync(host.data(), row, ptr, pitch, row, static_cast<std::size_t>(m),
                                            cudaMemcpyDeviceToHost, stream_));
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return host;
  }

  FusedTiming time(const std::function<void(int)>& launch_copy, int samples, int replays) override {
    const cuda::GraphTiming t = cuda::time_graph(stream_, copies_, samples, replays, launch_copy);
    return {t.median_us, t.spread};
  }

  double stream_read_us(int64_t bytes, int samples, int replays) override {
    SKINNYGEMM_CHECK(bytes <= probe_pad_, "the stream-read probe of " << bytes << " bytes would read past the "
                                                                      << probe_pad_ << " bytes after the last copy");
    return cuda::stream_read_us(stream_, w_.ptr, w_stride_, copies_, bytes, reinterpret_cast<uint32_t*>(sink_.ptr),
                                info_.sms, samples, replays);
  }

  int cublaslt_algos(const Problem& problem, const void* x, const void* w, const void* y) override {
    return cuda::cublaslt_algo_count(problem, x, w, y);
  }

 private:
  // Each segment's [max_m, n_i] destination, 256-byte aligned and a gap apart, so that two destinations are
  // never adjacent columns of one output (run() would write those in place, without the per-segment copies).
  int64_t output_offsets(const FusedSpec& spec, int64_t max_m) {
    int64_t at = 0;
    for (const FusedSegmentSpec& s : spec.segments) {
      offsets_.push_back(at);
      at = round_up(at + max_m * s.n * e_, 256) + 256;
    }
    return at;
  }

  DeviceInfo info_;
  int64_t e_;
  int64_t w_stride_;
  int copies_;
  int64_t probe_pad_;
  std::vector<int64_t> offsets_;  // filled by output_offsets, before out_stride_ (declared first)
  int64_t out_stride_;
  int64_t merged_stride_;
  DeviceBuffer w_, x_, out_, merged_, sink_;
  cudaStream_t stream_;
  DType dtype_;
};

}  // namespace

std::unique_ptr<FusedBenchDevice> make_cuda_fused_device(const FusedSpec& spec, int64_t max_m) {
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= 64, "max_m=" << max_m << " must be in 1..64");
  return std::make_unique<CudaFusedDevice>(spec, max_m);
}

}  // namespace skinnygemm::tune
