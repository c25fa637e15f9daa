// run_fused_bench: the protocol of lab/fused_bench.h on any backend's device (fused_bench_device.h).
// Per fusion: one FusedProjection per weight copy (zero-copy views of the copy, or its packed copy when a segment
// is padded), destinations of their own per copy. Per M: check on copy 0, then time each implementation as one
// unit over all copies (GPU: one graph), in one process, so that the ratios compare like with like.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

#include "runtime/half.h"
#include "skinnygemm/projection.h"
#include "skinnygemm/select.h"
#include "lab/fused_bench_device.h"

namespace skinnygemm::tune {

namespace {

// Compares results against the separate calls' outputs (the reference of this benchmark), elementwise with the
// issue's tolerance; keeps the worst ratio and the first failure.
class Agreement {
 public:
  Agreement(const FusedSpec& spec, int64_t m) : spec_(spec), m_(m), want_(spec.segments.size()) {}

  void set_reference(std::size_t segment, std::vector<uint16_t> want) {
    const auto row = static_cast<std::size_t>(n(segment));
    for (std::size_t i = 0; i < want.size(); ++i)
      if (error_.empty() && !std::isfinite(half_to_float(spec_.dtype, want[i])))
        fail("the separate call of " + spec_.segments[segment].name + " left y[" + std::to_string(i / row) + "][" +
             std::to_string(i % row) + "] unwritten or non-finite");
    want_.at(segment) = std::move(want);
  }

  // got: segment's m x n outputs at row stride ld.
  void compare(const std::string& what, std::size_t segment, const uint16_t* got, int64_t ld) {
    const std::vector<uint16_t>& want = want_.at(segment);
    for (int64_t t = 0; t < m_; ++t)
      for (int64_t j = 0; j < n(segment); ++j) {
        const double a = half_to_float(spec_.dtype, got[t * ld + j]);
        const double b = half_to_float(spec_.dtype, want[t * n(segment) + j]);
        const double ratio = std::isfinite(a) ? std::fabs(a - b) / (kFusedAtol + kFusedRtol * std::fabs(b))
                                              : std::numeric_limits<double>::infinity();
        ++checked_;
        worst_ = std::max(worst_, ratio);
        if (ratio > 1 && error_.empty()) {
          std::ostringstream os;
          os << what << " differs from the separate calls: " << spec_.segments[segment].name << " y[" << t << "]["
             << j << "] = " << a << ", separate " << b << " (rtol " << kFusedRtol << ", atol " << kFusedAtol << ")";
          fail(os.str());
        }
      }
  }

  const std::string& error() const { return error_; }
  double worst() const { return worst_; }
  int64_t checked() const { return checked_; }

 private:
  int64_t n(std::size_t segment) const { return spec_.segments[segment].n; }
  void fail(const std::string& why) { error_ = spec_.name + " m=" + std::to_string(m_) + ": " + why; }

  const FusedSpec& spec_;
  int64_t m_;
  std::vector<std::vector<uint16_t>> want_;
  std::string error_;
  double worst_ = 0;
  int64_t checked_ = 0;
};

// A row naming the point (fusion, dtype, merged N, K, M) and nothing measured yet.
FusedRow point_row(const FusedSpec& spec, int64_t m) {
  FusedRow row;
  row.name = spec.name;
  row.dtype = spec.dtype;
  row.n = spec.merged_n();
  row.k = spec.k;
  row.m = m;
  return row;
}

class FusionBench {
 public:
  FusionBench(const FusedSpec& spec, FusedBenchDevice& dev, int64_t max_m, const FusedBenchOptions& o)
      : spec_(spec), dev_(dev), o_(o), e_(static_cast<int64_t>(dtype_size(spec.dtype))) {
    int64_t row = 0;
    for (const FusedSegmentSpec& s : spec.segments) {
      first_row_.push_back(row);
      row += s.n;
    }
    for (int r = 0; r < dev.copies(); ++r) {
      std::vector<Segment> segs;
      for (std::size_t i = 0; i < spec.segments.size(); ++i) {
        const FusedSegmentSpec& s = spec.segments[i];
        segs.push_back(Segment{seg_w(r, i), s.n, spec.k, dev.output(r, i), s.n, s.pad_to, s.name, spec.k, spec.dtype});
      }
      proj_.emplace_back(std::move(segs), dev.backend(), max_m);
    }
    gemm_.backend = dev.backend();
    gemm_.stream = dev.stream();
    gemm_.table = o.table;
  }

