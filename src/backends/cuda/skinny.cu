#include "backends/cuda/skinny.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "runtime/backends.h"

#include "runtime/cost_model.h"
#include "backends/cuda/launch.cuh"

namespace skinnygemm::cuda {

SkinnyKernel find_skinny_kernel(const Config& c, DType dtype) {
  const bool bf16 = dtype == DType::BF16;
  if (dtype != DType::BF16 && dtype != DType::FP16) return nullptr;
  if (c.family == Family::Mma) return bf16 ? find_mma_bf16(c.tile_m, c.unroll) : find_mma_fp16(c.tile_m, c.unroll);
  if (c.family == Family::Reg) return bf16 ? find_reg_bf16(c.tile_m, c.unroll) : find_reg_fp16(c.tile_m, c.unroll);
  if (c.family == Family::Bulk) return bf16 ? find_bulk_bf16(c.tile_m, c.unroll) : find_bulk_fp16(c.tile_m, c.unroll);
  if (c.family == Family::Simt) return bf16 ? find_simt_bf16(c.tile_m, c.unroll) : find_simt_fp16(c.tile_m, c.unroll);
  return nullptr;
}

namespace {

// CTAs (clusters along y) of a persistent grid: as many as can be resident at once, at most one per row
// block. Read from the occupancy API once per (kernel, CTA size, shared memory, cluster size).
int resident_row_ctas(SkinnyKernel kernel, const LaunchShape& shape, int sms) {
  static std::mutex mutex;
  static std::map<std::tuple<SkinnyKernel, unsigned, std::size_t, int>, int> cache;
  const auto key = std::make_tuple(kernel, shape.block.x, shape.smem, shape.cluster_x);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int count = 0;
  if (shape.cluster_x == 1) {
    SKINNYGEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, kernel, static_cast<int>(shape.block.x),
                                                                        shape.smem));
    count *= sms;
  } else {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(shape.cluster_x), 1, 1);
    config.blockDim = shape.block;
    config.dynamicSmemBytes = shape.smem;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(shape.cluster_x);
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
    SKINNYGEMM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&count, kernel, &config));
  }
  SKINNYGEMM_CHECK(count > 0, "no CTA of " << shape.block.x << " threads with " << shape.smem
                                           << " bytes of shared memory (cluster " << shape.cluster_x
                                           << ") fits on this device");
  return cache[key] = count;
}

// Raise a kernel's dynamic shared-memory limit (only needed above the 48 KB default) to the largest size
// any of its launches has asked for: an attribute set for a smaller launch must never stay in force.
// NOTE: the shared-memory carveout stays the driver's choice. Forcing the largest one on every kernel made the
// register ring 1.8x slower (tools/probes/chain_pairs.cu at 0a31819: 3584x7168 M = 8 15.4 -> 27.9 us; the whole
// step at M = 1 went from 1.09x to 0.83x cuBLASLt): its loads in flight need L1 (docs/kernels.md, "Session 4").
void allow_smem(SkinnyKernel kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::mutex mutex;
  static std::map<SkinnyKernel, std::size_t> limit;
  std::lock_guard<std::mutex> lock(mutex);
  std::size_t& current = limit[kernel];
  if (bytes <= current) return;
  SKINNYGEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
  current = bytes;
}
}  // namespace

void launch_skinny(const Problem& p, const Config& c, const void* x, const void* w, void* y, cudaStream_t stream,
                   const OutputSegment* segments, int count) {
  SkinnyKernel kernel = find_skinny_kernel(c, p.dtype);
  SKINNYGEMM_CHECK(kernel != nullptr, c.name() << " is not built for " << dtype_name(p.dtype));
  const Decomposition d = decompose(c, p);
  SkinnyParams params{};
  params.x = x;
  params.w = w;
  params.y = y;
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
  SKINNYGEMM_CHECK(count >= 0 && count <= kMaxOutputSegments && (count == 0 || segments != nullptr),
                   count << " output segments; expected 0.." << kMaxOutputSegments);
  params.segments = count;
  for (int s = 0; s < count; ++s) {
    SKINNYGEMM_CHECK(segments[s].begin >= 0 && segments[s].rows >= 0 && segments[s].begin + segments[s].rows <= p.n &&
                         (segments[s].rows == 0 || segments[s].y != nullptr) && segments[s].ldy >= segments[s].rows,
                     "output segment " << s << " (rows [" << segments[s].begin << ", "
                                       << segments[s].begin + segments[s].rows << "), ldy " << segments[s].ldy
                                       << ") does not fit the N=" << p.n << " output rows or has no destination");
    params.seg_begin[s] = static_cast<int>(segments[s].begin);
    params.seg_rows[s] = static_cast<int>(segments[s].rows);
    params.seg_y[s] = segments[s].y;
    params.seg_ldy[s] = segments[s].ldy;
  }
  LaunchShape shape;
  shape.block = dim3(static_cast<unsigned>(c.threads()), 1, 1);
  shape.smem = static_cast<std::size_t>(smem_bytes(c, p));
  shape.cluster_x = c.split_k;
  allow_smem(kernel, shape.smem);
  const int resident = resident_row_ctas(kernel, shape, device_info().sms);
  // The bulk ring owns one row block per CTA (kernels/bulk/kernel.cuh: a persistent grid would keep the next
  // kernel's CTAs off the SMs; spreading the rows over every resident CTA did not help either, docs/kernels.md
  // "Session 4"); the other families walk the row blocks with as many CTAs as are resident.
  const int64_t row_ctas = c.family == Family::Bulk ? d.row_blocks : std::min<int64_t>(d.row_blocks, resident);
  shape.grid = dim3(static_cast<unsigned>(c.split_k), static_cast<unsigned>(row_ctas), 1);
  try {
    launch(kernel, shape, stream, params);
  } catch (const Error& e) {
    SKINNYGEMM_FAIL(c.name() << " on " << p.str() << " (grid " << shape.grid.x << "x" << shape.grid.y << ", "
                             << shape.block.x << " threads, " << shape.smem << " B shared): " << e.what());
  }
}

}  // namespace skinnygemm::cuda
