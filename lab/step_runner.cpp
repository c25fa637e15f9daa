// The executor (a variant's ops through gemm() and FusedProjection) and run_step, the protocol every backend
// shares: check, time the step, time the sinks. The backends' devices live in step_cpu.cpp and lab/cuda/step.cu.
#include "lab/step_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "runtime/half.h"
#include "kernels/tma/tma_family.h"

namespace skinnygemm::tune {

const void* StepMemory::weights(const StepModel& model, const StepSegment& s) const {
  const StepBlock& b = model.blocks.at(static_cast<std::size_t>(s.block));
  return arena + b.offset + s.row * b.k * static_cast<int64_t>(model.elem());
}

char* StepMemory::at(const StepModel& model, const StepSlice& s) const {
  return buffers.at(static_cast<std::size_t>(s.buffer)) + s.col * static_cast<int64_t>(model.elem());
}

StepExecutor::StepExecutor(const StepModel& model, const StepMemory& memory, StepVariant variant, int64_t max_m,
                           StepComm* comm)
    : model_(&model), memory_(memory), variant_(variant), max_m_(max_m), ops_(model.ops(variant)), comm_(comm),
      reduce_(ops_.size(), false) {
  if (comm)
    for (std::size_t i : all_reduce_points(model, ops_)) reduce_[i] = true;
  if (variant == StepVariant::Tma && memory.backend == Backend::Cuda) sms_ = device_info(Backend::Cuda).sms;
  if (const char* lead = std::getenv("SKINNYGEMM_STEP_TMA_LEAD"); lead && *lead) tma_lead_ = std::atoi(lead);
  SKINNYGEMM_CHECK(variant != StepVariant::Tma || memory.backend == Backend::Cuda,
                   "the tma step variant needs the cuda backend (the TMA family runs on the GPU); on the "
                   << backend_name(memory.backend) << " backend run skinny or skinny_fused");
  SKINNYGEMM_CHECK((variant != StepVariant::Cublaslt && variant != StepVariant::CublasltTorch &&
                    variant != StepVariant::CublasltFused) || memory.backend == Backend::Cuda,
                   "the " << variant_name(variant) << " step variant needs the cuda backend (cuBLASLt runs on the GPU); "
                          << "on the " << backend_name(memory.backend) << " backend run skinny or skinny_fused");
  for (const StepOp& op : ops_) {
    fused_.emplace_back();
    gemm_.push_back(op.fused() ? fused_as_one_gemm(model, op) : op.segments[0]);
    if (!op.fused() || variant == StepVariant::CublasltFused) continue;
    std::vector<Segment> segs;
    for (const StepSegment& s : op.segments)
      segs.push_back({memory.weights(model, s), s.n, 0, memory.at(model, s.y), model.buffers[s.y.buffer].width, 1,
                      s.name, s.k, model.dtype});
    fused_.back() = std::make_unique<FusedProjection>(std::move(segs), memory.backend, max_m);
  }
}

StepExecutor::~StepExecutor() = default;
StepExecutor::StepExecutor(StepExecutor&&) noexcept = default;

void StepExecutor::run(std::size_t i, int64_t m, void* stream, const void* weights) {
  const StepOp& op = ops_.at(i);
  SKINNYGEMM_CHECK(m >= 1 && m <= max_m_, "m=" << m << " is outside 1.." << max_m_ << " (the step's max_m)");
  const int64_t ldx = model_->buffers[op.x.buffer].width;
  const char* x = memory_.at(*model_, op.x);
  SKINNYGEMM_CHECK(!weights || !op.fused(), op.name << " is a fusion: its weights are bound at construction, not "
                                                    "replaced per run");
  if (fused_[i]) {
    RunOptions o;
    o.gemm.backend = memory_.backend;
    o.gemm.stream = stream;
    // force_config of the merged shape: the fused kernel's config (the step search of a fused variant).
    if (auto it = overrides_.find({gemm_[i].n, gemm_[i].k}); it != overrides_.end()) o.gemm.config = it->second;
    fused_[i]->run(x, ldx, m, o);
    return;
  }
  const StepSegment& s = gemm_[i];
  Options o;
  o.backend = memory_.backend;
  o.stream = stream;
  const Problem p{m, s.n, s.k, model_->dtype, ldx, s.k, model_->buffers[s.y.buffer].width};
  o.config = forced_config(p);
  gemm(p, x, weights ? weights : memory_.weights(*model_, s), memory_.at(*model_, s.y), o);
}

void StepExecutor::force_config(int64_t n, int64_t k, const std::string& config) {
  if (config.empty()) overrides_.erase({n, k});
  else overrides_[{n, k}] = config;
}

std::string StepExecutor::forced_config(const Problem& p) const {
  if (auto it = overrides_.find({p.n, p.k}); it != overrides_.end()) return it->second;
  if (variant_ == StepVariant::Cublaslt || variant_ == StepVariant::CublasltFused) return "cublaslt";
  if (variant_ == StepVariant::CublasltTorch) return "cublaslt_torch";
  if (variant_ == StepVariant::Tma && memory_.backend == Backend::Cuda && p.m <= 64 && p.k % 8 == 0 && p.ldx % 8 == 0)
    return tma::first_cut_config(p, sms_, tma_lead_).name();
  return "";
}

void StepExecutor::reduce_after(std::size_t i, int64_t m, void* stream) {
  if (!reduce_.at(i)) return;
  const StepSlice& y = ops_[i].segments[0].y;  // whole rows (all_reduce_points checked): [m, width] contiguous
  comm_->all_reduce(memory_.at(*model_, y), m * y.n, model_->dtype, stream);
}

void StepExecutor::run_all(int64_t m, void* stream) {
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    run(i, m, stream);
    reduce_after(i, m, stream);
  }
}