  FusedRow point(int64_t m) {
    FusedRow row = point_row(spec_, m);
    m_ = m;
    const bool gpu_baselines = o_.baselines && dev_.backend() == Backend::Cuda;
    check(&row, gpu_baselines);
    if (!row.error.empty()) return row;
    time_ours(&row);
    if (gpu_baselines) time_baselines(&row);
    return row;
  }

 private:
  // run(), the separate calls together and each alone, run_contiguous(): one graph each.
  void time_ours(FusedRow* row) {
    const FusedTiming fused = timed([&](int r) { proj_[r].run(dev_.x(), spec_.k, m_, run_options()); });
    row->us = fused.median_us;
    row->spread = fused.spread;
    row->tbps = static_cast<double>(merged_problem().total_bytes()) / (row->us * 1e6);
    const FusedTiming separate = timed([&](int r) { run_separate(r); });
    row->separate_us = separate.median_us;
    row->separate_spread = separate.spread;
    for (std::size_t i = 0; i < spec_.segments.size(); ++i) {
      const FusedTiming alone =
          timed([&](int r) { gemm(segment_problem(i), dev_.x(), seg_w(r, i), dev_.output(r, i), gemm_); });
      row->segments[i].us = alone.median_us;
      row->segments[i].spread = alone.spread;
      row->segments[i].l2_warm =
          dev_.l2_bytes() > 0 && segment_problem(i).weight_bytes() * dev_.copies() < 4 * dev_.l2_bytes();
    }
    row->contiguous_us = timed([&](int r) {
      proj_[r].run_contiguous(dev_.x(), spec_.k, m_, dev_.merged_output(r), row->n, run_options());
    }).median_us;
    if (const std::optional<RunOptions> ro = kernel_options(*row); ro && !row->kernel_config.empty())
      row->kernel_us = timed([&](int r) { proj_[r].run(dev_.x(), spec_.k, m_, *ro); }).median_us;
  }

  // cuBLASLt's default and best of its heuristics over the merged weights, and the merged bytes' read limit.
  void time_baselines(FusedRow* row) {
    const Problem merged = merged_problem();
    row->cublaslt_us = time_cublaslt("cublaslt");
    row->cublaslt_best_us = row->cublaslt_us;
    row->cublaslt_best_config = "cublaslt";
    const int algos = dev_.cublaslt_algos(merged, dev_.x(), proj_[0].weights(), dev_.merged_output(0));
    for (int a = 0; a < algos; ++a) {
      const std::string name = "cublaslt_a" + std::to_string(a);
      const double us = time_cublaslt(name);
      if (us < row->cublaslt_best_us) {
        row->cublaslt_best_us = us;
        row->cublaslt_best_config = name;
      }
    }
    row->stream_read_us = dev_.stream_read_us(merged.total_bytes(), o_.samples, o_.replays);
    if (row->stream_read_us > 0) row->efficiency = row->stream_read_us / row->us;
  }

