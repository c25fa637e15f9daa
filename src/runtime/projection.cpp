// FusedProjection construction: validation with reasons, zero-copy detection or one packed copy, the
// scratch output and events (allocated here, never during a run, so runs can be captured), accessors and
// eligibility. Running is in projection_run.cpp; the state in projection_impl.h.
#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/backends.h"
#include "runtime/memory.h"
#include "runtime/projection_impl.h"

namespace skinnygemm {

const char* rung_name(Rung rung) {
  switch (rung) {
    case Rung::FusedKernel: return "fused kernel";
    case Rung::FusedGemm: return "fused GEMM";
    case Rung::Separate: return "separate";
  }
  return "?";
}

namespace projection_detail {

namespace {
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
}  // namespace

// Exact, because interleaved outputs (two segments' columns of one row-strided output) overlap as spans but
// share no byte: rows r of b meeting row i of a satisfy r*ld_b < end - base_b and r*ld_b + cols_b >
// start - base_b, a contiguous range of r for any ld_b > 0, so one test per row of the shorter block.
bool overlap(Block a, Block b) {
  if (a.rows == 0 || b.rows == 0 || a.cols == 0 || b.cols == 0) return false;
  const auto end = [](const Block& c) { return c.base + (c.rows - 1) * c.ld + c.cols; };
  if (end(a) <= b.base || end(b) <= a.base) return false;  // disjoint spans: no row to test
  if (a.ld == b.ld && a.ld > 0) {
    // One stride: row i of a meets row j of b iff -b.cols < d + (j - i) ld < a.cols, d = b.base - a.base. The
    // row differences t = j - i that satisfy it form one interval; it must meet [-(a.rows - 1), b.rows - 1].
    const int64_t d = b.base - a.base, ld = a.ld;
    const int64_t t_min = std::max<int64_t>(-(a.rows - 1), floor_div(-b.cols - d, ld) + 1);
    const int64_t t_max = std::min<int64_t>(b.rows - 1, -floor_div(d - a.cols, ld) - 1);
    return t_min <= t_max;
  }
  if (a.rows > b.rows) std::swap(a, b);
  const int64_t ld = std::max<int64_t>(b.ld, 1);
  for (int64_t i = 0; i < a.rows; ++i) {
    const int64_t s = a.base + i * a.ld - b.base, e = s + a.cols;
    const int64_t r_min = std::max<int64_t>(0, floor_div(s - b.cols, ld) + 1);
    const int64_t r_max = std::min<int64_t>(b.rows - 1, -floor_div(-e, ld) - 1);
    if (r_min <= r_max) return true;
  }
  return false;
}

Block block(const void* p, int64_t rows, int64_t cols, int64_t ld, std::size_t elem) {
  const auto e = static_cast<int64_t>(elem);
  return {reinterpret_cast<intptr_t>(p), rows, cols * e, ld * e};
}

}  // namespace projection_detail

using projection_detail::block;
using projection_detail::overlap;

FusedProjection::FusedProjection(std::vector<Segment> segments, Backend backend, int64_t max_m)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  SKINNYGEMM_CHECK(segments.size() >= 2, "a fused projection needs at least 2 segments, got "
                                             << segments.size() << "; run a single weight with skinnygemm::gemm");
  // The rung of every M up to max_m is decided at construction and the scratch output holds max_m rows.
  constexpr int64_t kMaxTokens = int64_t{1} << 20, kMaxPadTo = int64_t{1} << 16;
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= kMaxTokens,
                   "max_m=" << max_m << " must be from 1 to " << kMaxTokens << " (the most tokens one run may have)");
  s.segs = std::move(segments);
  s.backend = resolve_backend(backend);
  s.max_m = max_m;
  s.k = s.segs[0].k;
  s.dtype = s.segs[0].dtype;
  std::size_t with_dest = 0;
  s.offset.assign(1, 0);
  for (std::size_t i = 0; i < s.segs.size(); ++i) {
    Segment& g = s.segs[i];
    if (g.name.empty()) g.name = "#" + std::to_string(i);
    SKINNYGEMM_CHECK(dtype_supported(g.dtype), s.label(i) << ": dtype " << dtype_name(g.dtype)
                                                           << " is not supported; expected bf16 or fp16");
    SKINNYGEMM_CHECK(g.dtype == s.dtype, s.label(i) << " has dtype " << dtype_name(g.dtype) << " but "
                                                    << s.label(0) << " has " << dtype_name(s.dtype)
                                                    << "; fused segments share one dtype");
    SKINNYGEMM_CHECK(g.k == s.k, s.label(i) << " has K=" << g.k << " but " << s.label(0) << " has K=" << s.k
                                            << "; fused segments share one input x");
    SKINNYGEMM_CHECK(g.k > 0, s.label(i) << ": K=" << g.k << " must be > 0");
    SKINNYGEMM_CHECK(g.n > 0, s.label(i) << ": n=" << g.n << " must be > 0");
    SKINNYGEMM_CHECK(g.pad_to >= 1 && g.pad_to <= kMaxPadTo,
                     s.label(i) << ": pad_to=" << g.pad_to << " must be from 1 to " << kMaxPadTo << " (1 = no padding)");
    SKINNYGEMM_CHECK(g.w != nullptr, s.label(i) << ": weights w are null");
    SKINNYGEMM_CHECK_ALIGNED(g.w, g.dtype, s.label(i) << ": w", "fused projection");
    SKINNYGEMM_CHECK_ALIGNED(g.y, g.dtype, s.label(i) << ": y", "fused projection");
    g.ldw = g.ldw ? g.ldw : g.k;
    g.ldy = g.ldy ? g.ldy : g.n;
    SKINNYGEMM_CHECK(g.ldw >= g.k, s.label(i) << ": ldw=" << g.ldw << " is smaller than a row (K=" << g.k << ")");
    SKINNYGEMM_CHECK(g.ldy >= g.n, s.label(i) << ": ldy=" << g.ldy << " is smaller than a row (n=" << g.n << ")");
    with_dest += g.y != nullptr;
    const int64_t rows = add_bytes(g.n, g.pad_to - 1) / g.pad_to * g.pad_to;
    s.offset.push_back(add_bytes(s.offset.back(), rows));
    SKINNYGEMM_CHECK(operand_bytes(s.offset.back(), g.k, g.k, dtype_size(g.dtype)) >= 0,
                     "the merged weights up to " << s.label(i) << " (n=" << g.n << ", pad_to=" << g.pad_to
                                                 << ", K=" << g.k << ") need more bytes than a 64-bit size holds");
  }
  s.e = dtype_size(s.dtype);
  s.has_dest = with_dest == s.segs.size();
  SKINNYGEMM_CHECK(with_dest == 0 || s.has_dest,
                   with_dest << " of " << s.segs.size() << " segments have a destination y; give every segment "
                             << "one, or none (then only run_contiguous can run)");
  for (std::size_t i = 0; s.has_dest && i < s.segs.size(); ++i) {
    const projection_detail::Block yi = block(s.segs[i].y, max_m, s.segs[i].n, s.segs[i].ldy, s.e);
    for (std::size_t j = 0; j < s.segs.size(); ++j) {
      SKINNYGEMM_CHECK(j <= i || !overlap(yi, block(s.segs[j].y, max_m, s.segs[j].n, s.segs[j].ldy, s.e)),
                       s.label(i) << "'s output overlaps " << s.label(j) << "'s output within max_m=" << max_m
                                  << " rows (ldy " << s.segs[i].ldy << " and " << s.segs[j].ldy << ")");
      SKINNYGEMM_CHECK(!overlap(yi, block(s.segs[j].w, s.segs[j].n, s.k, s.segs[j].ldw, s.e)),
                       s.label(i) << "'s output overlaps the weights of " << s.label(j));
    }
  }
  // Zero-copy: each segment starts where the previous one's rows end, with one stride and no padding rows.
  s.zero_copy = true;
  for (std::size_t i = 0; i < s.segs.size(); ++i) {
    const Segment& g = s.segs[i];
    s.zero_copy = s.zero_copy && s.offset[i + 1] - s.offset[i] == g.n &&
                  (i == 0 || (g.ldw == s.segs[i - 1].ldw &&
                              g.w == static_cast<const char*>(s.segs[i - 1].w) + s.segs[i - 1].n * g.ldw * s.e));
  }
  const bool cuda = s.backend == Backend::Cuda;
  if (s.zero_copy) {
    s.w = static_cast<const char*>(s.segs[0].w);
    s.ldw = s.segs[0].ldw;
  } else {  // one packed copy: rows of exactly K, padding rows zero
    s.ldw = s.k;
    s.packed_bytes = s.total() * s.k * static_cast<int64_t>(s.e);  // fits: checked with the offsets
    if (!cuda) check_host_memory(s.packed_bytes, "the packed weights of a fused projection");
    if (cuda) s.dev_packed = cuda::device_alloc(s.packed_bytes, "the packed weights of a fused projection");
    else s.host_packed.assign(s.packed_bytes / sizeof(uint16_t), 0);
    char* dst = cuda ? static_cast<char*>(s.dev_packed) : reinterpret_cast<char*>(s.host_packed.data());
    const int64_t row = s.k * s.e;
    for (std::size_t i = 0; i < s.segs.size(); ++i) {
      const Segment& g = s.segs[i];
      const auto* src = static_cast<const char*>(g.w);
      if (cuda && i == 0) cuda::device_synchronize();  // weights written on any stream are complete first
      if (cuda) {
        cuda::copy_rows(dst + s.offset[i] * row, row, src, g.ldw * s.e, row, g.n, nullptr);
        cuda::zero_rows(dst + (s.offset[i] + g.n) * row, row, row, s.offset[i + 1] - s.offset[i] - g.n, nullptr);
      } else {
        for (int64_t r = 0; r < g.n; ++r) std::memcpy(dst + (s.offset[i] + r) * row, src + r * g.ldw * s.e, row);
      }
    }
    if (cuda) cuda::stream_synchronize(nullptr);  // the caller may free its weights once we return
    s.w = dst;
  }
  if (s.has_dest && !s.outputs_adjacent(0, s.segs.size())) {
    s.scratch_bytes = mul_bytes(mul_bytes(max_m, s.total()), static_cast<int64_t>(s.e));
    SKINNYGEMM_CHECK(s.scratch_bytes < std::numeric_limits<int64_t>::max(),
                     "the scratch output of max_m=" << max_m << " rows of N=" << s.total()
                                                    << " needs more bytes than a 64-bit size holds");
    if (!cuda) check_host_memory(s.scratch_bytes, "the scratch output of a fused projection");
    if (cuda) s.dev_scratch = cuda::device_alloc(s.scratch_bytes, "the scratch output of a fused projection");
    else s.host_scratch.assign(s.scratch_bytes / sizeof(uint16_t), 0);
    s.scratch = cuda ? static_cast<char*>(s.dev_scratch) : reinterpret_cast<char*>(s.host_scratch.data());
  }
  if (cuda) {  // created now so that run_split creates nothing while a graph is being captured
    s.fork_event = cuda::event_create();
    s.join_event = cuda::event_create();
  }
  s.decide_rungs();
}