void StepExecutor::run_gemms(int64_t m, void* stream) {
  for (std::size_t i = 0; i < ops_.size(); ++i) run(i, m, stream);
}

void StepExecutor::run_comm(int64_t m, void* stream) {
  for (std::size_t i = 0; i < ops_.size(); ++i) reduce_after(i, m, stream);
}

int StepExecutor::all_reduces() const { return static_cast<int>(std::count(reduce_.begin(), reduce_.end(), true)); }

double time_ops_alone(StepExecutor& ex, StepDevice& dev, const std::vector<std::size_t>& idx, int64_t m, int samples,
                      std::size_t elem) {
  const StepOp& first = ex.ops().at(idx.at(0));
  const int64_t count = static_cast<int64_t>(idx.size());
  const int64_t stride = (first.weight_bytes(elem) + 255) / 256 * 256;
  int64_t reps = 1;
  const char* rotation = nullptr;
  if (!first.fused() && count * first.weight_bytes(elem) < dev.cold_bytes()) {
    reps = (dev.cold_bytes() + count * first.weight_bytes(elem) - 1) / (count * first.weight_bytes(elem));
    rotation = static_cast<const char*>(dev.rotation_weights((reps - 1) * count * stride));
  }
  const auto launch_all = [&] {
    for (int64_t rep = 0; rep < reps; ++rep)
      for (int64_t j = 0; j < count; ++j)
        ex.run(idx[j], m, dev.stream(), rep ? rotation + ((rep - 1) * count + j) * stride : nullptr);
  };
  // Once eagerly first: the rotated copies may select other configs or cuBLASLt plans than the real
  // weights (another pointer alignment), and their first use must not happen inside the capture.
  launch_all();
  return dev.time(launch_all, samples).median_us / static_cast<double>(reps * count);
}

