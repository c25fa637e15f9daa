// Running a FusedProjection: the ladder (fused kernel -> fused GEMM -> separate) per range of segments,
// the copies out of the scratch output, the contiguous-output mode, the side-stream split, and the log.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <iostream>
#include <sstream>

#include "kernels/family.h"
#include "runtime/backends.h"
#include "runtime/memory.h"
#include "runtime/plan_impl.h"
#include "runtime/projection_impl.h"
#include "runtime/warn_once.h"
#include "skinnygemm/select.h"

namespace skinnygemm {

namespace {

// The fused-kernel rung: the merged problem through selection (a forced config, the table, the heuristic) into a
// plan whose launch writes every segment's rows to its destination. When selection picks a family that cannot
// write per-segment outputs (cuBLASLt), there is no plan and *why says so.
std::shared_ptr<const Plan> kernel_into_segments(const Problem& merged, const void* x, const void* w,
                                                 const std::vector<OutputSegment>& outs, const Options& g,
                                                 std::string* why) {
  const int alignment = operand_alignment(merged, x, w, nullptr);
  auto plan = std::make_shared<const Plan>(
      PlanAccess::make(merged, g, alignment, outs.data(), static_cast<int>(outs.size())));
  if (PlanAccess::impl(*plan).launch) return plan;
  const Choice& c = plan->choice();
  *why = "selection picked " + c.config.name() + " for the merged " + merged.str() + " (" + source_name(c.source) +
         "), which cannot write per-segment outputs";
  return nullptr;
}


}  // namespace

using projection_detail::block;
using projection_detail::overlap;
using projection_detail::Recording;
using projection_detail::RunLog;

bool FusedProjection::Impl::outputs_adjacent(std::size_t b, std::size_t end) const {
  if (!has_dest) return false;
  // One gemm writes the range as one output: its rows (ldy) must hold the whole merged N.
  if (segs[b].ldy < offset[end] - offset[b]) return false;
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

void FusedProjection::Impl::decide_rungs() {
  for (Mode mode : {Mode::Destinations, Mode::Contiguous}) {
    auto& table = decided[static_cast<int>(mode)];
    table.resize(static_cast<std::size_t>(max_m) + 1);
    for (int64_t m = 0; m <= max_m; ++m)
      table[m].first = choose_now(0, segs.size(), m, mode, std::nullopt, &table[m].second);
  }
  recorded.resize(static_cast<std::size_t>(max_m) + 1);
}

Rung FusedProjection::Impl::choose(std::size_t b, std::size_t end, int64_t m, Mode mode, std::optional<Rung> forced,
                                   std::string* why) const {
  const auto& table = decided[static_cast<int>(mode)];
  if (!forced && b == 0 && end == segs.size() && m >= 0 && m < static_cast<int64_t>(table.size())) {
    *why = table[m].second;
    return table[m].first;
  }
  return choose_now(b, end, m, mode, forced, why);
}

Rung FusedProjection::Impl::choose_now(std::size_t b, std::size_t end, int64_t m, Mode mode,
                                       std::optional<Rung> forced, std::string* why) const {
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
  // Sizes first: the overlap tests below compute byte offsets of m rows.
  SKINNYGEMM_CHECK(operand_bytes(m, k, ldx, static_cast<int64_t>(e)) >= 0,
                   "x of m=" << m << " rows (ldx " << ldx << ") needs more bytes than a 64-bit size holds");
  for (std::size_t i = 0; dest_mode && i < segs.size(); ++i)
    SKINNYGEMM_CHECK(operand_bytes(m, segs[i].n, segs[i].ldy, static_cast<int64_t>(e)) >= 0,
                     label(i) << ": m=" << m << " rows of its output need more bytes than a 64-bit size holds");
  // The replay and the fused-kernel rung skip gemm's validation, so x is checked here.
  SKINNYGEMM_CHECK(m == 0 || x != nullptr, "x is null (m=" << m << ")");
  if (!dest_mode) return;
  SKINNYGEMM_CHECK(has_dest, "the segments have no destinations (y is null): use run_contiguous");
  // The constructor checked that the destinations do not overlap within max_m rows; more rows reach further.
  for (std::size_t i = 0; m > max_m && i < segs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      SKINNYGEMM_CHECK(!overlap(block(segs[i].y, m, segs[i].n, segs[i].ldy, e),
                                block(segs[j].y, m, segs[j].n, segs[j].ldy, e)),
                       label(i) << "'s output overlaps " << label(j) << "'s output within m=" << m
                                << " rows (ldy " << segs[i].ldy << " and " << segs[j].ldy << "; the projection "
                                << "checked max_m=" << max_m << ")");
  // The copies out of the scratch output are not validated by gemm, so check what they write against x here.
  for (std::size_t i = 0; m > 0 && i < segs.size(); ++i)
    SKINNYGEMM_CHECK(!overlap(block(x, m, k, ldx, e), block(segs[i].y, m, segs[i].n, segs[i].ldy, e)),
                     label(i) << ": its output overlaps the input x (m=" << m << ", ldx=" << ldx << ")");
}

Rung FusedProjection::Impl::run_range(std::size_t b, std::size_t end, const void* x, int64_t ldx, int64_t m,
                                      const RunOptions& o, Mode mode, char* y0, int64_t ldy0, void* stream,
                                      std::optional<Rung> forced, RunLog* out, Recording* recording) {
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
  // Every launch goes through these two, which record it when a recording is being made.
  auto call_gemm = [&](const Problem& p, const char* wp, char* yp) {
    if (!recording) return gemm(p, x, wp, yp, g);
    auto plan = std::make_shared<const Plan>(p, g, operand_alignment(p, x, wp, yp));
    plan->run(x, wp, yp, stream);
    recording->launches.push_back({plan, wp, yp});
    return plan->choice();
  };
  auto copy_out = [&](char* dst, int64_t dst_pitch, const char* src, int64_t src_pitch, int64_t row_bytes) {
    Recording::Launch step;
    step.copy_dst = dst;
    step.copy_src = src;
    step.dst_pitch = dst_pitch;
    step.src_pitch = src_pitch;
    step.row_bytes = row_bytes;
    step.rows = m;
    copy_rows(step, stream);
    if (recording) recording->launches.push_back(step);
  };
  auto run_separate = [&] {
    for (std::size_t i = b; i < end; ++i) {
      const Problem p{m, segs[i].n, k, dtype, ldx, ldw, contiguous ? ldy0 : segs[i].ldy};
      out->choices.push_back(call_gemm(p, w + offset[i] * ldw * e, contiguous ? y0 + offset[i] * e : dest(i)));
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
    const char* merged_w = w + offset[b] * ldw * e;
    if (auto plan = kernel_into_segments(merged, x, merged_w, outs, g, &skipped)) {
      PlanAccess::impl(*plan).run_unchecked(x, merged_w, nullptr, stream);
      if (recording) recording->launches.push_back({plan, merged_w, nullptr});
      out->choices.push_back(plan->choice());
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
  out->choices.push_back(call_gemm(p, w + offset[b] * ldw * e, y ? y : scratch + offset[b] * e));
  if (y) return Rung::FusedGemm;
  for (std::size_t i = b; i < end; ++i)  // scratch -> each destination; padding columns are dropped
    copy_out(dest(i), segs[i].ldy * e, scratch + offset[i] * e, total() * e, segs[i].n * e);
  return Rung::FusedGemm;
}

void FusedProjection::Impl::copy_rows(const Recording::Launch& c, void* stream) const {
  if (backend == Backend::Cuda) {
    cuda::copy_rows(c.copy_dst, c.dst_pitch, c.copy_src, c.src_pitch, c.row_bytes, c.rows, stream);
  } else {
    for (int64_t t = 0; t < c.rows; ++t)
      std::memcpy(c.copy_dst + t * c.dst_pitch, c.copy_src + t * c.src_pitch, static_cast<std::size_t>(c.row_bytes));
  }
}

RunResult FusedProjection::Impl::replay(const Recording& recording, const void* x, void* stream) const {
  for (const Recording::Launch& step : recording.launches) {
    if (step.plan) {
      PlanAccess::impl(*step.plan).run_unchecked(x, step.w, step.y, stream);
    } else {
      copy_rows(step, stream);
    }
  }
  return recording.result;
}

bool FusedProjection::Impl::replayable(const void* x, int64_t ldx, int64_t m, const RunOptions& o) const {
  return m >= 0 && m <= max_m && ldx == k && !o.rung && o.gemm.config.empty() && o.gemm.table == nullptr &&
         (o.gemm.backend == Backend::Auto || o.gemm.backend == backend) && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

void FusedProjection::Impl::log_once(const char* what, int64_t m, const RunLog& r, const std::string& name) {
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
  const bool replayable = s.replayable(x, ldx, m, options);
  if (replayable && s.recorded[m]) return s.replay(*s.recorded[m], x, options.gemm.stream);
  auto recording = replayable ? std::make_unique<projection_detail::Recording>() : nullptr;
  RunLog r;
  r.rung = s.run_range(0, s.segs.size(), x, ldx, m, options, Impl::Mode::Destinations, nullptr, 0,
                       options.gemm.stream, options.rung, &r, recording.get());
  s.log_once("run", m, r, name());
  RunResult result = r.result();
  if (recording) {
    recording->result = result;
    s.recorded[m] = std::move(recording);
  }
  return result;
}

RunResult FusedProjection::run_contiguous(const void* x, int64_t ldx, int64_t m, void* y, int64_t ldy,
                                          const RunOptions& options) {
  Impl& s = *impl_;
  ldx = ldx ? ldx : s.k;
  ldy = ldy ? ldy : s.total();
  s.check_run(x, ldx, m, false);
  SKINNYGEMM_CHECK(ldy >= s.total(), "ldy=" << ldy << " is smaller than the contiguous output's " << s.total()
                                            << " columns (total_n, padding included)");
  RunLog r;
  r.rung = s.run_range(0, s.segs.size(), x, ldx, m, options, Impl::Mode::Contiguous, static_cast<char*>(y), ldy,
                       options.gemm.stream, options.rung, &r);
  s.log_once("contiguous", m, r, name());
  return r.result();
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