  const void* seg_w(int copy, std::size_t i) const {
    return static_cast<const char*>(dev_.weights(copy)) + first_row_[i] * spec_.k * e_;
  }
  Problem segment_problem(std::size_t i) const {
    const int64_t n = spec_.segments[i].n;
    return Problem{m_, n, spec_.k, spec_.dtype, spec_.k, spec_.k, n};
  }
  // The merged weights as the projections hold them (padding rows included).
  Problem merged_problem() const {
    const int64_t n = spec_.merged_n();
    return Problem{m_, n, spec_.k, spec_.dtype, spec_.k, proj_[0].weight_stride(), n};
  }
  RunOptions run_options() const {
    RunOptions ro;
    ro.gemm = gemm_;
    return ro;
  }
  // Rung 1 forced with the heuristic's kernel for the merged problem, where run() took another rung (selection
  // picked cuBLASLt for the merged shape) but the kernel rung can run: what the fused kernel itself costs.
  std::optional<RunOptions> kernel_options(const FusedRow& row) const {
    if (dev_.backend() != Backend::Cuda || row.rung == rung_name(Rung::FusedKernel)) return std::nullopt;
    const DeviceInfo info = device_info(Backend::Cuda);
    if (!proj_[0].eligibility(info, m_).ladder[0].available) return std::nullopt;
    Choice kernel;
    if (!heuristic_kernel(merged_problem(), info, 16, &kernel)) return std::nullopt;
    RunOptions ro = run_options();
    ro.rung = Rung::FusedKernel;
    ro.gemm.config = kernel.config.name();
    return ro;
  }
  std::vector<Choice> run_separate(int copy) {
    std::vector<Choice> choices;
    for (std::size_t i = 0; i < spec_.segments.size(); ++i)
      choices.push_back(gemm(segment_problem(i), dev_.x(), seg_w(copy, i), dev_.output(copy, i), gemm_));
    return choices;
  }
  void cublaslt(int copy, const std::string& config) {
    Options lt = gemm_;
    lt.config = config;
    gemm(merged_problem(), dev_.x(), proj_[copy].weights(), dev_.merged_output(copy), lt);
  }
  // One eager pass of copy 0 first: selection, cuBLASLt plans and workspaces are set up outside any capture.
  FusedTiming timed(const std::function<void(int)>& launch_copy) {
    launch_copy(0);
    return dev_.time(launch_copy, o_.samples, o_.replays);
  }
  double time_cublaslt(const std::string& config) {
    return timed([&](int r) { cublaslt(r, config); }).median_us;
  }

  // Copy 0, every output poisoned before each run: the separate calls are the reference; run(), run_contiguous()
  // and (GPU) cuBLASLt over the merged weights must agree with them.
  void check(FusedRow* row, bool with_cublaslt) {
    Agreement agree(spec_, m_);
    dev_.poison();
    const std::vector<Choice> separate = run_separate(0);
    for (std::size_t i = 0; i < spec_.segments.size(); ++i) {
      const FusedSegmentSpec& s = spec_.segments[i];
      agree.set_reference(i, dev_.read(dev_.output(0, i), m_, s.n, s.n));
      const Choice& c = separate[i];
      row->segments.push_back({s.name, s.n, s.pad_to, 0, 0, c.config.name(), source_name(c.source)});
    }
    dev_.poison();
    const RunResult r = proj_[0].run(dev_.x(), spec_.k, m_, run_options());
    row->rung = rung_name(r.rung);
    row->reason = r.reason;
    for (const Choice& c : r.choices) row->configs.push_back(c.config.name());
    for (std::size_t i = 0; i < spec_.segments.size(); ++i) {
      const std::vector<uint16_t> got = dev_.read(dev_.output(0, i), m_, spec_.segments[i].n, spec_.segments[i].n);
      agree.compare("run()", i, got.data(), spec_.segments[i].n);
    }
    auto compare_merged = [&](const std::string& what) {
      const std::vector<uint16_t> got = dev_.read(dev_.merged_output(0), m_, row->n, row->n);
      const std::vector<SegmentView> views = proj_[0].views();
      for (std::size_t i = 0; i < views.size(); ++i) agree.compare(what, i, got.data() + views[i].offset, row->n);
    };
    dev_.poison();
    proj_[0].run_contiguous(dev_.x(), spec_.k, m_, dev_.merged_output(0), row->n, run_options());
    compare_merged("run_contiguous()");
    if (const std::optional<RunOptions> ro = kernel_options(*row)) {
      dev_.poison();
      proj_[0].run(dev_.x(), spec_.k, m_, *ro);
      row->kernel_config = ro->gemm.config;
      for (std::size_t i = 0; i < spec_.segments.size(); ++i) {
        const std::vector<uint16_t> got = dev_.read(dev_.output(0, i), m_, spec_.segments[i].n, spec_.segments[i].n);
        agree.compare("run() with the fused kernel forced (" + row->kernel_config + ")", i, got.data(),
                      spec_.segments[i].n);
      }
    }
    if (with_cublaslt) {
      dev_.poison();
      cublaslt(0, "cublaslt");
      compare_merged("cuBLASLt over the merged weights");
    }
    row->check_ratio = agree.worst();
    row->checked = agree.checked();
    row->error = agree.error();
  }

