// The MLA layer in FP64 on the host (mla_runner.h): the CPU device's reference and the GPU tests'. Written as
// the formulas of lab/mla.h, one loop nest per line, rounding to BF16 exactly where the layer stores an
// intermediate, so that the only differences left are accumulation order (and the GPU attention's BF16
// probabilities): nothing here is shared with the code it checks.
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/half.h"
#include "lab/mla_runner.h"

namespace skinnygemm::tune {

namespace {

using Vec = std::vector<double>;

double round_to(DType dtype, double v) { return half_to_float(dtype, float_to_half(dtype, static_cast<float>(v))); }

// 16-bit values at base (row stride ld) as doubles, rows x cols.
Vec load(DType dt, const uint16_t* base, int64_t rows, int64_t cols, int64_t ld) {
  Vec out(static_cast<std::size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = half_to_float(dt, base[r * ld + c]);
  return out;
}

// y[t, j] = round(sum_i x[t, i] w[j, i]) (rows of w are k long).
Vec linear(DType dt, const Vec& x, const uint16_t* w, int64_t m, int64_t n, int64_t k, bool round) {
  Vec y(static_cast<std::size_t>(m * n));
  for (int64_t j = 0; j < n; ++j) {
    const Vec wj = load(dt, w + j * k, 1, k, k);
    for (int64_t t = 0; t < m; ++t) {
      double s = 0;
      for (int64_t i = 0; i < k; ++i) s += x[t * k + i] * wj[i];
      y[t * n + j] = round ? round_to(dt, s) : s;
    }
  }
  return y;
}

// Rows of x (cols wide, row stride ld, starting at column c0): round(x · rsqrt(mean(x^2) + eps) · gamma).
Vec rmsnorm(DType dt, const Vec& x, int64_t ld, int64_t c0, int64_t rows, int64_t cols, const uint16_t* gamma, double eps) {
  Vec y(static_cast<std::size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += x[r * ld + c0 + c] * x[r * ld + c0 + c];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = round_to(dt, x[r * ld + c0 + c] * inv * half_to_float(dt, gamma[c]));
  }
  return y;
}

}  // namespace

std::vector<double> mla_reference_layer(const MlaDims& d, const uint16_t* weights, const uint16_t* x_bits,
                                        const uint16_t* cache, int64_t seq_stride, int64_t m, int64_t context) {
  const DType dt = d.dtype;
  const MlaWeights L = mla_weight_layout(d);
  const auto w = [&](int64_t offset) { return weights + offset / 2; };
  const Vec x = load(dt, x_bits, m, d.hidden, d.hidden);
  const Vec xn = rmsnorm(dt, x, d.hidden, 0, m, d.hidden, w(L.gamma_in), d.eps);
  const Vec a = linear(dt, xn, w(L.qkv_a_g), m, d.a_width(), d.hidden, true);  // qkv_a | g
  const Vec qn = rmsnorm(dt, a, d.a_width(), 0, m, d.q_lora, w(L.gamma_q), d.eps);
  const Vec ckv = rmsnorm(dt, a, d.a_width(), d.q_lora, m, d.kv_lora, w(L.gamma_kv), d.eps);
  const Vec q = linear(dt, qn, w(L.q_b), m, d.q_width(), d.q_lora, true);
  const int64_t R = d.cache_row(), H = d.heads;
  // q_lat[t][h][l] = round(sum_d q[t][h*qk + d] W_UK[h][l][d])
  Vec q_lat(static_cast<std::size_t>(m * H * d.kv_lora));
  for (int64_t t = 0; t < m; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t l = 0; l < d.kv_lora; ++l) {
        const uint16_t* wr = w(L.uk) + (h * d.kv_lora + l) * d.nope;
        double s = 0;
        for (int64_t i = 0; i < d.nope; ++i) s += q[t * d.q_width() + h * d.qk_head() + i] * half_to_float(dt, wr[i]);
        q_lat[(t * H + h) * d.kv_lora + l] = round_to(dt, s);
      }
  // Attention over the cache; the last row is the new token (normed c_kv, then k_rope as a holds it).
  Vec o_lat(static_cast<std::size_t>(m * H * d.kv_lora));
  for (int64_t t = 0; t < m; ++t) {
    Vec rows = load(dt, cache + t * seq_stride, context, R, R);
    for (int64_t l = 0; l < d.kv_lora; ++l) rows[(context - 1) * R + l] = ckv[t * d.kv_lora + l];
    for (int64_t r = 0; r < d.rope; ++r) rows[(context - 1) * R + d.kv_lora + r] = a[t * d.a_width() + d.q_lora + d.kv_lora + r];
    for (int64_t h = 0; h < H; ++h) {
      Vec score(static_cast<std::size_t>(context));
      double mx = -INFINITY;
      for (int64_t s = 0; s < context; ++s) {
        double v = 0;
        for (int64_t l = 0; l < d.kv_lora; ++l) v += q_lat[(t * H + h) * d.kv_lora + l] * rows[s * R + l];
        for (int64_t r = 0; r < d.rope; ++r) v += q[t * d.q_width() + h * d.qk_head() + d.nope + r] * rows[s * R + d.kv_lora + r];
        score[s] = v * d.softmax_scale();
        mx = std::max(mx, score[s]);
      }
      double sum = 0;
      for (int64_t s = 0; s < context; ++s) sum += (score[s] = std::exp(score[s] - mx));
      for (int64_t l = 0; l < d.kv_lora; ++l) {
        double v = 0;
        for (int64_t s = 0; s < context; ++s) v += score[s] * rows[s * R + l];
        o_lat[(t * H + h) * d.kv_lora + l] = round_to(dt, v / sum);
      }
    }
  }
  // gated[t][h*v + j] = round(sigmoid(g) * sum_l o_lat[t][h][l] W_UV[h][j][l])
  Vec gated(static_cast<std::size_t>(m * d.gated_width()));
  for (int64_t t = 0; t < m; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t j = 0; j < d.v_dim; ++j) {
        const uint16_t* wr = w(L.uv) + (h * d.v_dim + j) * d.kv_lora;
        double s = 0;
        for (int64_t l = 0; l < d.kv_lora; ++l) s += o_lat[(t * H + h) * d.kv_lora + l] * half_to_float(dt, wr[l]);
        const double gate = a[t * d.a_width() + d.qkv_a_rows() + h * d.v_dim + j];
        gated[t * d.gated_width() + h * d.v_dim + j] = round_to(dt, s / (1 + std::exp(-gate)));
      }
  return linear(dt, gated, w(L.o), m, d.hidden, d.gated_width(), false);
}

}  // namespace skinnygemm::tune
