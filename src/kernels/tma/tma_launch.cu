// Launch of the TMA family: the stream-K grid, the tensor maps of x and w, and the split reduction's workspace.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "runtime/backends.h"
#include "runtime/warn_once.h"
#include "backends/cuda/launch.cuh"
#include "kernels/tma/tma_family.h"
#include "kernels/tma/tma_instances.cuh"
#include "skinnygemm/error.h"

namespace skinnygemm::cuda {
const DeviceInfo& device_info();
}

namespace skinnygemm::tma {

namespace {

Kernel find(const Config& c, DType dtype) {
  if (c.row_stream) {
    if (!row_stream_built(c.rows, c.tile_m) || c.boxes != row_stream_boxes(c.rows)) return nullptr;
    return dtype == DType::BF16 ? find_row_stream_bf16(c.rows) : dtype == DType::FP16 ? find_row_stream_fp16(c.rows) : nullptr;
  }
  if (dtype == DType::BF16) return find_bf16(c.rows, c.tile_m, c.boxes);
  if (dtype == DType::FP16) return find_fp16(c.rows, c.tile_m, c.boxes);
  return nullptr;
}

// The driver's cuTensorMapEncodeTiled through the runtime's entry-point query, so that the library does not link
// libcuda itself (it loads with the runtime; build machines without a GPU driver have only a stub of it).
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    SKINNYGEMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault,
                                                           &found));
    SKINNYGEMM_CHECK(found == cudaDriverEntryPointSuccess && entry != nullptr,
                     "the CUDA driver has no cuTensorMapEncodeTiled (the tma family needs a CUDA 12+ driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  }();
  return fn;
}

// The project's tensor maps: 16-bit elements, 64-wide boxes along the row (one 128-byte line) with the 128-byte
// swizzle, zeros past the edges; `rank` dims, the strides of dims 1.. in bytes.
// The L2 promotion: none for the weights, which are read once in whole 128-byte lines (every line of a box is
// requested anyway). With 256-byte promotion, the map of every earlier session, the family's ring alone ran 8.5% (205 MB)
// and 9.9% (90 MB) slower than the dependent-chain floor and the kernel 0.2-3.5 us slower per launch on the Kimi-K3 shapes at M = 1
// (tools/probes/ring_ladder.cu, session 31, call 3: 7168 x 14336 50.48 -> 46.95 us, 6288 x 7168 23.02 -> 21.92, 3648 x
// 7168 14.85 -> 14.36; the ring alone 48.65 -> 45.14 against the chain floor's 44.85; the same with 128-byte
// promotion; docs/kernels.md "Session 31"). x keeps 256 bytes: its lines are read by every CTA from the L2.
enum class Reads { Once, Shared };
CUresult encode(CUtensorMap* map, const void* base, DType dtype, int rank, const cuuint64_t* dims,
                const cuuint64_t* strides, const cuuint32_t* box, Reads reads) {
  const cuuint32_t element_strides[3] = {1, 1, 1};
  return encode_tiled()(map, dtype == DType::BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                        rank, const_cast<void*>(base), dims, strides, box, element_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        reads == Reads::Once ? CU_TENSOR_MAP_L2_PROMOTION_NONE : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}
// The lab's ablation bit 5 (value 32; correct results): the weight maps promote L2 fills to 256 bytes, as before
// session 31, so that one binary times both (tools/trials/step_ablation.sh).
Reads weight_reads(int ablate) { return (ablate & 32) ? Reads::Shared : Reads::Once; }

// A 2D tensor map over a row-major [rows, cols] matrix with a row stride of ld elements, read in boxes of
// 64 columns x box_rows rows.
CUtensorMap tensor_map(const void* base, DType dtype, int64_t rows, int64_t cols, int64_t ld, int box_rows, Reads reads) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kStageK), static_cast<cuuint32_t>(box_rows)};
  const CUresult r = encode(&map, base, dtype, 2, dims, strides, box, reads);
  SKINNYGEMM_CHECK(r == CUDA_SUCCESS, "cuTensorMapEncodeTiled failed (CUresult " << static_cast<int>(r) << ") for a "
                                          << rows << "x" << cols << " matrix with row stride " << ld
                                          << " elements at " << base);
  return map;
}