  const FusedSpec& spec_;
  FusedBenchDevice& dev_;
  const FusedBenchOptions& o_;
  int64_t e_;
  int64_t m_ = 0;
  std::vector<int64_t> first_row_;  // each segment's first row in the caller's weights
  std::vector<FusedProjection> proj_;  // one per weight copy
  Options gemm_;
};

void validate(const FusedBenchOptions& o) {
  SKINNYGEMM_CHECK(o.samples >= 1, "samples=" << o.samples << " must be >= 1");
  SKINNYGEMM_CHECK(o.replays >= 1, "replays=" << o.replays << " must be >= 1");
  SKINNYGEMM_CHECK(!o.ms.empty(), "no M to benchmark; expected at least one M in 1..64");
  for (const int64_t m : o.ms)
    SKINNYGEMM_CHECK(m >= 1 && m <= 64, "M=" << m << " is outside 1..64 (the decode range of the skinny kernels "
                                              "and of the projection's scratch output)");
}

int64_t max_m(const FusedBenchOptions& o) { return *std::max_element(o.ms.begin(), o.ms.end()); }

// A row for a point that could not be measured: error says why; nothing was timed.
FusedRow failed_row(const FusedSpec& spec, int64_t m, const std::string& why) {
  FusedRow row = point_row(spec, m);
  row.error = why;
  return row;
}

}  // namespace

std::vector<FusedRow> bench_fusion(const FusedSpec& spec, FusedBenchDevice& device, const FusedBenchOptions& o) {
  validate(o);
  FusionBench bench(spec, device, max_m(o), o);
  std::vector<FusedRow> rows;
  for (const int64_t m : o.ms) {
    if (o.progress)
      o.progress(spec.name + " " + std::to_string(spec.merged_n()) + "x" + std::to_string(spec.k) + " m=" +
                 std::to_string(m) + " (" + std::to_string(device.copies()) +
                 (device.copies() == 1 ? " weight copy)" : " weight copies)"));
    try {
      rows.push_back(bench.point(m));
    } catch (const Error& e) {  // reported like a failed check; the other points are still measured
      rows.push_back(failed_row(spec, m, e.what()));
    }
    if (o.on_row) o.on_row(rows.back());
  }
  return rows;
}

std::vector<FusedRow> run_fused_bench(const std::vector<FusedSpec>& fusions, const FusedBenchOptions& o) {
  SKINNYGEMM_CHECK(!fusions.empty(), "no fusions to benchmark; expected at least one");
  validate(o);
  const Backend backend = resolve_backend(o.backend);
  std::size_t index = 0;
  const std::size_t total = fusions.size() * o.ms.size();
  FusedBenchOptions counted = o;
  counted.progress = [&](const std::string& line) {
    if (o.progress) o.progress("[" + std::to_string(++index) + "/" + std::to_string(total) + "] " + line);
  };
  std::vector<FusedRow> rows;
  for (const FusedSpec& spec : fusions) {
    std::vector<FusedRow> mine;
    try {
      const std::unique_ptr<FusedBenchDevice> device =
          backend == Backend::Cuda ? make_cuda_fused_device(spec, max_m(o)) : make_cpu_fused_device(spec, max_m(o));
      mine = bench_fusion(spec, *device, counted);
    } catch (const Error& e) {  // the device or a projection could not be made: every M of this fusion fails
      for (const int64_t m : o.ms) {
        mine.push_back(failed_row(spec, m, e.what()));
        if (o.on_row) o.on_row(mine.back());
      }
    }
    for (FusedRow& row : mine) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace skinnygemm::tune
