// PairPlan: two plans, and one launch where both picks share a tma kernel template (runtime/backends.h's pair seam).
#include "skinnygemm/pair.h"

#include <cstdint>

#include "runtime/backends.h"
#include "runtime/plan_impl.h"

namespace skinnygemm {

namespace {

Plan make_plan(const Problem& p, const Options& options, int alignment, const char* which) {
  try {
    return Plan(p, options, alignment);
  } catch (const Error& e) {
    SKINNYGEMM_FAIL("pair problem " << which << ": " << e.what());
  }
}

// [begin, end) bytes of a rows x cols matrix with a row stride.
struct Bytes {
  uintptr_t begin, end;
};
Bytes bytes_of(const void* ptr, int64_t rows, int64_t cols, int64_t stride, std::size_t elem) {
  const auto b = reinterpret_cast<uintptr_t>(ptr);
  if (!ptr || rows == 0 || cols == 0) return {b, b};
  return {b, b + static_cast<uintptr_t>(((rows - 1) * stride + cols) * static_cast<int64_t>(elem))};
}
bool overlap(Bytes a, Bytes b) { return a.begin < b.end && b.begin < a.end; }

}  // namespace

struct PairPlan::Impl {
  Plan a, b;
  bool one_launch = false;
  std::string reason;
};

PairPlan::PairPlan(const Problem& a, const Problem& b, const Options& options, int alignment) {
  SKINNYGEMM_CHECK(a.dtype == b.dtype, "a pair runs one dtype: problem a is " << dtype_name(a.dtype) << ", b "
                                                                               << dtype_name(b.dtype));
  impl_ = std::make_unique<Impl>(Impl{make_plan(a, options, alignment, "a"), make_plan(b, options, alignment, "b"), false, ""});
  Impl& s = *impl_;
  const Config& ca = s.a.choice().config;
  const Config& cb = s.b.choice().config;
  std::string why_not;
  if (s.a.backend() != Backend::Cuda) {
    s.reason = "two calls: the " + std::string(backend_name(s.a.backend())) + " backend runs them in turn";
  } else if (a.empty() || b.empty() || a.k == 0 || b.k == 0) {
    s.reason = "two calls: an empty problem or K = 0 launches no kernel of its own";
  } else if (!cuda::pair_fits(ca, cb, a.dtype, &why_not)) {
    s.reason = "two launches: " + why_not;
  } else {
    s.one_launch = true;
    s.reason = "one launch: " + ca.name() + " and " + cb.name() + " share a kernel template";
  }
}

PairPlan::~PairPlan() = default;
PairPlan::PairPlan(PairPlan&&) noexcept = default;
PairPlan& PairPlan::operator=(PairPlan&&) noexcept = default;

void PairPlan::run(const void* xa, const void* wa, void* ya, const void* xb, const void* wb, void* yb,
                   void* stream) const {
  const Impl& s = *impl_;
  const Problem& pa = s.a.problem();
  const Problem& pb = s.b.problem();
  const std::size_t e = dtype_size(pa.dtype);
  const Bytes out_a = bytes_of(ya, pa.m, pa.n, pa.y_stride(), e), out_b = bytes_of(yb, pb.m, pb.n, pb.y_stride(), e);
  SKINNYGEMM_CHECK(!overlap(out_a, out_b), "the pair's outputs overlap (" << pa.str() << " and " << pb.str() << ")");
  SKINNYGEMM_CHECK(!overlap(out_a, bytes_of(xb, pb.m, pb.k, pb.x_stride(), e)) &&
                       !overlap(out_a, bytes_of(wb, pb.n, pb.k, pb.w_stride(), e)),
                   "output a overlaps an operand of problem b: the two would depend on each other");
  SKINNYGEMM_CHECK(!overlap(out_b, bytes_of(xa, pa.m, pa.k, pa.x_stride(), e)) &&
                       !overlap(out_b, bytes_of(wa, pa.n, pa.k, pa.w_stride(), e)),
                   "output b overlaps an operand of problem a: the two would depend on each other");
  if (!s.one_launch) {
    s.a.run(xa, wa, ya, stream);
    s.b.run(xb, wb, yb, stream);
    return;
  }
  // What Plan::run checks, for both, then the one launch.
  validate(pa, xa, wa, ya);
  validate(pb, xb, wb, yb);
  SKINNYGEMM_CHECK(operand_alignment(pa, xa, wa, ya) >= s.a.alignment() &&
                       operand_alignment(pb, xb, wb, yb) >= s.b.alignment(),
                   "operands of the pair are less aligned than the plan's " << s.a.alignment() << " bytes ("
                                                                            << pa.str() << ", " << pb.str() << ")");
  cuda::gemm_pair(pa, s.a.choice().config, xa, wa, ya, pb, s.b.choice().config, xb, wb, yb, stream);
}

bool PairPlan::one_launch() const { return impl_->one_launch; }
const std::string& PairPlan::reason() const { return impl_->reason; }
const Plan& PairPlan::a() const { return impl_->a; }
const Plan& PairPlan::b() const { return impl_->b; }

}  // namespace skinnygemm
