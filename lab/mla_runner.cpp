// The MLA executor (one variant's layer through gemm(), FusedProjection and the device's operations) and
// run_mla, the protocol every backend shares: reference, check, time, attention alone, picks.
#include "lab/mla_runner.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "runtime/half.h"

namespace skinnygemm::tune {

MlaExecutor::MlaExecutor(const MlaDims& dims, MlaDevice& device, MlaVariant variant, int copy, int64_t max_m)
    : dims_(dims), layout_(mla_weight_layout(dims)), dev_(&device), variant_(variant), copy_(copy), max_m_(max_m) {
  const MlaMemory& mem = device.memory();
  SKINNYGEMM_CHECK(variant != MlaVariant::Cublaslt || mem.backend == Backend::Cuda,
                   "the cublaslt mla variant needs the cuda backend (cuBLASLt runs on the GPU); on the "
                       << backend_name(mem.backend) << " backend run the skinny_* variants");
  SKINNYGEMM_CHECK(copy >= 0 && static_cast<std::size_t>(copy) < mem.weights.size(),
                   "weight copy " << copy << " does not exist (the device holds " << mem.weights.size() << ")");
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= 64, "max_m=" << max_m << " must be in 1..64");
  if (variant == MlaVariant::Cublaslt) return;
  // qkv_a and g: adjacent rows of one block (zero-copy) writing adjacent columns of `a` (in place).
  const int64_t e = static_cast<int64_t>(dtype_size(dims.dtype));
  const char* w = mem.weights[copy] + layout_.qkv_a_g;
  char* a = mem.buffers[kMlaA];
  std::vector<Segment> segs = {
      {w, dims.qkv_a_rows(), 0, a, dims.a_width(), 1, "qkv_a", dims.hidden, dims.dtype},
      {w + dims.qkv_a_rows() * dims.hidden * e, dims.g_rows(), 0, a + dims.qkv_a_rows() * e, dims.a_width(), 1, "g",
       dims.hidden, dims.dtype}};
  proj_ = std::make_unique<FusedProjection>(std::move(segs), mem.backend, max_m);
}

MlaExecutor::~MlaExecutor() = default;
MlaExecutor::MlaExecutor(MlaExecutor&&) noexcept = default;

MlaAttentionArgs MlaExecutor::attention_args(int64_t m, int64_t context, int cache_copy) const {
  const MlaMemory& mem = dev_->memory();
  const MlaDims& d = dims_;
  MlaAttentionArgs at;
  at.q_lat = mem.buffers[kMlaQLat];
  at.ld_qlat = d.heads * d.kv_lora;
  at.q = mem.buffers[kMlaQ];
  at.ld_q = d.q_width();
  at.q_head = d.qk_head();
  at.rope_offset = d.nope;
  at.cache = mem.cache + cache_copy * mla_cache_bytes(d, m, context);
  at.seq_stride = context * d.cache_row();
  at.o_lat = mem.buffers[kMlaOLat];
  at.ld_olat = d.heads * d.kv_lora;
  at.m = m;
  at.context = context;
  at.heads = d.heads;
  at.kv_lora = d.kv_lora;
  at.rope = d.rope;
  at.scale = d.softmax_scale();
  return at;
}