double check_op(StepDevice& dev, const StepModel& model, const StepOp& op, int64_t m, const std::string& what) {
  const double tolerance = model.dtype == DType::BF16 ? 8e-3 : 2e-3;
  double worst = 0;
  for (const StepSegment& s : op.segments) {
    const Problem p{m, s.n, s.k, model.dtype, model.buffers[op.x.buffer].width, s.k, s.n};
    const std::vector<double> want = dev.reference(p, dev.memory().at(model, op.x), dev.memory().weights(model, s));
    const std::vector<uint16_t> got =
        dev.read(dev.memory().at(model, s.y), m, s.n, model.buffers[s.y.buffer].width);
    double err = 0, norm = 0;
    for (int64_t t = 0; t < m; ++t)
      for (int64_t j = 0; j < s.n; ++j) {
        const double g = half_to_float(model.dtype, got[t * s.n + j]), w = want[t * s.n + j];
        SKINNYGEMM_CHECK(std::isfinite(g) && std::isfinite(w),
                         what << " m=" << m << ": " << op.name << " (layer " << op.layer << ") segment " << s.name
                              << " y[" << t << "," << j << "] = " << g << " (reference " << w
                              << "): not finite, so an input it read was never written");
        err += (g - w) * (g - w);
        norm += w * w;
      }
    const double rel = norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
    SKINNYGEMM_CHECK(rel <= tolerance, what << " m=" << m << ": " << op.name << " (layer " << op.layer << ") segment "
                                            << s.name << " [" << s.n << "x" << s.k << "]: relative error " << rel
                                            << " vs the reference exceeds " << tolerance);
    worst = std::max(worst, rel);
  }
  return worst;
}

namespace {

void say(const StepRunOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

// One eager run with every non-input activation poisoned: each sampled op's segments against the device's
// reference on the op's input as it stands right after the op ran (so "same inputs" holds exactly, whatever
// earlier layers computed). A NaN left anywhere upstream reaches the sampled outputs and fails here.
void check_variant(StepExecutor& ex, StepDevice& dev, const StepModel& model, int64_t m, bool all, StepResult* r) {
  const std::vector<StepOp>& ops = ex.ops();
  int first_mla = 0;
  for (const StepOp& op : ops)
    if (op.kind == "mla" && !first_mla) first_mla = op.layer;
  dev.reset_activations(static_cast<uint32_t>(0x5EED0000u + m));
  // With several ranks a rank that left this loop early would leave the others waiting in an all-reduce, so
  // a failure is kept and the run goes on (every op, every all-reduce); the first failure is thrown at the end.
  std::string failed;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const StepOp& op = ops[i];
    try {
      ex.run(i, m, dev.stream());
      if (failed.empty() && (all || op.layer <= 2 || op.layer == first_mla || op.layer >= model.layers)) {
        r->max_rel_error = std::max(r->max_rel_error, check_op(dev, model, op, m, r->name));
        r->checked += static_cast<int>(op.segments.size());
      }
    } catch (const Error& e) {
      if (failed.empty()) failed = e.what();
    }
    ex.reduce_after(i, m, dev.stream());  // after the check: the op's own output is compared, not the sum
  }
  if (!failed.empty()) throw Error(failed);
}

// Each op name timed alone (time_ops_alone): us per launch and us x count.
void time_sinks(StepExecutor& ex, StepDevice& dev, int64_t m, int samples, std::size_t elem, StepResult* r) {
  const std::vector<StepOp>& ops = ex.ops();
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < ops.size(); ++i) groups[ops[i].name].push_back(i);
  for (const auto& [name, idx] : groups) {
    const StepOp& first = ops[idx[0]];
    StepSink s{name, first.n(), first.k(), static_cast<int>(idx.size()),
               time_ops_alone(ex, dev, idx, m, samples, elem), 0};
    s.total_us = s.us * static_cast<double>(s.count);
    r->sinks_us += s.total_us;
    r->sinks.push_back(s);
  }
  std::sort(r->sinks.begin(), r->sinks.end(), [](const StepSink& a, const StepSink& b) { return a.total_us > b.total_us; });
  if (r->sinks.size() > 10) r->sinks.resize(10);
}

std::vector<std::string> op_names(const std::vector<StepOp>& ops) {  // in step order, each once
  std::vector<std::string> names;
  for (const StepOp& op : ops)
    if (std::find(names.begin(), names.end(), op.name) == names.end()) names.push_back(op.name);
  return names;
}

// The ops as a chain, timed: the launches of op name `only` ("": all) in step order, each a probe on ring_of.at(its
// name), except those of op name `real`, which ex runs for real (m tokens).
double time_chain(StepDevice& dev, const std::vector<StepOp>& ops, const std::map<std::string, std::string>& ring_of,
                  int samples, const std::string& only = "", StepExecutor* ex = nullptr, const std::string& real = "",
                  int64_t m = 1) {
  return dev.time([&] {
               int index = 0;
               for (std::size_t i = 0; i < ops.size(); ++i) {
                 if (!only.empty() && ops[i].name != only) continue;
                 if (ex && ops[i].name == real) ex->run(i, m, dev.stream());
                 else dev.launch_chain_op(ops[i], ring_of.at(ops[i].name), index++);
               }
             }, samples).median_us;
}