// The same matrix as a 3D view [cols / 64][rows][64] (strides: a row ld elements, a box 64), read in boxes of
// 64 x box_rows x `boxes`: one copy brings a whole stage (kBoxes boxes of 64 columns) in the layout kBoxes 2D copies
// give it. cols must be a multiple of 64 (the view has no column tail to fill with zeros); boxes past cols / 64 and
// rows past `rows` read as zeros. The view's strides are not increasing (a row, then 128 bytes): the box order that
// gives [box][row][64] in shared memory. The H200's driver (CUDA 13.0) takes it and the copies are bitwise exact
// (GpuTma.OneCopyPerStageAndCopiesPerBoxGiveTheSameBits); a driver that refused it would make this return false, and
// the launch copies box by box after saying so once. (A driver that took it and laid it out otherwise is what the
// test is for.)
bool tensor_map_3d(CUtensorMap* map, const void* base, DType dtype, int64_t rows, int64_t cols, int64_t ld,
                   int box_rows, int boxes, Reads reads) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(kStageK), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(cols / kStageK)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld) * 2, static_cast<cuuint64_t>(kStageBytes)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kStageK), static_cast<cuuint32_t>(box_rows),
                             static_cast<cuuint32_t>(boxes)};
  const CUresult r = encode(map, base, dtype, 3, dims, strides, box, reads);
  if (r != CUDA_SUCCESS)
    warn_once("tma-3d-map", "cuTensorMapEncodeTiled refused a 3D view (CUresult " + std::to_string(r) + ") of a " +
                                std::to_string(rows) + "x" + std::to_string(cols) +
                                " matrix; the tma family copies box by box");
  return r == CUDA_SUCCESS;
}

// The split reduction's workspace of one stream: launches on one stream touch it only after griddepcontrol.wait,
// i.e. after the previous launch finished, so they share it; two streams never do. Sized for the largest grid
// (2 CTAs per SM x the largest tile) and 2^20 row tiles; allocated once per stream (cuda::stream_key), capture-safe.
// A CUDA graph keeps the workspace of the stream it was captured on: two graphs captured on one stream must not be
// replayed at once on two streams (README "Streams and graphs").
struct Workspace {
  float* partials = nullptr;
  unsigned* counters = nullptr;
  float* lead_partials = nullptr;  // the lead split's polled partials: every word the sentinel between launches
};

Workspace workspace(cudaStream_t stream, int sms) {
  static std::mutex mutex;
  static std::map<cuda::StreamKey, Workspace> all;
  const cuda::StreamKey key = cuda::stream_key(stream);
  std::lock_guard<std::mutex> lock(mutex);
  Workspace& ws = all[key];
  if (ws.partials) return ws;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  SKINNYGEMM_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  const std::size_t floats = partial_floats(2 * sms, 128, 64);
  cudaStream_t side = nullptr;
  cudaError_t status = cudaMalloc(&ws.partials, floats * sizeof(float));
  if (status == cudaSuccess) status = cudaMalloc(&ws.counters, kMaxCounters * sizeof(unsigned));
  const std::size_t lead_floats = lead_partial_floats(sms);
  if (status == cudaSuccess) status = cudaMalloc(&ws.lead_partials, lead_floats * sizeof(float));
  if (status == cudaSuccess) status = cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  if (status == cudaSuccess) status = cudaMemsetAsync(ws.counters, 0, kMaxCounters * sizeof(unsigned), side);
  if (status == cudaSuccess) status = cudaMemsetAsync(ws.lead_partials, 0xff, lead_floats * sizeof(float), side);
  if (status == cudaSuccess) status = cudaStreamSynchronize(side);
  if (side) cudaStreamDestroy(side);
  SKINNYGEMM_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  SKINNYGEMM_CUDA_CHECK(status);
  return ws;
}

