#include "skinnygemm/problem.h"

#include <cstdint>
#include <sstream>

#include "runtime/backends.h"
#include "runtime/memory.h"
#include "skinnygemm/error.h"

namespace skinnygemm {

int64_t Problem::weight_bytes() const { return n * k * static_cast<int64_t>(dtype_size(dtype)); }

int64_t Problem::total_bytes() const {
  return (n * k + m * k + m * n) * static_cast<int64_t>(dtype_size(dtype));
}

std::string Problem::str() const {
  std::ostringstream os;
  os << dtype_name(dtype) << " m=" << m << " n=" << n << " k=" << k << " ldx=" << x_stride()
     << " ldw=" << w_stride() << " ldy=" << y_stride();
  return os.str();
}

bool operator==(const Problem& a, const Problem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.dtype == b.dtype && a.x_stride() == b.x_stride() &&
         a.w_stride() == b.w_stride() && a.y_stride() == b.y_stride();
}

void validate(const Problem& p) {
  SKINNYGEMM_CHECK(p.m >= 0, "M=" << p.m << " must be >= 0");
  SKINNYGEMM_CHECK(p.n >= 0, "N=" << p.n << " must be >= 0");
  SKINNYGEMM_CHECK(p.k >= 0, "K=" << p.k << " must be >= 0");
  SKINNYGEMM_CHECK(dtype_supported(p.dtype),
                   "dtype " << dtype_name(p.dtype) << " is not supported; expected bf16 or fp16");
  SKINNYGEMM_CHECK(p.ldx >= 0 && p.ldw >= 0 && p.ldy >= 0,
                   "row strides must be >= 0 (0 = packed), got ldx=" << p.ldx << " ldw=" << p.ldw
                                                                      << " ldy=" << p.ldy);
  SKINNYGEMM_CHECK(p.x_stride() >= p.k, "ldx=" << p.x_stride() << " is smaller than a row of x (K=" << p.k << ")");
  SKINNYGEMM_CHECK(p.w_stride() >= p.k, "ldw=" << p.w_stride() << " is smaller than a row of w (K=" << p.k << ")");
  SKINNYGEMM_CHECK(p.y_stride() >= p.n, "ldy=" << p.y_stride() << " is smaller than a row of y (N=" << p.n << ")");
  // Byte sizes (and the spans and allocations computed from them) must fit in int64: M = N = 2^40 would wrap.
  const int64_t e = static_cast<int64_t>(dtype_size(p.dtype));
  struct Operand {
    const char* name;
    int64_t rows, cols, stride;
  };
  for (const Operand& o : {Operand{"x", p.m, p.k, p.x_stride()}, Operand{"w", p.n, p.k, p.w_stride()},
                           Operand{"y", p.m, p.n, p.y_stride()}})
    SKINNYGEMM_CHECK(operand_bytes(o.rows, o.cols, o.stride, e) >= 0,
                     o.name << " of " << p.str() << " needs "
                            << (static_cast<double>(o.rows - 1) * static_cast<double>(o.stride) + o.cols) * e
                            << " bytes, more than a 64-bit size holds (at most 2^63 bytes are available)");
}

namespace {
struct Span {
  uintptr_t begin, end;  // [begin, end) in bytes
};
Span span_of(const void* ptr, int64_t rows, int64_t cols, int64_t stride, std::size_t elem) {
  auto b = reinterpret_cast<uintptr_t>(ptr);
  if (rows == 0 || cols == 0) return {b, b};
  return {b, b + static_cast<uintptr_t>(((rows - 1) * stride + cols) * static_cast<int64_t>(elem))};
}
bool overlaps(Span a, Span b) { return a.begin < b.end && b.begin < a.end; }
}  // namespace

void validate(const Problem& p, const void* x, const void* w, const void* y) {
  validate(p);
  if (p.empty()) return;
  SKINNYGEMM_CHECK(y != nullptr, "y is null for " << p.str());
  SKINNYGEMM_CHECK_ALIGNED(y, p.dtype, "y", p.str());
  if (p.k == 0) return;  // x and w are not read
  SKINNYGEMM_CHECK(x != nullptr, "x is null for " << p.str());
  SKINNYGEMM_CHECK(w != nullptr, "w is null for " << p.str());
  SKINNYGEMM_CHECK_ALIGNED(x, p.dtype, "x", p.str());
  SKINNYGEMM_CHECK_ALIGNED(w, p.dtype, "w", p.str());
  const std::size_t e = dtype_size(p.dtype);
  const Span sy = span_of(y, p.m, p.n, p.y_stride(), e);
  SKINNYGEMM_CHECK(!overlaps(sy, span_of(x, p.m, p.k, p.x_stride(), e)),
                   "output y overlaps input x (" << p.str() << ")");
  SKINNYGEMM_CHECK(!overlaps(sy, span_of(w, p.n, p.k, p.w_stride(), e)),
                   "output y overlaps weights w (" << p.str() << ")");
}

int operand_alignment(const Problem& p, const void* x, const void* w, const void* y) {
  const auto e = static_cast<uint64_t>(dtype_size(p.dtype));
  (void)y;  // outputs are stored element by element: their alignment never limits a kernel
  uint64_t bits = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(w) | (p.x_read_stride() * e) |
                  (p.w_stride() * e) | 16u;
  int a = 1;
  while (a < 16 && (bits & a) == 0) a <<= 1;
  return a;
}

void check_segments(const Problem& p, const OutputSegment* segments, int count) {
  SKINNYGEMM_CHECK(count >= 0 && count <= kMaxOutputSegments && (count == 0 || segments != nullptr),
                   count << " output segments; expected 0.." << kMaxOutputSegments);
  for (int s = 0; s < count; ++s)
    SKINNYGEMM_CHECK(segments[s].begin >= 0 && segments[s].rows >= 0 && segments[s].begin + segments[s].rows <= p.n &&
                         (segments[s].rows == 0 || segments[s].y != nullptr) && segments[s].ldy >= segments[s].rows,
                     "output segment " << s << " (rows [" << segments[s].begin << ", "
                                       << segments[s].begin + segments[s].rows << "), ldy " << segments[s].ldy
                                       << ") does not fit the N=" << p.n << " output rows or has no destination");
  for (int s = 0; s < count; ++s) SKINNYGEMM_CHECK_ALIGNED(segments[s].y, p.dtype, "y of output segment " << s, p.str());
}

bool element_aligned(const void* ptr, DType dtype) { return reinterpret_cast<uintptr_t>(ptr) % dtype_size(dtype) == 0; }

}  // namespace skinnygemm