// ChainFloor: each op name's ring, the fastest in a graph of that name's launches alone (3 samples; names whose
// launches hold less than the L2 read some of it from there, so the choice may be off for them, the chain is not),
// then the whole chain with those rings and with each ring for every launch.
ChainFloor measure_chain_floor(StepDevice& dev, const std::vector<StepOp>& ops, int samples) {
  const std::vector<std::string> rings = dev.chain_rings(), names = op_names(ops);
  auto every = [&](const std::string& ring) {
    std::map<std::string, std::string> m;
    for (const std::string& n : names) m[n] = ring;
    return m;
  };
  ChainFloor f;
  for (const std::string& name : names) {
    double best = 1e30;
    for (const std::string& ring : rings) {
      const double us = time_chain(dev, ops, every(ring), 3, name);
      if (us < best) best = us, f.op_rings[name] = ring;
    }
  }
  auto consider = [&](const std::string& what, const std::map<std::string, std::string>& ring_of) {
    const double us = time_chain(dev, ops, ring_of, samples);
    f.tried.emplace_back(what, us);
    if (f.us == 0 || us < f.us) f.us = us, f.rings = what;
  };
  consider("per op", f.op_rings);
  for (const std::string& ring : rings) consider(ring, every(ring));
  return f;
}

// StepRunOptions::chain_attribution: per op name, the chain floor's graph (the rings as f chose them) with that name's
// launches run for real by ex, minus the same graph with none real, timed first in the same breath (f.us is the best of
// the choices taken earlier: biased low against one more timing); shares largest first.
void attribute_chain(StepExecutor& ex, StepDevice& dev, const ChainFloor& f, int64_t m, int samples, StepResult* r) {
  const std::vector<StepOp>& ops = ex.ops();
  const std::vector<std::string> names = op_names(ops);
  std::map<std::string, std::string> ring_of = f.op_rings;
  if (f.rings != "per op")
    for (auto& [name, ring] : ring_of) ring = f.rings;
  auto time_with_real = [&](const std::string& real) { return time_chain(dev, ops, ring_of, samples, "", &ex, real, m); };
  r->chain_share_base_us = time_with_real("");
  for (const std::string& name : names) {
    ChainShare s{name, 0, 0, 0, 0};
    for (const StepOp& op : ops)
      if (op.name == name) s.n = op.n(), s.k = op.k(), ++s.count;
    s.us = time_with_real(name) - r->chain_share_base_us;
    r->chain_shares.push_back(s);
  }
  std::sort(r->chain_shares.begin(), r->chain_shares.end(),
            [](const ChainShare& a, const ChainShare& b) { return a.us > b.us; });
}

}  // namespace