std::atomic<int> g_ablate{0};  // set_ablate (the lab's ablation, timing only)

// Stream-K's owners gather polled shares up to this M (tma_gemm.cuh); above it the released counter. Lab knob
// SKINNYGEMM_TMA_STREAMK_POLLED_M for the A/B in one binary (1: the rule of sessions 24-27).
int streamk_polled_max_m() {
  static const int m = [] {
    constexpr int kShipped = 2;
    const char* v = std::getenv("SKINNYGEMM_TMA_STREAMK_POLLED_M");
    if (!v || !*v) return kShipped;
    char* end = nullptr;
    const long parsed = std::strtol(v, &end, 10);
    if (*end != '\0' || parsed < 0 || parsed > 64) {
      warn_once("tma-polled-m", std::string("SKINNYGEMM_TMA_STREAMK_POLLED_M=") + v +
                                    " is not an M in 0..64; the shipped bound " + std::to_string(kShipped) + " stays");
      return kShipped;
    }
    return static_cast<int>(parsed);
  }();
  return m;
}

// The lab's timeline sink (tma_family.h). `on` lets a launch with no sink skip the mutex.
struct TraceSink {
  std::atomic<bool> on{false};
  std::mutex mutex;
  unsigned long long* words = nullptr;
  long long capacity = 0, used = 0;
  std::vector<TraceLaunch> launches;
};
TraceSink& trace_sink() {
  static TraceSink sink;
  return sink;
}

// The words of one launch of ctas CTAs in the sink, listed; null when no sink is set.
unsigned long long* trace_words(const Problem& p, const Config& c, int ctas) {
  TraceSink& t = trace_sink();
  if (!t.on.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard<std::mutex> lock(t.mutex);
  if (!t.words) return nullptr;
  const long long need = static_cast<long long>(kTraceWords) * ctas;
  SKINNYGEMM_CHECK(t.used + need <= t.capacity, "the TMA trace holds " << t.capacity << " words; launch "
                                                    << t.launches.size() + 1 << " (" << c.name() << " on " << p.str()
                                                    << ", " << ctas << " CTAs) needs " << need << " more after "
                                                    << t.used);
  t.launches.push_back({p, c.name(), t.used, ctas});
  unsigned long long* w = t.words + t.used;
  t.used += need;
  return w;
}

// Whether every row of y, or of each output segment, starts 16-byte aligned (the staged epilogue's 16-byte stores,
// tma_gemm.cuh): the base, the row stride in bytes and, for segments, the first row (stores cover 8 rows from a
// multiple of 8).
bool y_rows_aligned16(const Problem& p, const void* y, const cuda::OutputSegments& seg) {
  const long long elem = static_cast<long long>(dtype_size(p.dtype));
  auto aligned = [&](const void* base, long long ld) {
    return (reinterpret_cast<std::uintptr_t>(base) & 15) == 0 && (ld * elem) % 16 == 0;
  };
  if (seg.count == 0) return aligned(y, p.y_stride());
  for (int s = 0; s < seg.count; ++s)
    if (!aligned(seg.y[s], seg.ldy[s]) || seg.begin[s] % 8 != 0) return false;
  return true;
}

// The fields every decomposition reads: the problem, the grid's stages and tiles, the ring, the output segments.
TmaParams common_params(const Problem& p, const Config& c, const Grid& g, void* y, const OutputSegment* segments, int count) {
  TmaParams params{};
  params.y = y;
  params.m = static_cast<int>(p.m);
  params.n = static_cast<int>(p.n);
  params.k = static_cast<int>(p.k);
  params.ldy = p.y_stride();
  params.k_stages = g.k_stages;
  params.tiles = g.tiles;
  params.units = g.units;
  params.stages = c.stages;
  params.seg = cuda::output_segments(p, segments, count);
  return params;
}

// The launch itself, its timeline words taken last (a listed launch is one that was made), a failure named by config,
// problem and shape.
void launch_kernel(Kernel kernel, const cuda::LaunchShape& shape, cudaStream_t stream, const CUtensorMap& w_map,
                   const CUtensorMap& x_map, TmaParams params, const Problem& p, const Config& c, int ctas) {
  cuda::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), shape.smem);
  params.trace = trace_words(p, c, ctas);
  try {
    cuda::launch(kernel, shape, stream, w_map, x_map, params);
  } catch (const Error& e) {
    SKINNYGEMM_FAIL(c.name() << " on " << p.str() << " (" << ctas << " CTAs, " << shape.smem << " B shared): "
                             << e.what());
  }
}

