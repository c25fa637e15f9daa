// tune::bench_problem: choose (forced or selected), then measure on the backend's device.
#include "lab/bench.h"
#include "lab/result_row.h"
#include "lab/timing.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lab/bench_device.h"
#include "runtime/backends.h"
#include "runtime/half.h"
#include "lab/json_round.h"
#include "runtime/memory.h"
#include "lab/stats.h"
#include "skinnygemm/plan.h"

namespace skinnygemm::tune {

namespace {

Choice choose(const Problem& p, Backend backend, const DeviceInfo& dev, const BenchOptions& o) {
  if (!o.config.empty()) {
    Choice c{forced_config(o.config, p, dev), Source::Forced, "forced by --config"};
    std::string why_not;
    SKINNYGEMM_CHECK(supports(c.config, p, dev, 16, &why_not),
                     "config " << o.config << " cannot run " << p.str() << ": " << why_not);
    return c;
  }
  // What gemm() runs: selection, and cuBLASLt's default where a table entry cannot be prepared on this device.
  Options plan;
  plan.backend = backend;
  plan.table = o.table;
  return Plan(p, plan, 16).choice();
}

// CPU backend: random inputs, check against the FP64 reference, then the median of timed samples.
BenchRow bench_cpu(const Problem& p, const Choice& choice, const BenchOptions& o) {
  BenchRow row;
  check_bench_fits(p, o);
  std::vector<uint16_t> x(static_cast<std::size_t>(std::max<int64_t>(1, (p.m - 1) * p.x_stride() + p.k)));
  std::vector<uint16_t> w(static_cast<std::size_t>(std::max<int64_t>(1, (p.n - 1) * p.w_stride() + p.k)));
  std::vector<uint16_t> y(static_cast<std::size_t>(std::max<int64_t>(1, (p.m - 1) * p.y_stride() + p.n)));
  std::mt19937 rng(static_cast<uint32_t>(p.n * 131 + p.k * 7 + p.m));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : x) v = float_to_half(p.dtype, dist(rng));
  for (auto& v : w) v = float_to_half(p.dtype, dist(rng));
  if (o.check) {
    std::fill(y.begin(), y.end(), 0xFFFF);
    cpu::gemm(p, x.data(), w.data(), y.data(), choice.config);
    std::vector<double> ref(static_cast<std::size_t>(p.m * p.n));
    cpu::reference_f64(p, x.data(), w.data(), ref.data());
    double err = 0, norm = 0;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        const double got = half_to_float(p.dtype, y[i * p.y_stride() + j]), want = ref[i * p.n + j];
        SKINNYGEMM_CHECK(std::isfinite(got), choice.config.name() << " left y[" << i << "," << j << "] unwritten");
        err += (got - want) * (got - want);
        norm += want * want;
      }
    row.rel_error = norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
    row.checked = true;
    const double tolerance = p.dtype == DType::BF16 ? 8e-3 : 2e-3;
    SKINNYGEMM_CHECK(row.rel_error <= tolerance, choice.config.name() << " on " << p.str() << ": relative error "
                                                                      << row.rel_error << " exceeds " << tolerance);
  }
  cpu::gemm(p, x.data(), w.data(), y.data(), choice.config);  // warm-up
  const SampleSummary s =
      time_host_calls(o.samples, o.replays, [&] { cpu::gemm(p, x.data(), w.data(), y.data(), choice.config); });
  row.us = s.median;
  row.spread = s.spread;
  return row;
}

}  // namespace

void check_bench_fits(const Problem& p, const BenchOptions& o) {
  validate(p);  // byte sizes that do not fit in 64 bits are named there
  if (resolve_backend(o.backend) == Backend::Cuda) return cuda::check_bench_memory(p);
  const int64_t e = static_cast<int64_t>(dtype_size(p.dtype));
  int64_t needed = add_bytes(add_bytes(operand_bytes(p.m, p.k, p.x_stride(), e), operand_bytes(p.n, p.k, p.w_stride(), e)),
                             operand_bytes(p.m, p.n, p.y_stride(), e));
  if (o.check) needed = add_bytes(needed, mul_bytes(mul_bytes(p.m, p.n), sizeof(double)));  // the FP64 reference
  check_host_memory(needed, "benchmarking " + p.str() + " (x, w, y" + (o.check ? ", FP64 reference)" : ")"));
}