StepReport run_step(const StepRunOptions& o, const StepModel& model, StepDevice& dev) {
  const bool cpu = dev.memory().backend == Backend::Cpu;
  SKINNYGEMM_CHECK(o.samples >= (cpu ? 1 : 5), "samples=" << o.samples << " must be >= " << (cpu ? 1 : 5)
                                                          << (cpu ? "" : " on the GPU (the protocol's minimum)"));
  SKINNYGEMM_CHECK(!o.ms.empty() && !o.variants.empty(), "nothing to run: " << o.ms.size() << " M values, "
                                                                            << o.variants.size() << " variants");
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  const char* chain_flag = o.chain_attribution ? "--chain-attribution" : "--chain-floor";
  SKINNYGEMM_CHECK(!(o.chain_floor || o.chain_attribution) || !o.comm,
                   "the dependent-chain floor (" << chain_flag << ") measures one GPU's step; not across ranks");
  SKINNYGEMM_CHECK(!(o.chain_floor || o.chain_attribution) || !cpu,
                   "the dependent-chain floor (" << chain_flag << ") needs the cuda backend; the "
                                               << dev.name() << " step has no GPU to stream on");
  StepReport report;
  report.device = dev.name();
  report.pdl = dev.pdl();
  report.weight_bytes = model.arena_bytes;
  if (o.comm) {
    report.rank = o.comm->rank();
    report.ranks = o.comm->ranks();
    dev.attach(o.comm);
  }
  std::vector<StepExecutor> executors;
  for (StepVariant v : o.variants) executors.emplace_back(model, dev.memory(), v, max_m, o.comm);
  if (!cpu) say(o, "stream-read probe");
  report.stream_read_tbps = dev.stream_read_tbps(o.samples);
  const std::size_t total = o.ms.size() * executors.size();
  for (int64_t m : o.ms) {
    for (StepExecutor& ex : executors) {
      StepResult r;
      r.variant = ex.variant();
      r.pdl = dev.pdl();
      r.name = variant_name(r.variant, cpu || r.pdl);
      r.m = m;
      r.gemms = static_cast<int>(ex.ops().size());
      r.bytes = step_bytes(ex.ops(), m, model.elem());
      std::ostringstream head;
      head << "[" << report.results.size() + 1 << "/" << total << "] " << r.name << " m=" << m << ": ";
      r.all_reduces = ex.all_reduces();
      say(o, head.str() + "check (eager run, poisoned activations" + (o.comm ? ", with the all-reduces)" : ")"));
      bool failed = false;
      try {
        check_variant(ex, dev, model, m, o.check_all, &r);
      } catch (const Error& e) {  // a wrong step has no speed: report it, measure the other variants
        r.error = e.what();
        failed = true;
      }
      // Every rank times the case or none does: the graphs hold collectives that need all of them.
      if (o.comm && o.comm->max(failed ? 1 : 0, dev.stream()) && !failed) {
        r.error = "another rank failed the check of this case (rank " + std::to_string(report.rank) + " passed)";
        failed = true;
      }
      if (failed) {
        say(o, head.str() + "FAILED the check: " + r.error);
        report.results.push_back(std::move(r));
        continue;
      }
      say(o, head.str() + "time the step (" + std::to_string(r.gemms) + " GEMM launches" +
                 (o.comm ? ", " + std::to_string(r.all_reduces) + " all-reduces)" : ")"));
      const StepTiming t = dev.time([&] { ex.run_all(m, dev.stream()); }, o.samples);
      r.us = t.median_us;
      r.spread = t.spread;
      r.tbps = static_cast<double>(r.bytes) / (r.us * 1e6);
      if (o.trace_tma) {
        say(o, head.str() + "the TMA launches' timeline (one traced graph)");
        try {
          r.tma_trace = std::make_shared<const TmaTrace>(dev.trace_tma([&] { ex.run_all(m, dev.stream()); }));
        } catch (const Error& e) {  // keep the case's timing and the other cases
          r.trace_error = e.what();
          say(o, head.str() + "the timeline FAILED: " + r.trace_error);
        }
      }
      if (o.sinks) {
        say(o, head.str() + "time each projection alone (sinks)");
        time_sinks(ex, dev, m, o.samples, model.elem(), &r);
      }
      if (o.comm) {
        // Last for this case: summing `hidden` into itself 2 x layers times overflows it (inf/NaN, which costs
        // NCCL's adds nothing extra); the next case's check resets every activation first.
        say(o, head.str() + "time the all-reduces alone");
        r.comm_us = dev.time([&] { ex.run_comm(m, dev.stream()); }, o.samples).median_us;
        r.comm_share = r.comm_us / r.us;
      }
      report.results.push_back(std::move(r));
    }
  }
  if (o.chain_floor || o.chain_attribution) {
    // Once per launch list (the probe streams weights only, so M does not change it), after every variant's timing.
    for (const StepExecutor& ex : executors) {
      const std::string list = runs_fused_ops(ex.variant()) ? "fused" : "unfused";
      if (report.chain_floors.count(list)) continue;
      say(o, "dependent-chain floor of the " + list + " launches (" + std::to_string(ex.ops().size()) +
                 " probe launches; each op name's best ring alone, then every ring choice for the whole chain)");
      try {  // the timings above stand whatever happens here
        report.chain_floors[list] = measure_chain_floor(dev, ex.ops(), o.samples);
      } catch (const Error& e) {
        report.chain_floors.erase(list);
        report.chain_error = "the dependent-chain floor of the " + list + " launches: " + e.what();
        say(o, "FAILED: " + report.chain_error);
        break;
      }
    }
    bool attribute = o.chain_attribution;
    for (StepResult& r : report.results) {
      const auto it = report.chain_floors.find(runs_fused_ops(r.variant) ? "fused" : "unfused");
      if (!r.error.empty() || it == report.chain_floors.end()) continue;
      const ChainFloor& f = it->second;
      r.chain_floor_us = f.us;
      r.chain_efficiency = f.us / r.us;
      r.chain_rings = f.rings;
      if (!attribute) continue;
      StepExecutor& ex = *std::find_if(executors.begin(), executors.end(),
                                       [&](const StepExecutor& e) { return e.variant() == r.variant; });
      say(o, "chain attribution of " + r.name + " m=" + std::to_string(r.m));
      try {  // the timings above stand whatever happens here
        attribute_chain(ex, dev, f, r.m, o.samples, &r);
      } catch (const Error& e) {
        r.chain_shares.clear();
        report.chain_error = "the chain attribution of " + r.name + " m=" + std::to_string(r.m) + ": " + e.what();
        say(o, "FAILED: " + report.chain_error);
        attribute = false;  // the other cases keep their chain floor, without shares
      }
    }
  }
  // A weak probe inflates every efficiency: keep the better of a probe before and one after the measurements.
  if (!cpu) say(o, "stream-read probe (again)");
  report.stream_read_tbps = std::max(report.stream_read_tbps, dev.stream_read_tbps(o.samples));
  for (StepResult& r : report.results) {
    if (!r.error.empty()) continue;
    if (report.stream_read_tbps > 0) {
      r.floor_us = static_cast<double>(r.bytes) / (report.stream_read_tbps * 1e6);
      r.efficiency = r.floor_us / r.us;
    }
    for (const StepResult& b : report.results)
      if (b.variant == StepVariant::Cublaslt && b.m == r.m && b.error.empty()) {
        r.cublaslt_us = b.us;
        r.speedup = b.us / r.us;
      }
  }
  return report;
}

