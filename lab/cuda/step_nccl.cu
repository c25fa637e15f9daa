// The step's communicator over NCCL (lab/step_comm.h): one rank per process and GPU, in-place all-reduces on the
// caller's stream (capturable into the step's CUDA graph), and a blocking max that keeps the ranks' decisions
// equal. CMakeLists.txt compiles this file only with NCCL; lab/no_nccl/step_nccl_stub.cpp answers otherwise.

#include <cuda_runtime.h>
#include <nccl.h>

#include <cctype>
#include <cstring>
#include <vector>

#include "runtime/backends.h"
#include "runtime/half.h"
#include "backends/cuda/check.cuh"
#include "lab/step_comm.h"

#define SKINNYGEMM_NCCL_CHECK(call)                                                                   \
  do {                                                                                                \
    const ncclResult_t skinnygemm_nccl_ = (call);                                                     \
    SKINNYGEMM_CHECK(skinnygemm_nccl_ == ncclSuccess, "NCCL error " << ncclGetErrorString(skinnygemm_nccl_) \
                                                                    << " in " #call ": " << ncclGetLastError(nullptr)); \
  } while (0)

namespace skinnygemm::tune {

namespace {

ncclDataType_t nccl_type(DType dtype) { return dtype == DType::BF16 ? ncclBfloat16 : ncclFloat16; }

ncclUniqueId parse_id(const std::string& text) {
  std::string hex;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) hex += c;
  ncclUniqueId id{};
  SKINNYGEMM_CHECK(hex.size() == 2 * sizeof id.internal &&
                       hex.find_first_not_of("0123456789abcdef") == std::string::npos,
                   "the NCCL id '" << hex.substr(0, 16) << (hex.size() > 16 ? "..." : "") << "' has " << hex.size()
                                   << " characters; expected " << 2 * sizeof id.internal
                                   << " lowercase hex digits (the file the parent process wrote)");
  for (std::size_t i = 0; i < sizeof id.internal; ++i)
    id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return id;
}

class NcclStepComm final : public StepComm {
 public:
  NcclStepComm(int rank, int ranks, const ncclUniqueId& id) : rank_(rank), ranks_(ranks) {
    const int gpus = cuda::device_count();
    SKINNYGEMM_CHECK(rank < gpus, "rank " << rank << " of " << ranks << " runs on GPU " << rank << " but " << gpus
                                          << " GPUs are visible; expected at least " << ranks);
    SKINNYGEMM_CUDA_CHECK(cudaSetDevice(rank));
    SKINNYGEMM_CUDA_CHECK(cudaMalloc(&scalar_, sizeof(int64_t)));
    const ncclResult_t r = ncclCommInitRank(&comm_, ranks, id, rank);
    if (r != ncclSuccess) {
      cudaFree(scalar_);
      SKINNYGEMM_FAIL("ncclCommInitRank (rank " << rank << " of " << ranks << ") failed: " << ncclGetErrorString(r)
                                                << ": " << ncclGetLastError(nullptr));
    }
  }
  ~NcclStepComm() override {
    ncclCommDestroy(comm_);
    cudaFree(scalar_);
  }
  NcclStepComm(const NcclStepComm&) = delete;
  NcclStepComm& operator=(const NcclStepComm&) = delete;

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }

  void all_reduce(void* data, int64_t count, DType dtype, void* stream) override {
    SKINNYGEMM_NCCL_CHECK(ncclAllReduce(data, data, static_cast<std::size_t>(count), nccl_type(dtype), ncclSum, comm_,
                                        static_cast<cudaStream_t>(stream)));
  }

  int64_t max(int64_t value, void* stream) override {
    const auto s = static_cast<cudaStream_t>(stream);
    int64_t v = value;
    SKINNYGEMM_CUDA_CHECK(cudaMemcpyAsync(scalar_, &v, sizeof v, cudaMemcpyHostToDevice, s));
    SKINNYGEMM_NCCL_CHECK(ncclAllReduce(scalar_, scalar_, 1, ncclInt64, ncclMax, comm_, s));
    SKINNYGEMM_CUDA_CHECK(cudaMemcpyAsync(&v, scalar_, sizeof v, cudaMemcpyDeviceToHost, s));
    SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(s));
    return v;
  }

 private:
  int rank_ = 0, ranks_ = 1;
  ncclComm_t comm_ = nullptr;
  int64_t* scalar_ = nullptr;  // max()'s value on the device
};

// One all-reduce of small whole numbers that every partial sum represents exactly (<= 4 x 64 = 256, within
// bf16's and fp16's exact integers): element i of rank r is ((r + i) mod 4) + 1. Also makes NCCL set up its
// connections here, before any graph capture.
void self_test(StepComm& comm, DType dtype) {
  constexpr int64_t kCount = 4096;
  std::vector<uint16_t> host(kCount);
  for (int64_t i = 0; i < kCount; ++i) host[i] = float_to_half(dtype, static_cast<float>((comm.rank() + i) % 4 + 1));
  cudaStream_t stream = nullptr;
  void* buf = nullptr;
  SKINNYGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const cudaError_t alloc = cudaMalloc(&buf, kCount * sizeof(uint16_t));
  std::string error;
  if (alloc != cudaSuccess) {
    error = std::string("cudaMalloc for the all-reduce self-test failed: ") + cudaGetErrorName(alloc);
  } else {
    try {
      SKINNYGEMM_CUDA_CHECK(cudaMemcpyAsync(buf, host.data(), kCount * sizeof(uint16_t), cudaMemcpyHostToDevice, stream));
      comm.all_reduce(buf, kCount, dtype, stream);
      SKINNYGEMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), buf, kCount * sizeof(uint16_t), cudaMemcpyDeviceToHost, stream));
      SKINNYGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
      for (int64_t i = 0; i < kCount && error.empty(); ++i) {
        double want = 0;
        for (int r = 0; r < comm.ranks(); ++r) want += static_cast<double>((r + i) % 4 + 1);
        const double got = half_to_float(dtype, host[i]);
        if (got != want)
          error = "the NCCL all-reduce self-test on rank " + std::to_string(comm.rank()) + " of " +
                  std::to_string(comm.ranks()) + " gave " + std::to_string(got) + " at element " + std::to_string(i) +
                  "; expected " + std::to_string(want) + " (the sum over ranks r of ((r + i) mod 4) + 1)";
      }
    } catch (const Error& e) {
      error = e.what();
    }
  }
  cudaFree(buf);
  cudaStreamDestroy(stream);
  SKINNYGEMM_CHECK(error.empty(), error);
}

}  // namespace

bool step_nccl_built() { return true; }

std::string nccl_unique_id_hex() {
  ncclUniqueId id{};
  SKINNYGEMM_NCCL_CHECK(ncclGetUniqueId(&id));
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (char c : id.internal) {
    const auto b = static_cast<unsigned char>(c);
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

std::unique_ptr<StepComm> make_nccl_step_comm(int rank, int ranks, const std::string& id_hex, DType dtype) {
  SKINNYGEMM_CHECK(ranks >= 1 && rank >= 0 && rank < ranks,
                   "rank " << rank << " of " << ranks << ": expected 0 <= rank < ranks");
  auto comm = std::make_unique<NcclStepComm>(rank, ranks, parse_id(id_hex));
  self_test(*comm, dtype);
  return comm;
}

}  // namespace skinnygemm::tune

