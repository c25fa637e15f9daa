// Running a FusedProjection: the ladder (fused kernel -> fused GEMM -> separate) per range of segments,
// the copies out of the scratch output, the contiguous-output mode, the side-stream split, and the log.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <iostream>
#include <sstream>

#include "kernels/family.h"
#include "runtime/backends.h"
#include "runtime/projection_impl.h"
#include "skinnygemm/select.h"

namespace skinnygemm {

namespace {

// The fused-kernel rung: the merged problem through selection (a forced config, the table, the heuristic); when
// the pick is a skinny kernel, one launch writes every segment's rows to its destination. When selection picks
// cuBLASLt (it cannot write per-segment outputs), nothing runs and *why says so.
std::optional<Choice> kernel_into_segments(const Problem& merged, const void* x, const void* w,
                                           const std::vector<OutputSegment>& outs, const Options& g,
                                           std::string* why) {
  const DeviceInfo dev = device_info(Backend::Cuda);
  const int alignment = operand_alignment(merged, x, w, nullptr);
  Choice c;
  if (!g.config.empty()) {
    c.config = Config::parse(g.config);
    std::string why_not;
    SKINNYGEMM_CHECK(supports(c.config, merged, dev, alignment, &why_not),
                     "forced config " << g.config << " cannot run " << merged.str() << ": " << why_not);
    c.source = Source::Forced;
    c.reason = "forced by Options::config";
  } else {
    c = select(merged, dev, g.table ? g.table : default_table(dev), alignment);
  }
  const FamilyDescriptor& f = family(c.config.family);
  if (!f.device || !f.device->writes_segments) {
    *why = "selection picked " + c.config.name() + " for the merged " + merged.str() +
           " (" + source_name(c.source) + "), which cannot write per-segment outputs";
    return std::nullopt;
  }
  cuda::gemm_segments(merged, x, w, outs.data(), static_cast<int>(outs.size()), c.config, g.stream);
  return c;
}

bool logging_enabled() {
  const char* v = std::getenv("SKINNYGEMM_LOG");
  return v && *v && std::string(v) != "0";
}

}  // namespace

using projection_detail::block;
using projection_detail::overlap;

bool FusedProjection::Impl::outputs_adjacent(std::size_t b, std::size_t end) const {
  if (!has_dest) return false;
  for (std::size_t i = b; i < end; ++i) {
    if (offset[i + 1] - offset[i] != segs[i].n) return false;  // padding columns would land in the next segment
    if (i > b && (segs[i].ldy != segs[b].ldy || dest(i) != dest(i - 1) + segs[i - 1].n * e)) return false;
  }
  return true;
}

std::vector<RungStatus> FusedProjection::Impl::ladder(std::size_t b, std::size_t end, int64_t m, Mode mode) const {
  std::ostringstream fused;
  bool fusable = end - b >= 2;
  fused << "one gemm of N=" << offset[end] - offset[b] << " over "
        << (zero_copy ? "the segments' own adjacent rows (zero-copy)" : "the packed copy of the weights");
  if (!fusable) {
    fused.str("one segment: nothing to fuse");
  } else if (mode == Mode::Contiguous) {
    fused << ", into the caller's contiguous output (views, no copies)";
  } else if (outputs_adjacent(b, end)) {
    fused << ", written in place: the destinations are adjacent columns of one output";
  } else if (m > max_m) {  // the scratch output has max_m rows; separate calls write to the destinations
    fusable = false;
    fused.str("");
    fused << "M=" << m << " exceeds the scratch output's max_m=" << max_m << " rows";
  } else {
    fused << ", into the scratch output, then " << end - b << " strided copies to the destinations";
  }
  // The fused kernel matters where the fused GEMM would need its scratch output and the copies after it.
  std::string kernel_why;
  bool kernel = false;
  if (backend != Backend::Cuda) {
    kernel_why = "the CPU backend has no launches to save: its fused GEMM writes through the scratch output";
  } else if (end - b < 2) {
    kernel_why = "one segment: nothing to fuse";
  } else if (mode == Mode::Contiguous || outputs_adjacent(b, end)) {
    kernel_why = "the output is one block already: the fused GEMM writes it in place";
  } else if (end - b > static_cast<std::size_t>(kMaxOutputSegments)) {
    kernel_why = std::to_string(end - b) + " segments; the kernels write at most " +
                 std::to_string(kMaxOutputSegments);
  } else if (m > 64) {
    kernel_why = "M=" + std::to_string(m) + " exceeds the skinny kernels' 64 tokens";
  } else {
    kernel = true;
    kernel_why = "one launch of N=" + std::to_string(offset[end] - offset[b]) +
                 " whose epilogue writes each segment's rows to its destination (if selection picks a skinny "
                 "kernel for the merged problem; else the fused GEMM)";
  }
  return {{Rung::FusedKernel, kernel, kernel_why},
          {Rung::FusedGemm, fusable, fused.str()},
          {Rung::Separate, true, "one gemm per segment (" + std::to_string(end - b) + ")"}};
}

Rung FusedProjection::Impl::choose(std::size_t b, std::size_t end, int64_t m, Mode mode, std::optional<Rung> forced,
                                   std::string* why) const {
  std::ostringstream os;
  for (const RungStatus& s : ladder(b, end, m, mode)) {
    if (forced && s.rung != *forced) continue;
    if (!s.available) {
      SKINNYGEMM_CHECK(!forced, "rung '" << rung_name(s.rung) << "' was forced for m=" << m << " but cannot run: "
                                         << s.reason);
      os << rung_name(s.rung) << " unavailable: " << s.reason << "; ";
      continue;
    }
    os << rung_name(s.rung) << (forced ? " (forced): " : ": ") << s.reason;
    *why = os.str();
    return s.rung;
  }
  SKINNYGEMM_FAIL("no rung of the ladder can run m=" << m);  // unreachable: separate always can
}

void FusedProjection::Impl::check_run(const void* x, int64_t ldx, int64_t m, bool dest_mode) const {
  SKINNYGEMM_CHECK(m >= 0, "M=" << m << " must be >= 0");
  SKINNYGEMM_CHECK(ldx >= k, "ldx=" << ldx << " is smaller than a row of x (K=" << k << ")");
  if (!dest_mode) return;
  SKINNYGEMM_CHECK(has_dest, "the segments have no destinations (y is null): use run_contiguous");
  // The copies out of the scratch output are not validated by gemm, so check what they write against x here.
  for (std::size_t i = 0; m > 0 && i < segs.size(); ++i)
    SKINNYGEMM_CHECK(!overlap(block(x, m, k, ldx, e), block(segs[i].y, m, segs[i].n, segs[i].ldy, e)),
                     label(i) << ": its output overlaps the input x (m=" << m << ", ldx=" << ldx << ")");
}

Rung FusedProjection::Impl::run_range(std::size_t b, std::size_t end, const void* x, int64_t ldx, int64_t m,
                                      const RunOptions& o, Mode mode, char* y0, int64_t ldy0, void* stream,
                                      std::optional<Rung> forced, RunResult* out) {
  std::string why;
  const Rung rung = choose(b, end, m, mode, forced, &why);
  out->reason += why;
  if (m == 0) return rung;
  SKINNYGEMM_CHECK(o.gemm.backend == Backend::Auto || o.gemm.backend == backend,
                   "options ask for the " << backend_name(o.gemm.backend) << " backend but the projection was built "
                                          << "for " << backend_name(backend) << " (its memory lives there)");
  Options g = o.gemm;
  g.backend = backend;
  g.stream = stream;
  const bool contiguous = mode == Mode::Contiguous;
  auto run_separate = [&] {
    for (std::size_t i = b; i < end; ++i) {
      const Problem p{m, segs[i].n, k, dtype, ldx, ldw, contiguous ? ldy0 : segs[i].ldy};
      out->choices.push_back(gemm(p, x, w + offset[i] * ldw * e, contiguous ? y0 + offset[i] * e : dest(i), g));
    }
  };
  if (rung == Rung::Separate) {
    run_separate();
    return rung;
  }
  if (rung == Rung::FusedKernel) {
    std::vector<OutputSegment> outs;
    for (std::size_t i = b; i < end; ++i) outs.push_back({offset[i] - offset[b], segs[i].n, dest(i), segs[i].ldy});
    const Problem merged{m, offset[end] - offset[b], k, dtype, ldx, ldw, 0};
    std::string skipped;
    if (auto c = kernel_into_segments(merged, x, w + offset[b] * ldw * e, outs, g, &skipped)) {
      out->choices.push_back(*c);
      return rung;
    }
    SKINNYGEMM_CHECK(!forced, "rung 'fused kernel' was forced for m=" << m << " but " << skipped);
    if (!contiguous && !outputs_adjacent(b, end) && m > max_m) {  // the scratch output has max_m rows
      out->reason += "; fused kernel skipped: " + skipped + ", and M=" + std::to_string(m) +
                     " exceeds the scratch output's max_m=" + std::to_string(max_m) + ", so separate";
      run_separate();
      return Rung::Separate;
    }
    out->reason += "; fused kernel skipped: " + skipped + ", so the fused GEMM";
  }
  // Fused GEMM: in place when the output is the caller's (contiguous or adjacent), else into the scratch.
  char* y = contiguous ? y0 + offset[b] * e : outputs_adjacent(b, end) ? dest(b) : nullptr;
  const int64_t ldy = contiguous ? ldy0 : y ? segs[b].ldy : total();
  const Problem p{m, offset[end] - offset[b], k, dtype, ldx, ldw, ldy};
  out->choices.push_back(gemm(p, x, w + offset[b] * ldw * e, y ? y : scratch + offset[b] * e, g));
  if (y) return Rung::FusedGemm;
  for (std::size_t i = b; i < end; ++i) {  // scratch -> each destination; padding columns are dropped
    const char* src = scratch + offset[i] * e;
    if (backend == Backend::Cuda) {
      cuda::copy_rows(dest(i), segs[i].ldy * e, src, total() * e, segs[i].n * e, m, stream);
    } else {
      for (int64_t t = 0; t < m; ++t) std::memcpy(dest(i) + t * segs[i].ldy * e, src + t * total() * e, segs[i].n * e);
    }
  }
  return Rung::FusedGemm;
}

void FusedProjection::Impl::log_once(const char* what, int64_t m, const RunResult& r, const std::string& name) {
  if (!logging_enabled()) return;
  std::lock_guard<std::mutex> lock(log_mutex);
  if (logged.insert(std::string(what) + "/" + std::to_string(m) + "/" + rung_name(r.rung) + "/" + r.reason).second)
    std::cerr << "skinnygemm: projection " << name << " m=" << m << " [" << backend_name(backend) << ", " << what
              << "]: " << rung_name(r.rung) << " <- " << r.reason << "\n";
}

RunResult FusedProjection::run(const void* x, int64_t ldx, int64_t m, const RunOptions& options) {
  Impl& s = *impl_;
  ldx = ldx ? ldx : s.k;
  s.check_run(x, ldx, m, true);
  RunResult r;
  r.rung = s.run_range(0, s.segs.size(), x, ldx, m, options, Impl::Mode::Destinations, nullptr, 0,
                       options.gemm.stream, options.rung, &r);
  s.log_once("run", m, r, name());
  return r;
}

RunResult FusedProjection::run_contiguous(const void* x, int64_t ldx, int64_t m, void* y, int64_t ldy,
                                          const RunOptions& options) {
  Impl& s = *impl_;
  ldx = ldx ? ldx : s.k;
  ldy = ldy ? ldy : s.total();
  s.check_run(x, ldx, m, false);
  SKINNYGEMM_CHECK(ldy >= s.total(), "ldy=" << ldy << " is smaller than the contiguous output's " << s.total()
                                            << " columns (total_n, padding included)");
  RunResult r;
  r.rung = s.run_range(0, s.segs.size(), x, ldx, m, options, Impl::Mode::Contiguous, static_cast<char*>(y), ldy,
                       options.gemm.stream, options.rung, &r);
  s.log_once("contiguous", m, r, name());
  return r;
}

RunResult FusedProjection::run_split(const void* x, int64_t ldx, int64_t m, void* main_stream, void* side_stream,
                                     const std::vector<int>& side_segments, const RunOptions& options) {
  // The deferred split (projection_deferred.cpp) and its join right away: main_stream then waits for the side
  // work, so what follows on main (and a capture's end) sees it all.
  RunResult r = run_split_deferred(x, ldx, m, main_stream, side_stream, side_segments, options);
  join_side(side_stream, main_stream);
  return r;
}

}  // namespace skinnygemm
