// The MLA layer's CPU device: host memory, seeded random weights and caches, the operations between the GEMMs in
// plain FP32 loops, ops run in order on the calling thread (no graphs or streams), and the FP64 host reference for
// the checks. Used by the tests and `skinnygemm mla --backend cpu` on scaled-down dimensions. The attention runs
// the GPU kernel's algorithm (lab/mla.h: context split into chunks, an online softmax over tiles of
// kMlaAttentionTile tokens in the log2 domain with BF16 probabilities, then a combine over the chunks), so that
// the CPU tests check that algorithm against the direct FP64 softmax of the reference.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/half.h"
#include "lab/timing.h"
#include "lab/mla_runner.h"

namespace skinnygemm::tune {

namespace {

class CpuMlaDevice final : public MlaDevice {
 public:
  CpuMlaDevice(const MlaDims& dims, int64_t max_m) : dims_(dims), max_m_(max_m) {
    const MlaWeights layout = mla_weight_layout(dims);
    weights_.assign(static_cast<std::size_t>(layout.bytes / 2), 0);
    std::mt19937 rng(0x3A1Au);
    for (const MlaFill& f : mla_weight_fills(dims)) {
      std::uniform_real_distribution<double> dist(f.center - f.amp, f.center + f.amp);
      for (int64_t i = 0; i < f.elems; ++i)
        weights_[f.offset / 2 + i] = float_to_half(dims.dtype, static_cast<float>(dist(rng)));
    }
    memory_.backend = Backend::Cpu;
    memory_.weights = {reinterpret_cast<char*>(weights_.data())};
    for (int b = 0; b < kMlaBufferCount; ++b) {
      buffers_[b].assign(static_cast<std::size_t>(max_m * mla_buffer_width(dims, b)), 0xFFFF);
      memory_.buffers[b] = reinterpret_cast<char*>(buffers_[b].data());
    }
  }

  std::string name() const override { return "cpu"; }
  DeviceInfo info() const override { return cpu_device_info(); }
  const MlaMemory& memory() const override { return memory_; }
  void* stream() const override { return nullptr; }
  void* side_stream() const override { return nullptr; }
  bool pdl() const override { return false; }
  int weight_copies() const override { return 1; }  // no cache to keep cold

  std::string fits(int64_t m, int64_t context) const override {
    const int64_t need = mla_cache_bytes(dims_, m, context);
    const int64_t avail = static_cast<int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    if (avail <= 0 || need <= avail / 2) return "";
    std::ostringstream os;
    os << "the KV cache needs " << need / 1e9 << " GB of host memory but " << avail / 1e9
       << " GB are available (half may be used); use a smaller context or --scale";
    return os.str();
  }

  int prepare(int64_t m, int64_t context, uint32_t seed) override {
    SKINNYGEMM_CHECK(m >= 1 && m <= max_m_ && context >= 1, "prepare(m=" << m << ", context=" << context
                                                                         << "): expected m in 1.." << max_m_
                                                                         << " and context >= 1");
    m_ = m;
    context_ = context;
    cache_.assign(static_cast<std::size_t>(mla_cache_bytes(dims_, m, context) / 2), 0);
    std::mt19937 rng(seed ^ 0xCAC4Eu);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (uint16_t& v : cache_) v = float_to_half(dims_.dtype, dist(rng));
    memory_.cache = reinterpret_cast<char*>(cache_.data());
    return 1;
  }

  void reset_activations(uint32_t seed) override {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (int b = 0; b < kMlaBufferCount; ++b)
      for (uint16_t& v : buffers_[b]) v = b == kMlaX ? float_to_half(dims_.dtype, dist(rng)) : 0xFFFF;
    for (int64_t t = 0; t < m_; ++t)  // the slot the layer appends: a layer that forgot to must not pass
      std::fill_n(cache_.begin() + (t * context_ + context_ - 1) * dims_.cache_row(), dims_.cache_row(), 0xFFFF);
  }

  void rmsnorm(const MlaNormArgs& a, void*) override {
    const auto* x = static_cast<const uint16_t*>(a.x);
    const auto* g = static_cast<const uint16_t*>(a.gamma);
    auto* y = static_cast<uint16_t*>(a.y);
    for (int64_t r = 0; r < a.rows; ++r) {
      float ss = 0;
      for (int64_t c = 0; c < a.width; ++c) ss += f(x[r * a.ldx + c]) * f(x[r * a.ldx + c]);
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(a.width) + static_cast<float>(a.eps));
      for (int64_t c = 0; c < a.width; ++c) y[r * a.ldy + c] = h(f(x[r * a.ldx + c]) * inv * f(g[c]));
      for (int64_t c = a.width; c < a.width + a.tail; ++c) y[r * a.ldy + c] = x[r * a.ldx + c];
    }
  }

  void head_proj(const MlaHeadProjArgs& a, void*) override {
    const auto* x = static_cast<const uint16_t*>(a.x);
    const auto* w = static_cast<const uint16_t*>(a.w);
    const auto* gate = static_cast<const uint16_t*>(a.gate);
    auto* y = static_cast<uint16_t*>(a.y);
    for (int64_t t = 0; t < a.m; ++t)
      for (int64_t hd = 0; hd < a.heads; ++hd)
        for (int64_t j = 0; j < a.n; ++j) {
          float s = 0;
          for (int64_t i = 0; i < a.k; ++i) s += f(x[t * a.ldx + hd * a.x_head + i]) * f(w[(hd * a.n + j) * a.k + i]);
          if (gate) s *= 1.0f / (1.0f + std::exp(-f(gate[t * a.ldg + hd * a.n + j])));
          y[t * a.ldy + hd * a.y_head + j] = h(s);
        }
  }

