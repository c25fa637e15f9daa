#include "backends/cuda/skinny.h"

#include <sstream>
#include <string>

#include "backends/cuda/launch.cuh"
#include "kernels/common/tiled.h"

namespace skinnygemm::cuda {

namespace {

class SkinnyLaunch final : public PreparedLaunch {
 public:
  SkinnyLaunch(SkinnyKernel kernel, const SkinnyParams& params, const LaunchShape& shape, std::string what)
      : kernel_(kernel), params_(params), shape_(shape), what_(std::move(what)) {}

  void run(const void* x, const void* w, void* y, void* stream) const override {
    SkinnyParams params = params_;
    params.x = x;
    params.w = w;
    params.y = y;
    try {
      launch(kernel_, shape_, static_cast<cudaStream_t>(stream), params);
    } catch (const Error& e) {
      SKINNYGEMM_FAIL(what_ << ": " << e.what());
    }
  }

 private:
  SkinnyKernel kernel_;
  SkinnyParams params_;
  LaunchShape shape_;
  std::string what_;  // names the config, problem and launch shape in a launch error
};

}  // namespace

std::unique_ptr<PreparedLaunch> prepare_skinny(SkinnyKernel kernel, const Problem& p, const Config& c,
                                               const OutputSegment* segments, int count) {
  SKINNYGEMM_CHECK(kernel != nullptr, c.name() << " is not built for " << dtype_name(p.dtype));
  const Decomposition d = decompose(c, p);
  SkinnyParams params{};
  params.m = static_cast<int>(p.m);
  params.n = static_cast<int>(p.n);
  params.k = static_cast<int>(p.k);
  params.ldx = p.x_stride();
  params.ldw = p.w_stride();
  params.ldy = p.y_stride();
  params.warps_n = c.warps_n;
  params.warps_k = c.warps_k;
  params.split_k = c.split_k;
  params.k_chunks = static_cast<int>(d.k_chunks);
  params.row_blocks = static_cast<int>(d.row_blocks);
  params.seg = output_segments(p, segments, count);
  LaunchShape shape;
  shape.block = dim3(static_cast<unsigned>(c.threads()), 1, 1);
  shape.smem = static_cast<std::size_t>(family(c.family).smem_bytes(c, p));
  shape.cluster_x = c.split_k;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), shape.smem);
  shape.grid = dim3(static_cast<unsigned>(c.split_k), static_cast<unsigned>(d.row_blocks), 1);
  std::ostringstream what;
  what << c.name() << " on " << p.str() << " (grid " << shape.grid.x << "x" << shape.grid.y << ", " << shape.block.x
       << " threads, " << shape.smem << " B shared)";
  return std::make_unique<SkinnyLaunch>(kernel, params, shape, what.str());
}

}  // namespace skinnygemm::cuda
