// FusedProjection::run_split_deferred and join_side: the side-stream mode with the join left to the caller, so
// that the side segments overlap more than the main segments' GEMM (the MLA gate g beside qkv_a and the
// attention, vLLM #54015; docs/mla.md). run_split (projection_run.cpp) is this plus join_side right away. Capture-safe for the same reasons: the events were created at
// construction and nothing is allocated here.
#include <sstream>

#include "runtime/projection_impl.h"

namespace skinnygemm {

RunResult FusedProjection::run_split_deferred(const void* x, int64_t ldx, int64_t m, void* main_stream,
                                              void* side_stream, const std::vector<int>& side_segments,
                                              const RunOptions& options) {
  Impl& s = *impl_;
  ldx = ldx ? ldx : s.k;
  s.check_run(x, ldx, m, true);
  SKINNYGEMM_CHECK(options.gemm.stream == nullptr || options.gemm.stream == main_stream,
                   "run_split takes its streams as arguments; options.gemm.stream must be null or main_stream");
  std::vector<bool> side(s.segs.size(), false);
  for (int i : side_segments) {
    SKINNYGEMM_CHECK(i >= 0 && static_cast<std::size_t>(i) < s.segs.size(),
                     "side segment index " << i << " is out of range (projection " << name() << " has "
                                           << s.segs.size() << " segments)");
    SKINNYGEMM_CHECK(!side[i], s.label(i) << " is listed twice in side_segments");
    side[i] = true;
  }
  SKINNYGEMM_CHECK(s.backend != Backend::Cuda || (main_stream != nullptr && side_stream != nullptr &&
                                                  main_stream != side_stream),
                   "run_split needs two distinct, non-default CUDA streams (got main "
                       << main_stream << ", side " << side_stream << ")");
  const bool cuda = s.backend == Backend::Cuda && m > 0;
  projection_detail::RunLog r;
  r.rung = Rung::Separate;
  if (s.backend == Backend::Cpu) r.reason = "cpu backend: no streams, every segment ran in order on this thread; ";
  // Fork: the side stream waits for what main_stream has queued so far (whatever produced x).
  if (cuda) cuda::record_and_wait(s.fork_event, main_stream, side_stream);
  try {
    // Side segments first, so that they are queued before the main stream's (longer) chain of work.
    r.reason += "side stream:";
    for (std::size_t i = 0; i < s.segs.size(); ++i) {
      if (!side[i]) continue;
      r.reason += " [" + s.segs[i].name + "] ";
      s.run_range(i, i + 1, x, ldx, m, options, Impl::Mode::Destinations, nullptr, 0, side_stream, std::nullopt, &r);
      r.reason += ";";
    }
    r.reason += " main stream:";
    for (std::size_t b = 0, end = 0; b < s.segs.size(); b = end) {  // each maximal run of main-stream segments
      for (end = b; end < s.segs.size() && side[end] == side[b];) ++end;
      if (side[b]) continue;
      r.reason += " [" + s.segs[b].name + (end - b > 1 ? ".." + s.segs[end - 1].name : "") + "] ";
      // A forced rung applies to runs that can fuse; a lone segment is separate by definition.
      const Rung ran = s.run_range(b, end, x, ldx, m, options, Impl::Mode::Destinations, nullptr, 0, main_stream,
                                   end - b >= 2 ? options.rung : std::nullopt, &r);
      if (ran != Rung::Separate) r.rung = ran;
      r.reason += ";";
    }
  } catch (...) {
    // Join before the error leaves: an unjoined side stream would break the caller's capture.
    try {
      if (cuda) cuda::record_and_wait(s.join_event, side_stream, main_stream);
    } catch (...) {  // the original error says more than a failed join after it
    }
    throw;
  }
  s.log_once("split", m, r, name());
  return r.result();
}

void FusedProjection::join_side(void* side_stream, void* main_stream) {
  Impl& s = *impl_;
  if (s.backend != Backend::Cuda) return;  // the CPU ran everything in order already
  SKINNYGEMM_CHECK(main_stream != nullptr && side_stream != nullptr && main_stream != side_stream,
                   "join_side needs the two distinct, non-default CUDA streams of run_split_deferred (got side "
                       << side_stream << ", main " << main_stream << ")");
  cuda::record_and_wait(s.join_event, side_stream, main_stream);
}

}  // namespace skinnygemm