ChoiceList::ChoiceList(std::vector<Choice> choices)
    : list_(std::make_shared<const std::vector<Choice>>(std::move(choices))) {}

FusedProjection::~FusedProjection() = default;
FusedProjection::FusedProjection(FusedProjection&&) noexcept = default;
FusedProjection& FusedProjection::operator=(FusedProjection&&) noexcept = default;

std::string FusedProjection::name() const {
  std::string n;
  for (const Segment& g : impl_->segs) n += (n.empty() ? "" : "+") + g.name;
  return n;
}
Backend FusedProjection::backend() const { return impl_->backend; }
int64_t FusedProjection::k() const { return impl_->k; }
DType FusedProjection::dtype() const { return impl_->dtype; }
int64_t FusedProjection::total_n() const { return impl_->total(); }
bool FusedProjection::zero_copy() const { return impl_->zero_copy; }
int64_t FusedProjection::packed_bytes() const { return impl_->packed_bytes; }
int64_t FusedProjection::scratch_bytes() const { return impl_->scratch_bytes; }
const void* FusedProjection::weights() const { return impl_->w; }
int64_t FusedProjection::weight_stride() const { return impl_->ldw; }

std::vector<SegmentView> FusedProjection::views() const {
  std::vector<SegmentView> v;
  for (std::size_t i = 0; i < impl_->segs.size(); ++i)
    v.push_back({impl_->segs[i].name, impl_->offset[i], impl_->segs[i].n});
  return v;
}