BenchRow bench_problem(const Problem& p, const BenchOptions& o) {
  validate(p);
  SKINNYGEMM_CHECK(!p.empty() && p.k > 0, "cannot benchmark an empty problem (" << p.str() << ")");
  const Backend backend = resolve_backend(o.backend);
  const DeviceInfo dev = device_info(backend);
  const Choice choice = choose(p, backend, dev, o);
  BenchRow row;
  if (backend == Backend::Cpu) {
    row = bench_cpu(p, choice, o);
  } else {
    cuda::BenchRequest req;
    req.problem = p;
    req.config = choice.config;
    req.samples = std::max(1, o.samples);
    req.replays = std::max(1, o.replays);
    req.baselines = o.baselines;
    req.check = o.check;
    req.lab_ablate = o.lab_ablate;
    const cuda::BenchResult r = cuda::bench(req);
    row.us = r.us;
    row.spread = r.spread;
    row.stream_read_us = r.stream_read_us;
    row.cublaslt_us = r.cublaslt_us;
    row.cublaslt_best_us = r.cublaslt_best_us;
    row.cublaslt_best_config = r.cublaslt_best_config;
    row.checked = r.checked;
    row.rel_error = r.rel_error;
    if (r.stream_read_us > 0) row.efficiency = r.stream_read_us / r.us;
    if (r.cublaslt_us > 0) row.speedup = r.cublaslt_us / r.us;
    if (r.cublaslt_best_us > 0) row.speedup_best = r.cublaslt_best_us / r.us;
    row.cublaslt_torch_us = r.cublaslt_torch_us;
    row.chain_us = r.chain_us;
    if (r.chain_us > 0 && dev.name.find("H200") != std::string::npos) {
      row.chain_reference_us = reference_chain_us(p.total_bytes());
      if (row.chain_us > 1.03 * row.chain_reference_us)
        std::cerr << "WARNING: the chain probe is weak at " << p.total_bytes() / 1e6 << " MB: " << row.chain_us
                  << " us, more than 3% over the reference chain probe's " << row.chain_reference_us << " us\n";
    }
  }
  row.problem = p;
  row.config = choice.config.name();
  row.source = source_name(choice.source);
  row.tbps = static_cast<double>(p.total_bytes()) / (row.us * 1e6);
  return row;
}

double reference_chain_us(int64_t bytes) {
  // The depfill column of the reference dependent-chain probe on one H200 (132 SMs, 2026-12-01): MB, us per step.
  static const double kMb[] = {0.39, 2.1, 4.4, 7.1, 11.0, 12.8, 22.0, 30.3, 52.3, 90.1, 205.5};
  static const double kUs[] = {1.25, 1.31, 1.80, 2.33, 3.26, 3.71, 5.91, 7.19, 11.97, 19.98, 45.75};
  const double mb = static_cast<double>(bytes) / 1e6;
  constexpr int n = static_cast<int>(std::size(kMb));
  if (mb <= kMb[0]) return kUs[0];
  for (int i = 1; i < n; ++i)
    if (mb <= kMb[i]) return kUs[i - 1] + (kUs[i] - kUs[i - 1]) * (mb - kMb[i - 1]) / (kMb[i] - kMb[i - 1]);
  return kUs[n - 1] * mb / kMb[n - 1];  // past the table: the last point's rate
}

BenchMeta bench_meta(Backend backend) {
  const DeviceInfo dev = device_info(backend);
  BenchMeta m;
  m.gpu = dev.name;
  m.sms = dev.sms;
  m.l2_mib = static_cast<double>(dev.l2_bytes) / (1 << 20);
  m.cuda = dev.cuda_version;
  m.cublaslt = dev.cublaslt_version;
  return m;
}