  void attention(const MlaAttentionArgs& a, void*) override {
    const int64_t L = a.kv_lora, R = a.kv_lora + a.rope, T = kMlaAttentionTile;
    const MlaSplit sp = attention_split(a.m, a.context);
    const float scale_log2 = static_cast<float>(a.scale * 1.4426950408889634);
    const auto* cache = static_cast<const uint16_t*>(a.cache);
    std::vector<float> q(static_cast<std::size_t>(R)), o(static_cast<std::size_t>(L)), acc(static_cast<std::size_t>(L));
    std::vector<float> ms(static_cast<std::size_t>(sp.splits)), ls(static_cast<std::size_t>(sp.splits));
    std::vector<float> os(static_cast<std::size_t>(sp.splits * L));
    for (int64_t t = 0; t < a.m; ++t)
      for (int64_t hd = 0; hd < a.heads; ++hd) {
        for (int64_t l = 0; l < L; ++l) q[l] = f(static_cast<const uint16_t*>(a.q_lat)[t * a.ld_qlat + hd * L + l]);
        for (int64_t r = 0; r < a.rope; ++r)
          q[L + r] = f(static_cast<const uint16_t*>(a.q)[t * a.ld_q + hd * a.q_head + a.rope_offset + r]);
        for (int64_t s = 0; s < sp.splits; ++s) {  // one chunk: the online softmax over its tiles
          const int64_t begin = s * sp.chunk, end = std::min(a.context, begin + sp.chunk);
          float m_run = -INFINITY, l_run = 0;
          std::fill(o.begin(), o.end(), 0.f);
          for (int64_t tile = begin; tile < end; tile += T) {
            float score[kMlaAttentionTile], mx = -INFINITY;
            for (int64_t i = 0; i < T; ++i) {
              const int64_t tok = tile + i;
              if (tok >= end) {
                score[i] = -INFINITY;
                continue;
              }
              const uint16_t* row = cache + t * a.seq_stride + tok * R;
              float v = 0;
              for (int64_t c = 0; c < R; ++c) v += q[c] * f(row[c]);
              score[i] = v * scale_log2;
              mx = std::max(mx, score[i]);
            }
            const float m_new = std::max(m_run, mx), alpha = std::exp2(m_run - m_new);
            float sum = 0;
            for (float& o_l : o) o_l *= alpha;
            for (int64_t i = 0; i < T && tile + i < end; ++i) {
              const float p = std::exp2(score[i] - m_new);
              sum += p;
              const float pb = f(h(p));  // the GPU multiplies BF16 probabilities with the cache rows
              const uint16_t* row = cache + t * a.seq_stride + (tile + i) * R;
              for (int64_t l = 0; l < L; ++l) o[l] += pb * f(row[l]);
            }
            l_run = l_run * alpha + sum;
            m_run = m_new;
          }
          ms[s] = m_run;
          ls[s] = l_run;
          std::copy(o.begin(), o.end(), os.begin() + s * L);
        }
        // Combine the chunks in a fixed order.
        const float mx = *std::max_element(ms.begin(), ms.end());
        float l = 0;
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int64_t s = 0; s < sp.splits; ++s) {
          const float wgt = std::exp2(ms[s] - mx);
          l += wgt * ls[s];
          for (int64_t c = 0; c < L; ++c) acc[c] += wgt * os[s * L + c];
        }
        for (int64_t c = 0; c < L; ++c) static_cast<uint16_t*>(a.o_lat)[t * a.ld_olat + hd * L + c] = h(acc[c] / l);
      }
  }

  // A few chunks per sequence, so that the split and combine run here too.
  MlaSplit attention_split(int64_t m, int64_t context) const override {
    return mla_split(m, context, 1, 4, kMlaAttentionTile);
  }

  MlaTiming time(const std::function<void()>& enqueue, int samples) override {
    const SampleSummary s = time_host_calls(samples, 1, enqueue);
    return {s.median, s.spread};
  }

  std::vector<uint16_t> read(const void* ptr, int64_t m, int64_t n, int64_t ld) override {
    std::vector<uint16_t> out(static_cast<std::size_t>(m * n));
    const auto* src = static_cast<const uint16_t*>(ptr);
    for (int64_t t = 0; t < m; ++t) std::copy(src + t * ld, src + t * ld + n, out.begin() + t * n);
    return out;
  }

  std::vector<double> reference(int64_t m, int64_t context) override {
    SKINNYGEMM_CHECK(m == m_ && context == context_, "reference(m=" << m << ", context=" << context
                                                                    << ") but the prepared point is m=" << m_
                                                                    << " context=" << context_);
    return mla_reference_layer(dims_, weights_.data(), buffers_[kMlaX].data(), cache_.data(),
                               context * dims_.cache_row(), m, context);
  }

  double stream_read_tbps(int) override { return 0; }

 private:
  float f(uint16_t v) const { return half_to_float(dims_.dtype, v); }
  uint16_t h(float v) const { return float_to_half(dims_.dtype, v); }

  MlaDims dims_;
  int64_t max_m_ = 0, m_ = 0, context_ = 0;
  std::vector<uint16_t> weights_, cache_;
  std::array<std::vector<uint16_t>, kMlaBufferCount> buffers_;
  MlaMemory memory_;
};

}  // namespace

std::unique_ptr<MlaDevice> make_cpu_mla_device(const MlaDims& dims, int64_t max_m) {
  SKINNYGEMM_CHECK(max_m >= 1 && max_m <= 64, "max_m=" << max_m << " must be in 1..64");
  return std::make_unique<CpuMlaDevice>(dims, max_m);
}

}  // namespace skinnygemm::tune
