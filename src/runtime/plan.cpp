// Plan: the choice (K = 0, forced, or selection) and the prepared launch, made once; run() only launches.
#include "skinnygemm/plan.h"

#include "kernels/family.h"
#include "runtime/backends.h"
#include "runtime/plan_impl.h"
#include "runtime/warn_once.h"

namespace skinnygemm {

namespace {

std::unique_ptr<PreparedLaunch> prepare_launch(const Problem& p, const Config& config, const DeviceInfo& device,
                                               const OutputSegment* segments, int count) {
  const FamilyDescriptor& f = family(config.family);
  SKINNYGEMM_CHECK(f.gpu && f.device, "config " << config.name() << " cannot run on the CUDA backend");
  // A family that cannot write segments leaves launch empty: the fused projection then takes another rung.
  if (count > 0 && !f.device->writes_segments) return nullptr;
  return f.device->prepare(p, config, device, segments, count);
}

}  // namespace

Plan::Impl::Impl(const Problem& p, const Options& options, int align, const OutputSegment* segments, int count)
    : problem(p), backend(resolve_backend(options.backend)), alignment(align), stream(options.stream) {
  validate(p);
  SKINNYGEMM_CHECK(align == 1 || align == 2 || align == 4 || align == 8 || align == 16,
                   "alignment " << align << " must be 1, 2, 4, 8 or 16 bytes");
  const DeviceInfo device = backend == Backend::Cuda ? cuda::device_info() : cpu_device_info();
  // A forced name that is no config is an Error whatever the problem (the empty and K = 0 paths below used to accept
  // any name: a review in session 43).
  if (!options.config.empty() && (p.empty() || p.k == 0)) forced_config(options.config, p, device);
  if (p.empty()) {
    // A config name Config::parse accepts (Config{} would print as "cpu_r0"), the same one K = 0 reports.
    choice = Choice{Config::parse(backend == Backend::Cuda ? "cublaslt" : "cpu_r4"), Source::Fallback,
                    "empty problem (M=0 or N=0): nothing to do"};
    return;
  }
  if (p.k == 0) {  // nothing to read: every backend writes zeros whatever the config
    choice.config = Config::parse(backend == Backend::Cuda ? "cublaslt" : "cpu_r4");
    choice.reason = "K=0: writes zeros";
    return;
  }
  if (!options.config.empty()) {
    choice.config = forced_config(options.config, p, device);
    std::string why_not;
    SKINNYGEMM_CHECK(supports(choice.config, p, device, alignment, &why_not),
                     "forced config " << options.config << " cannot run " << p.str() << " on " << device.signature()
                                      << ": " << why_not);
    choice.source = Source::Forced;
    choice.reason = "forced by Options::config";
  } else {
    const Table* table = options.table ? options.table : default_table(device);
    choice = select(p, device, table, alignment);
  }
  if (backend != Backend::Cuda) return;
  try {
    launch = prepare_launch(p, choice.config, device, segments, count);
  } catch (const Error& e) {
    // A table entry this device cannot prepare (a cuBLASLt algorithm that cublasLtMatmulAlgoCheck rejects here)
    // must not fail the call: cuBLASLt's default, which every entry was measured against, runs instead.
    if (choice.source != Source::Table) throw;
    const std::string entry = choice.config.name();
    warn_once("table entry cannot be prepared|" + entry,
              "table entry " + entry + " cannot run here, cuBLASLt's default runs instead (one warning per entry "
              "config): " + e.what());
    choice = Choice{Config::parse("cublaslt"), Source::Fallback,
                    "fallback: table entry " + entry + " cannot run here: " + e.what()};
    launch = prepare_launch(p, choice.config, device, segments, count);
  }
}

void Plan::Impl::run_unchecked(const void* x, const void* w, void* y, void* stream) const {
  if (problem.empty()) return;
  if (backend == Backend::Cpu) {
    cpu::gemm(problem, x, w, y, choice.config);
  } else if (launch) {
    launch->run(x, w, y, stream);
  } else {
    cuda::gemm(problem, x, w, y, choice.config, stream);  // K = 0: zeros
  }
}

Plan::Plan(const Problem& problem, const Options& options, int alignment)
    : impl_(std::make_unique<Impl>(problem, options, alignment, nullptr, 0)) {}
Plan::~Plan() = default;

Plan PlanAccess::make(const Problem& problem, const Options& options, int alignment, const OutputSegment* segments,
                      int count) {
  return Plan(std::make_unique<Plan::Impl>(problem, options, alignment, segments, count));
}

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

void Plan::run(const void* x, const void* w, void* y) const { run(x, w, y, impl_->stream); }

void Plan::run(const void* x, const void* w, void* y, void* stream) const {
  const Impl& s = *impl_;
  validate(s.problem, x, w, y);
  if (!s.problem.empty() && s.problem.k > 0) {
    const int alignment = operand_alignment(s.problem, x, w, y);
    SKINNYGEMM_CHECK(alignment >= s.alignment, "operands are " << alignment << "-byte aligned; this plan was made for "
                                                               << s.alignment << " (" << s.problem.str() << ")");
  }
  s.run_unchecked(x, w, y, stream);
}

const Problem& Plan::problem() const { return impl_->problem; }
Backend Plan::backend() const { return impl_->backend; }
int Plan::alignment() const { return impl_->alignment; }
const Choice& Plan::choice() const { return impl_->choice; }

}  // namespace skinnygemm