std::string results_json(const BenchMeta& meta, const std::vector<BenchRow>& rows) {
  nlohmann::ordered_json j;
  j["meta"] = {{"gpu", meta.gpu},           {"sms", meta.sms},       {"l2_mib", meta.l2_mib},
               {"cuda", meta.cuda},         {"cublaslt", meta.cublaslt}, {"revision", meta.revision},
               {"command", meta.command},   {"date", meta.date}};
  double best_tbps = meta.stream_read_tbps;
  for (const BenchRow& r : rows)
    if (r.stream_read_us > 0)
      best_tbps = std::max(best_tbps, static_cast<double>(r.problem.total_bytes()) / (r.stream_read_us * 1e6));
  j["stream_read_tbps"] = json_round(best_tbps);
  j["rows"] = nlohmann::ordered_json::array();
  for (const BenchRow& r : rows) {
    nlohmann::ordered_json o = {{"kind", r.kind}};
    if (!r.name.empty()) o["name"] = r.name;
    o["dtype"] = dtype_name(r.problem.dtype);
    o["n"] = r.problem.n;
    o["k"] = r.problem.k;
    o["m"] = r.problem.m;
    o["config"] = r.config;
    o["source"] = r.source;
    o["us"] = json_round(r.us);
    o["spread"] = json_round(r.spread);
    o["tbps"] = json_round(r.tbps);
    add_baselines(o, r.stream_read_us, r.efficiency, r.cublaslt_us, r.cublaslt_best_us, r.cublaslt_best_config,
                  r.speedup);
    if (r.cublaslt_us > 0) o["speedup_best"] = json_round(r.speedup_best);
    if (r.cublaslt_torch_us > 0) o["cublaslt_torch_us"] = json_round(r.cublaslt_torch_us);
    if (r.chain_us > 0) {
      o["chain_us"] = json_round(r.chain_us);
      if (r.chain_reference_us > 0) o["chain_reference_us"] = json_round(r.chain_reference_us);
    }
    if (r.checked) o["rel_error"] = json_round(r.rel_error);
    j["rows"].push_back(o);
  }
  return j.dump(1) + "\n";
}

std::string results_csv(const std::vector<BenchRow>& rows) {
  // Rounded as the JSON is; a column that was not measured (the GPU-only ones on the CPU backend, rel_error
  // without a check) is left empty, as the JSON leaves its key out: 0 would read as a measured zero.
  const auto cell = [](double v, bool measured) {
    std::ostringstream c;
    if (measured) c << json_round(v);
    return c.str();
  };
  std::ostringstream os;
  os << "kind,name,dtype,n,k,m,config,source,us,spread,tbps,stream_read_us,efficiency,cublaslt_us,"
        "cublaslt_best_us,cublaslt_best_config,speedup,speedup_best,cublaslt_torch_us,chain_us,rel_error\n";
  for (const BenchRow& r : rows) {
    const bool read = r.stream_read_us > 0, lt = r.cublaslt_us > 0;
    os << r.kind << ',' << r.name << ',' << dtype_name(r.problem.dtype) << ',' << r.problem.n << ',' << r.problem.k
       << ',' << r.problem.m << ',' << r.config << ',' << r.source << ',' << cell(r.us, true) << ','
       << cell(r.spread, true) << ',' << cell(r.tbps, true) << ',' << cell(r.stream_read_us, read) << ','
       << cell(r.efficiency, read) << ',' << cell(r.cublaslt_us, lt) << ',' << cell(r.cublaslt_best_us, lt) << ','
       << r.cublaslt_best_config << ',' << cell(r.speedup, lt) << ',' << cell(r.speedup_best, lt) << ','
       << cell(r.cublaslt_torch_us, r.cublaslt_torch_us > 0) << ',' << cell(r.chain_us, r.chain_us > 0) << ','
       << cell(r.rel_error, r.checked) << '\n';
  }
  return os.str();
}

}  // namespace skinnygemm::tune