void StepDevice::launch_chain_op(const StepOp&, const std::string&, int) {
  SKINNYGEMM_FAIL("the chain probe (--chain-attribution) needs the cuda backend; the " << name()
                                                                                       << " step has no GPU to stream on");
}

std::vector<std::string> StepDevice::chain_rings() {
  SKINNYGEMM_FAIL("the dependent-chain floor (--chain-floor) needs the cuda backend; the " << name()
                                                                                          << " step has no GPU to stream on");
}

TmaTrace StepDevice::trace_tma(const std::function<void()>&) {
  SKINNYGEMM_FAIL("the TMA timeline (--trace-tma) needs the cuda backend; the " << name() << " step has no TMA launches");
}

StepReport run_step(const StepRunOptions& o) {
  const Backend backend = resolve_backend(o.backend);
  SKINNYGEMM_CHECK(!o.ms.empty(), "no M values given");
  for (int64_t m : o.ms) SKINNYGEMM_CHECK(m >= 1 && m <= 64, "M=" << m << " is outside the step's range 1..64");
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  say(o, "building the step of " + o.model + " at TP" + std::to_string(o.tp));
  const StepModel model = build_step_model(o.model, o.tp, o.scale, o.moe_front);
  std::ostringstream what;
  what << "allocating " << static_cast<double>(model.arena_bytes) / 1e9 << " GB of weights (" << model.ops_unfused.size()
       << " GEMMs unfused) on the " << backend_name(backend) << " backend and filling them with random values";
  say(o, what.str());
  SKINNYGEMM_CHECK(!o.comm || backend == Backend::Cuda, "a step across " << o.comm->ranks() << " ranks needs the cuda "
                                                        << "backend (NCCL); the " << backend_name(backend)
                                                        << " backend runs one rank");
  const StepRank rank = o.comm ? StepRank{o.comm->rank(), o.comm->ranks()} : StepRank{};
  const std::unique_ptr<StepDevice> dev =
      backend == Backend::Cuda ? make_cuda_step_device(model, max_m, rank) : make_cpu_step_device(model, max_m);
  return run_step(o, model, *dev);
}

}  // namespace skinnygemm::tune