// The two tensor maps of a launch of the main kernel (not the row stream's). One 3D copy per stage where K allows it:
// against a 2D copy per box in the same binary (session 25, calls 1 and 6), the fused step 34-45 us faster at M = 1-16,
// 896 x 7168 and 7168 x 768 3-3.5% faster alone, 1536 x 128 the same; the 16-row one-CTA-per-tile ring 2.7-3.2 us
// faster (docs/kernels.md "Session 25"). Two encodes: 0.107 us of the launch's 0.55-0.59 us of host time on an H100
// (session 44), 0.134 of 0.535 on the H200 (session 45; `skinnygemm overhead --backend cuda`, whose row times this).
struct Maps {
  CUtensorMap w, x;
  bool box3d = false;     // both are the 3D views
  bool packed_w = false;  // the lab's ablation bit 4 was applied
};
Maps launch_maps(const Problem& p, const Config& c, const void* x, const void* w, int ablate) {
  Maps m;
  const Reads w_reads = weight_reads(ablate);
  m.box3d = c.boxes > 1 && p.k % kStageK == 0 &&
            tensor_map_3d(&m.w, w, p.dtype, p.n, p.k, p.w_stride(), c.rows, c.boxes, w_reads) &&
            tensor_map_3d(&m.x, x, p.dtype, p.m, p.k, p.x_read_stride(), c.tile_m, c.boxes, Reads::Shared);
  if (!m.box3d) {
    m.w = tensor_map(w, p.dtype, p.n, p.k, p.w_stride(), c.rows, w_reads);
    m.x = tensor_map(x, p.dtype, p.m, p.k, p.x_read_stride(), c.tile_m, Reads::Shared);
  }
  // The lab's ablation bit 4 (value 16, timing only, wrong results): w as [N K / 64] lines of 64, a stage one box of
  // rows x boxes lines, so every weight copy is one contiguous run (tails read past N K as zeros).
  m.packed_w = (ablate & 16) && p.k % kStageK == 0 && c.rows * c.boxes <= 256;
  if (m.packed_w) m.w = tensor_map(w, p.dtype, p.n * p.k / kStageK, kStageK, kStageK, c.rows * c.boxes, w_reads);
  return m;
}

