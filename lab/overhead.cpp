#include "lab/overhead.h"

#include <cstdint>
#include <vector>

#include "lab/timing.h"
#include "runtime/backends.h"
#include "skinnygemm/plan.h"
#include "skinnygemm/projection.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm::tune {

OverheadRow overhead_row(const std::string& path, const std::string& problem, const SampleSummary& total,
                         const SampleSummary& launch, double target_us) {
  OverheadRow r;
  r.path = path;
  r.problem = problem;
  r.total_us = total.median;
  r.launch_us = launch.median;
  r.host_us = total.median - launch.median;
  r.best_host_us = total.min - launch.min;
  r.spread = total.spread;
  r.target_us = target_us;
  return r;
}

std::vector<OverheadRow> measure_host_overhead(const OverheadOptions& o) {
  std::vector<OverheadRow> rows;
  Options cpu;
  cpu.backend = Backend::Cpu;

  // gemm() and a plan on K = 0: the full per-call path (validation, the plan cache or the plan, the CPU backend's
  // call), whose launch writes 8 zeros.
  const Problem zeros{1, 8, 0, DType::BF16};
  std::vector<uint16_t> x(64, 0x3f80), w(64 * 8, 0x3f80), y(64, 0);
  const Config r4 = Config::parse("cpu_r4");
  const SampleSummary launch = time_host_calls(o.samples, o.calls, [&] { cpu::gemm(zeros, x.data(), w.data(), y.data(), r4); });
  gemm(zeros, x.data(), w.data(), y.data(), cpu);  // the miss: makes and caches the plan
  const SampleSummary hit =
      time_host_calls(o.samples, o.calls, [&] { gemm(zeros, x.data(), w.data(), y.data(), cpu); });
  rows.push_back(overhead_row("gemm_cache_hit", zeros.str(), hit, launch, 0.2));

  const Plan plan(zeros, cpu);
  const SampleSummary run =
      time_host_calls(o.samples, o.calls, [&] { plan.run(x.data(), w.data(), y.data()); });
  rows.push_back(overhead_row("plan_run", zeros.str(), run, launch, 0.1));

  // validate() of the operands alone, on a problem with K > 0 (the K = 0 paths above stop before x and w): every gemm()
  // and Plan::run pays it. Until session 43 it built Problem::str() for every alignment check whether or not it failed
  // (three a call here: 0.93-1.55 us best; one on the K = 0 paths above, which made them 0.31-0.60 against their
  // 0.1-0.2 targets); since, 0.02-0.04 (2 cores, two runs each of `overhead --samples 21 --calls 100000`).
  const Problem small{1, 8, 8, DType::BF16};
  const SampleSummary validated =
      time_host_calls(o.samples, o.calls, [&] { validate(small, x.data(), w.data(), y.data()); });
  rows.push_back(overhead_row("validate_operands", small.str(), validated, SampleSummary{}, 0.05));

  // select() alone on a real shape (the cache hit the issue measured at 0.70 us with a string key).
  const Problem real{1, 1536, 7168, DType::BF16};
  const DeviceInfo device = cpu_device_info();
  const Table* table = default_table(device);
  select(real, device, table, 16);
  const SampleSummary selected = time_host_calls(o.samples, o.calls, [&] { select(real, device, table, 16); });
  rows.push_back(overhead_row("select_cache_hit", real.str(), selected, SampleSummary{}, 0));

  // A fused projection of two 8-row segments (K = 8) into adjacent columns of one output: its rung is the fused
  // GEMM in place, one backend call on the merged 16-row problem, which is timed alone as the launch.
  const int64_t k = 8;
  std::vector<uint16_t> fw(16 * k, 0x3f80), fy(16, 0);
  Segment a{fw.data(), 8, 0, fy.data(), 16, 1, "a", k, DType::BF16};
  Segment b{fw.data() + 8 * k, 8, 0, fy.data() + 8, 16, 1, "b", k, DType::BF16};
  FusedProjection fused({a, b}, Backend::Cpu, 1);
  RunOptions ro;
  ro.gemm.backend = Backend::Cpu;
  fused.run(x.data(), k, 1, ro);  // records the launches
  const Problem merged{1, 16, k, DType::BF16, k, k, 16};
  const Config merged_config = fused.run(x.data(), k, 1, ro).choices[0].config;
  const SampleSummary fused_launch = time_host_calls(
      o.samples, o.calls, [&] { cpu::gemm(merged, x.data(), fw.data(), fy.data(), merged_config); });
  const SampleSummary fused_run = time_host_calls(o.samples, o.calls, [&] { fused.run(x.data(), k, 1, ro); });
  rows.push_back(overhead_row("fused_run", merged.str(), fused_run, fused_launch, 0.3));
  return rows;
}

}  // namespace skinnygemm::tune