void MlaExecutor::run(int64_t m, int64_t context, int cache_copy) {
  SKINNYGEMM_CHECK(m >= 1 && m <= max_m_, "m=" << m << " is outside 1.." << max_m_ << " (the executor's max_m)");
  const MlaMemory& mem = dev_->memory();
  const MlaDims& d = dims_;
  const int64_t e = static_cast<int64_t>(dtype_size(d.dtype));
  const char* w = mem.weights[copy_];
  const auto buf = [&](int b) { return mem.buffers[b]; };
  void* main = dev_->stream();
  void* side = dev_->side_stream();
  Options g;
  g.backend = mem.backend;
  g.stream = main;
  if (variant_ == MlaVariant::Cublaslt) g.config = "cublaslt";

  dev_->rmsnorm({buf(kMlaX), d.hidden, buf(kMlaXn), d.hidden, w + layout_.gamma_in, m, d.hidden, 0, d.eps}, main);
  // qkv_a and the gate g, both reading xn.
  RunOptions ro;
  ro.gemm = g;
  switch (variant_) {
    case MlaVariant::Cublaslt:
      gemm({m, d.qkv_a_rows(), d.hidden, d.dtype, d.hidden, d.hidden, d.a_width()}, buf(kMlaXn), w + layout_.qkv_a_g,
           buf(kMlaA), g);
      gemm({m, d.g_rows(), d.hidden, d.dtype, d.hidden, d.hidden, d.a_width()}, buf(kMlaXn),
           w + layout_.qkv_a_g + d.qkv_a_rows() * d.hidden * e, buf(kMlaA) + d.qkv_a_rows() * e, g);
      break;
    case MlaVariant::SkinnySeparate:
      ro.rung = Rung::Separate;
      proj_->run(buf(kMlaXn), d.hidden, m, ro);
      break;
    case MlaVariant::SkinnyFused:
      proj_->run(buf(kMlaXn), d.hidden, m, ro);
      break;
    case MlaVariant::SkinnySideGate:
      ro.gemm.stream = nullptr;  // run_split_deferred takes its streams as arguments
      proj_->run_split_deferred(buf(kMlaXn), d.hidden, m, main, side, {1}, ro);
      break;
  }
  // q_a norm, and the new token's latent (normed c_kv, then k_rope as it is) appended at slot context - 1.
  dev_->rmsnorm({buf(kMlaA), d.a_width(), buf(kMlaQn), d.q_lora, w + layout_.gamma_q, m, d.q_lora, 0, d.eps}, main);
  char* slot = mem.cache + cache_copy * mla_cache_bytes(d, m, context) + (context - 1) * d.cache_row() * e;
  dev_->rmsnorm({buf(kMlaA) + d.q_lora * e, d.a_width(), slot, context * d.cache_row(), w + layout_.gamma_kv, m,
                 d.kv_lora, d.rope, d.eps},
                main);
  gemm({m, d.q_width(), d.q_lora, d.dtype, d.q_lora, d.q_lora, d.q_width()}, buf(kMlaQn), w + layout_.q_b, buf(kMlaQ), g);
  // Absorb W_UK into the query: q_lat[h] = q_nope[h] · W_UK[h]^T.
  dev_->head_proj({buf(kMlaQ), d.q_width(), d.qk_head(), w + layout_.uk, buf(kMlaQLat), d.heads * d.kv_lora, d.kv_lora,
                   nullptr, 0, m, d.heads, d.kv_lora, d.nope},
                  main);
  dev_->attention(attention_args(m, context, cache_copy), main);
  // The gate's side stream joins here, right before its only reader.
  if (variant_ == MlaVariant::SkinnySideGate) proj_->join_side(side, main);
  dev_->head_proj({buf(kMlaOLat), d.heads * d.kv_lora, d.kv_lora, w + layout_.uv, buf(kMlaGated), d.gated_width(),
                   d.v_dim, buf(kMlaA) + d.qkv_a_rows() * e, d.a_width(), m, d.heads, d.v_dim, d.kv_lora},
                  main);
  gemm({m, d.hidden, d.gated_width(), d.dtype, d.gated_width(), d.gated_width(), d.hidden}, buf(kMlaGated), w + layout_.o,
       buf(kMlaOut), g);
}

double mla_relative_error(const std::vector<uint16_t>& got, const std::vector<double>& want, int64_t m, int64_t n,
                          DType dtype) {
  SKINNYGEMM_CHECK(static_cast<int64_t>(got.size()) >= m * n && static_cast<int64_t>(want.size()) >= m * n,
                   "comparing " << m << "x" << n << " outputs but got " << got.size() << " and " << want.size()
                                << " values");
  double err = 0, norm = 0;
  for (int64_t t = 0; t < m; ++t)
    for (int64_t j = 0; j < n; ++j) {
      const double g = half_to_float(dtype, got[t * n + j]), w = want[t * n + j];
      SKINNYGEMM_CHECK(std::isfinite(g) && std::isfinite(w),
                       "layer output y[" << t << "," << j << "] = " << g << " (reference " << w
                                         << "): not finite, so an input it read was never written");
      err += (g - w) * (g - w);
      norm += w * w;
    }
  return norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
}