// The row stream (row_stream.cuh): one CTA per row tile, no workspace; w in boxes of rows x 16 KB / rows, x in boxes of
// its M rows (the copy engine reads no zero rows; the slots are sized for the token tile).
void launch_row_stream(const Problem& p, const Config& c, Kernel kernel, const Grid& g, const void* x, const void* w,
                       void* y, cudaStream_t stream, const OutputSegment* segments, int count) {
  TmaParams params = common_params(p, c, g, y, segments, count);
  params.cluster = 1;
  params.box3d = 1;
  CUtensorMap w_map, x_map;
  SKINNYGEMM_CHECK(p.k % kStageK == 0 &&
                       tensor_map_3d(&w_map, w, p.dtype, p.n, p.k, p.w_stride(), c.rows, c.boxes, Reads::Once) &&
                       tensor_map_3d(&x_map, x, p.dtype, p.m, p.k, p.x_read_stride(), params.m, c.boxes, Reads::Shared),
                   c.name() << " on " << p.str() << ": the row stream needs K % 64 == 0 and the driver to take the 3D "
                             "views of w and x; it has no box-by-box copy (the warning above says the family's other "
                             "kernels do)");
  cuda::LaunchShape shape;
  shape.grid = dim3(static_cast<unsigned>(g.ctas), 1, 1);
  shape.block = dim3(kThreads, 1, 1);
  // Slots sized for M's x rows, not the tile's (fits() checked the tile's): the room left beside the CTA for the next
  // launch's grows as M shrinks (16-row tiles of 4 stages at M = 1: 73 KB against 101 at the 8-token tile's size). At
  // least a third of the SM's shared memory, so that no SM takes three CTAs of one launch while others hold one (the
  // chain floor's habit, lab/cuda/chain_floor.cuh: a third CTA ran 7168 x 14336 60.1 against 46.0 us in session 31; the
  // probe's 73 KB CTAs on 3648 x 7168 at M = 1 ran 17.93 us against 12.88 at M = 2, 75 KB, where three no longer fit).
  const int64_t sm_third = cuda::device_info().smem_per_sm / 3 - kReservedSmemPerCta + 1;
  shape.smem = static_cast<std::size_t>(std::max<int64_t>(row_stream_smem_bytes(c.rows, params.m, c.stages), sm_third));
  launch_kernel(kernel, shape, stream, w_map, x_map, params, p, c, g.ctas);
}

}  // namespace

void set_ablate(int bits) { g_ablate.store(bits, std::memory_order_relaxed); }

void set_trace(unsigned long long* device_words, long long capacity_words) {
  TraceSink& t = trace_sink();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.words = device_words, t.capacity = device_words ? capacity_words : 0, t.used = 0;
  t.launches.clear();
  t.on.store(device_words != nullptr, std::memory_order_release);
}

std::vector<TraceLaunch> take_trace() {
  TraceSink& t = trace_sink();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<TraceLaunch> out;
  out.swap(t.launches);
  return out;
}

bool is_built(const Config& c) {
  return c.family == Family::Tma && find(c, DType::BF16) != nullptr && find(c, DType::FP16) != nullptr;
}