Eligibility FusedProjection::eligibility(const DeviceInfo& device, int64_t m) const {
  const Impl& s = *impl_;
  SKINNYGEMM_CHECK(device.is_cpu == (s.backend == Backend::Cpu),
                   "eligibility asked for device " << device.signature() << " but projection " << name()
                                                   << " was built for the " << backend_name(s.backend) << " backend");
  SKINNYGEMM_CHECK(m >= 0, "M=" << m << " must be >= 0");
  Eligibility el;
  const auto mode = s.has_dest ? Impl::Mode::Destinations : Impl::Mode::Contiguous;
  el.ladder = s.ladder(0, s.segs.size(), m, mode);
  el.rung = s.choose(0, s.segs.size(), m, mode, std::nullopt, &el.reason);
  // As operand_alignment() counts it for w: the pointer and the row stride in bytes.
  const uint64_t bits = reinterpret_cast<uintptr_t>(s.w) | static_cast<uint64_t>(s.ldw) * s.e | 16u;
  el.weight_alignment = 1;
  while (el.weight_alignment < 16 && (bits & el.weight_alignment) == 0) el.weight_alignment <<= 1;
  if (el.weight_alignment < 16)  // not a reason to leave the rung: selection routes it to a fallback config
    el.reason += "; the merged weights are " + std::to_string(el.weight_alignment) +
                 "-byte aligned (pointer, row stride), so 16-byte-load kernels cannot run them";
  return el;
}

}  // namespace skinnygemm