std::vector<MlaPick> mla_picks(const std::vector<MlaResult>& results) {
  std::vector<MlaPick> picks;
  for (std::size_t i = 0; i < results.size();) {
    std::size_t end = i;
    while (end < results.size() && results[end].m == results[i].m && results[end].context == results[i].context) ++end;
    const MlaResult* best = nullptr;
    const MlaResult* second = nullptr;
    double cublaslt = 0;
    for (std::size_t j = i; j < end; ++j) {
      const MlaResult& r = results[j];
      if (!r.error.empty() || r.us <= 0) continue;
      if (r.variant == MlaVariant::Cublaslt) {
        cublaslt = r.us;
        continue;
      }
      if (!best || r.us < best->us) {
        second = best;
        best = &r;
      } else if (!second || r.us < second->us) {
        second = &r;
      }
    }
    if (best) {
      MlaPick p;
      p.m = best->m;
      p.context = best->context;
      p.variant = best->variant;
      p.us = best->us;
      p.margin = second ? second->us / best->us - 1 : 0;
      p.runner_up = second ? second->name : "";
      p.cublaslt_us = cublaslt;
      picks.push_back(p);
    }
    i = end;
  }
  return picks;
}

namespace {

void say(const MlaRunOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

std::string point_name(int64_t m, int64_t context) {
  return "m=" + std::to_string(m) + " context=" + std::to_string(context);
}

}  // namespace

MlaReport run_mla(const MlaRunOptions& o, const MlaDims& dims, MlaDevice& dev) {
  const bool cpu = dev.memory().backend == Backend::Cpu;
  SKINNYGEMM_CHECK(o.samples >= (cpu ? 1 : 5), "samples=" << o.samples << " must be >= " << (cpu ? 1 : 5)
                                                          << (cpu ? "" : " on the GPU (the protocol's minimum)"));
  SKINNYGEMM_CHECK(!o.ms.empty() && !o.contexts.empty() && !o.variants.empty(),
                   "nothing to run: " << o.ms.size() << " M values, " << o.contexts.size() << " contexts, "
                                      << o.variants.size() << " variants");
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  for (int64_t m : o.ms) SKINNYGEMM_CHECK(m >= 1 && m <= 64, "M=" << m << " is outside the layer's range 1..64");
  for (int64_t c : o.contexts) SKINNYGEMM_CHECK(c >= 1, "context=" << c << " must be >= 1");
  MlaReport rep;
  rep.device = dev.name();
  rep.info = dev.info();
  rep.pdl = dev.pdl();
  rep.dims = dims;
  rep.weight_bytes = mla_weight_layout(dims).read_bytes;
  const int copies = dev.weight_copies();
  std::vector<std::vector<MlaExecutor>> ex(o.variants.size());
  for (std::size_t v = 0; v < o.variants.size(); ++v)
    for (int c = 0; c < copies; ++c) ex[v].emplace_back(dims, dev, o.variants[v], c, max_m);
  if (!cpu) say(o, "stream-read probe");
  rep.stream_read_tbps = dev.stream_read_tbps(o.samples);
  std::vector<int64_t> contexts = o.contexts, ms = o.ms;
  std::sort(contexts.begin(), contexts.end());  // caches grow monotonically: at most one allocation per context
  std::sort(ms.begin(), ms.end());
  contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());  // each point once
  ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
  const std::size_t total = contexts.size() * ms.size();
  std::size_t done = 0;
  for (int64_t context : contexts)
    for (int64_t m : ms) {
      std::ostringstream head;
      head << "[" << ++done << "/" << total << "] " << point_name(m, context) << ": ";
      const std::string why = dev.fits(m, context);
      if (!why.empty()) {
        rep.skipped.push_back({m, context, why});
        say(o, head.str() + "SKIPPED: " + why);
        continue;
      }
      const uint32_t seed = static_cast<uint32_t>(0x31A00000u + m * 977 + context);
      const int cache_copies = dev.prepare(m, context, seed);
      say(o, head.str() + "reference");
      dev.reset_activations(seed);
      const std::vector<double> want = dev.reference(m, context);
      const std::size_t first = rep.results.size();
      for (std::size_t v = 0; v < o.variants.size(); ++v) {
        MlaResult r;
        r.variant = o.variants[v];
        r.name = mla_variant_name(r.variant);
        r.m = m;
        r.context = context;
        r.bytes = mla_layer_bytes(dims, m, context);
        r.cache_bytes = mla_cache_bytes(dims, m, context);
        r.copies = copies;
        r.cache_copies = cache_copies;
        r.attention_splits = dev.attention_split(m, context).splits;
        try {  // a wrong layer has no speed: report it, measure the other variants
          dev.reset_activations(seed);
          ex[v][0].run(m, context, 0);
          const std::vector<uint16_t> got = dev.read(dev.memory().buffers[kMlaOut], m, dims.hidden, dims.hidden);
          r.max_rel_error = mla_relative_error(got, want, m, dims.hidden, dims.dtype);
          r.checked = true;
          SKINNYGEMM_CHECK(r.max_rel_error <= kMlaTolerance, r.name << " " << point_name(m, context)
                                                                    << ": relative error " << r.max_rel_error
                                                                    << " of the layer output vs the reference exceeds "
                                                                    << kMlaTolerance);
        } catch (const Error& e) {
          r.error = e.what();
          say(o, head.str() + r.name + " FAILED the check: " + r.error);
          rep.results.push_back(std::move(r));
          continue;
        }
        // Every copy once eagerly: their first use (selection, cuBLASLt plans for other pointers) must not happen
        // inside the capture.
        const auto enqueue = [&] {
          for (int c = 0; c < copies; ++c) ex[v][c].run(m, context, c % cache_copies);
        };
        enqueue();
        say(o, head.str() + r.name + ": time (" + std::to_string(copies) + " weight copies per replay)");
        const MlaTiming t = dev.time(enqueue, o.samples);
        r.us = t.median_us / copies;
        r.spread = t.spread;
        r.tbps = static_cast<double>(r.bytes) / (r.us * 1e6);
        rep.results.push_back(std::move(r));
      }
      // The attention alone, on the inputs the last run left (q_lat and q are valid by now).
      bool any = false;
      for (std::size_t i = first; i < rep.results.size(); ++i) any |= rep.results[i].error.empty();
      if (o.attention && any) {
        say(o, head.str() + "attention alone");
        const MlaExecutor& e0 = ex[0][0];
        const auto enqueue = [&] {
          for (int c = 0; c < copies; ++c) dev.attention(e0.attention_args(m, context, c % cache_copies), dev.stream());
        };
        enqueue();
        const MlaTiming t = dev.time(enqueue, o.samples);
        for (std::size_t i = first; i < rep.results.size(); ++i) {
          rep.results[i].attention_us = t.median_us / copies;
          rep.results[i].attention_tbps =
              static_cast<double>(rep.results[i].cache_bytes) / (rep.results[i].attention_us * 1e6);
        }
      }
    }
  // A weak probe inflates every efficiency: keep the better of a probe before and one after the measurements.
  if (!cpu) say(o, "stream-read probe (again)");
  rep.stream_read_tbps = std::max(rep.stream_read_tbps, dev.stream_read_tbps(o.samples));
  for (MlaResult& r : rep.results) {
    if (!r.error.empty()) continue;
    if (rep.stream_read_tbps > 0) {
      r.floor_us = static_cast<double>(r.bytes) / (rep.stream_read_tbps * 1e6);
      r.efficiency = r.floor_us / r.us;
    }
    for (const MlaResult& b : rep.results)
      if (b.variant == MlaVariant::Cublaslt && b.m == r.m && b.context == r.context && b.error.empty()) {
        r.cublaslt_us = b.us;
        r.speedup = b.us / r.us;
      }
  }
  rep.picks = mla_picks(rep.results);
  return rep;
}

MlaReport run_mla(const MlaRunOptions& o) {
  const Backend backend = resolve_backend(o.backend);
  SKINNYGEMM_CHECK(!o.ms.empty(), "no M values given");
  for (int64_t m : o.ms) SKINNYGEMM_CHECK(m >= 1 && m <= 64, "M=" << m << " is outside the layer's range 1..64");
  const int64_t max_m = *std::max_element(o.ms.begin(), o.ms.end());
  say(o, "MLA layer of " + o.model + " at TP" + std::to_string(o.tp) + " on the " + backend_name(backend) + " backend");
  const MlaDims dims = mla_dims(o.model, o.tp, o.scale);
  const std::unique_ptr<MlaDevice> dev =
      backend == Backend::Cuda ? make_cuda_mla_device(dims, max_m) : make_cpu_mla_device(dims, max_m);
  return run_mla(o, dims, *dev);
}

}  // namespace skinnygemm::tune