void launch(const Problem& p, const Config& c, const void* x, const void* w, void* y, void* stream_ptr,
            const OutputSegment* segments, int count) {
  const Kernel kernel = find(c, p.dtype);
  SKINNYGEMM_CHECK(kernel != nullptr, c.name() << " is not built for " << dtype_name(p.dtype));
  // supports() checks it too; the kernel's gathers and resets of the polled words cover M tokens of one tile only.
  SKINNYGEMM_CHECK(p.m >= 1 && p.m <= c.tile_m, c.name() << ": M=" << p.m << ", expected 1.." << c.tile_m);
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  const int sms = cuda::device_info().sms;
  const int cluster = c.cluster > 1 ? c.cluster : 1;
  // cluster 1: one CTA per row tile over the whole K, which the kernel's stream-K arithmetic gives with tiles CTAs.
  const Grid g = launch_grid(c, p, sms);
  // The row stream has no workspace: no counter per row tile bounds its N.
  if (c.row_stream) return launch_row_stream(p, c, kernel, g, x, w, y, stream, segments, count);
  SKINNYGEMM_CHECK(g.tiles <= kMaxCounters, "N=" << p.n << " needs " << g.tiles << " row tiles of " << c.rows
                                                 << "; the workspace holds " << kMaxCounters);
  const Workspace ws = workspace(stream, sms);
  TmaParams params = common_params(p, c, g, y, segments, count);
  params.cluster = cluster;
  params.parts = g.parts;
  params.lead_stages = g.lead_stages;
  // The lead split's handoff: polled words for token tiles <= 16 (no fence on the parts' side: 0.3-0.5 us faster at
  // M = 1 and 8 on 2112, 1536 and 3648 x 7168), the released counter above for 32 and 64. At M = 16 the polled words
  // cost the whole step 150 us with per-element partial stores (docs/kernels.md "Session 14"); with the staged
  // epilogue (two 16-byte stores per thread) they are 24 us faster than the counter (session 19: the parts' drain
  // 1.38 -> 0.45 us).
  // Stream-K (its owners gather the other CTAs' polled shares, tma_gemm.cuh) at M = 1 (and 2, below): against the released
  // counter in the same call (session 24, call 4), 7168 x 14336 49.97 against 51.09 us, 20480 x 7168 71.05 against
  // 72.75, 5632 x 12288 34.20 against 34.55, 4224 x 16384 34.28 against 34.72; at M = 16 it lost 5-10% on the other
  // three (53.43 against 50.91, 37.57 against 35.31, 39.19 against 35.60) and won 1.4% on 20480 x 7168: its shares
  // leave as 4-byte stores per output. M = 2 since session 28: the fused step with 6016 x 7168 on stream-K ran 6606
  // against 6622 us with the polled gather (call 3, three rounds each, against the lead split and the counter; with the
  // counter stream-K had lost 47 us there in the search). To M = 4 it ran 6605 against 6617 (call 4), under that
  // call's margin: not taken. M = 5-8 were not measured (docs/kernels.md "Session 28").
  params.handoff = c.tile_m <= 16 && (c.lead >= 0 || c.cluster != 0 || p.m <= streamk_polled_max_m()) ? 1 : 0;
  params.lead_partials = ws.lead_partials;
  SKINNYGEMM_CHECK(partials_fit(g, c.rows, c.tile_m, c.cluster, c.lead >= 0, sms),
                   c.name() << " on " << p.str() << ": " << g.ctas << " CTAs exceed the partials workspace");
  params.partials = ws.partials;
  params.counters = ws.counters;
  params.y_rows16 = y_rows_aligned16(p, y, params.seg) ? 1 : 0;
  params.ablate = g_ablate.load(std::memory_order_relaxed);
  const Maps maps = launch_maps(p, c, x, w, params.ablate);
  params.box3d = maps.box3d ? 1 : 0;
  if (!maps.packed_w) params.ablate &= ~16;
  cuda::LaunchShape shape;
  shape.grid = dim3(static_cast<unsigned>(g.ctas), 1, 1);
  shape.block = dim3(kThreads, 1, 1);
  shape.smem = static_cast<std::size_t>(smem_bytes(c.rows, c.tile_m, c.stages, c.boxes, c.cluster, c.lead >= 0));
  shape.cluster_x = cluster;
  launch_kernel(kernel, shape, stream, maps.w, maps.x, params, p, c, g.ctas);
}

bool encode_launch_maps(const Problem& p, const Config& c, const void* x, const void* w) {
  SKINNYGEMM_CHECK(!c.row_stream, c.name() << " is a row-stream config: its launch maps x in boxes of M rows and has "
                                              "no 2D fallback; encode_launch_maps makes the main kernel's maps only");
  return launch_maps(p, c, x, w, g_ablate.load(std::memory_order_relaxed)).box3d;
}

int resident_ctas_per_sm(const Config& c) {
  SKINNYGEMM_CHECK(!c.row_stream,
                   c.name() << " is a row-stream config: resident_ctas_per_sm sizes the main kernel's ring");
  const Kernel kernel = find(c, DType::BF16);
  SKINNYGEMM_CHECK(kernel != nullptr, c.name() << " is not built");
  const auto smem = static_cast<std::size_t>(smem_bytes(c.rows, c.tile_m, c.stages, c.boxes, c.cluster, c.lead >= 0));
  cuda::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);
  int per_sm = 0;
  SKINNYGEMM_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem) == cudaSuccess,
                   c.name() << ": the occupancy query failed");
  return per_sm;
}

}  // namespace skinnygemm::tma
