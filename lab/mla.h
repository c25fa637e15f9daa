// One MLA attention block's decode step (docs/mla.md), host-only: its dimensions per rank (from the model
// file), the variants compared, where its weights and activations live, the bytes it moves, and the argument
// records of its non-GEMM operations (RMSNorm, the per-head absorb products, the attention), which each backend
// implements (CPU: mla_cpu.cpp; CUDA: lab/cuda/mla_ops.cu).
//
// The layer, per token t of M (each token is its own sequence with `context` cached tokens):
//   xn = RMSNorm(x) · γ_in                               [M, hidden]
//   a  = xn · [W_qkv_a | W_g]ᵀ                           [M, q_lora + kv_lora + rope | heads·v]   (qkv_a, g)
//   qn = RMSNorm(a[q_a]) · γ_q;  cache[t][context-1] = (RMSNorm(a[c_kv]) · γ_kv, a[k_rope])
//   q  = qn · W_q_bᵀ                                     [M, heads·(nope + rope)]
//   q_lat[h] = q[h, nope] · W_UK[h]ᵀ                     [M, heads·kv_lora]   (absorbed: W_UK[h] is [kv_lora, nope])
//   o_lat[h] = softmax_s(scale·(q_lat[h]·c_s + q[h, rope]·r_s)) · c  over the cache rows (c_s, r_s)
//   gated[h] = sigmoid(a[g][h]) ⊙ (o_lat[h] · W_UV[h]ᵀ)  [M, heads·v]         (W_UV[h] is [v, kv_lora])
//   y  = gated · W_oᵀ                                    [M, hidden]
// Every intermediate is stored in BF16 (the reference rounds at the same places), accumulation is FP32.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "skinnygemm/dtype.h"
#include "skinnygemm/projection.h"

namespace skinnygemm::tune {

// cublaslt: every projection through cuBLASLt's default algorithm, qkv_a and g separate (today's engines).
// skinny_separate: qkv_a and g as two skinnygemm GEMMs. skinny_fused: one fused GEMM over the adjacent qkv_a|g
// rows (FusedProjection::run). skinny_side_gate: g on a side stream overlapping qkv_a and the attention, joined
// before the gating multiply (FusedProjection::run_split_deferred + join_side).
enum class MlaVariant { Cublaslt, SkinnySeparate, SkinnyFused, SkinnySideGate };

std::string mla_variant_name(MlaVariant variant);
// A comma list of the names above; an unknown or repeated name is an Error listing the choices.
std::vector<MlaVariant> parse_mla_variants(const std::string& list);
// The fused projection's mode a skinny variant runs (nullopt for cublaslt), and back.
std::optional<FusedMode> mla_variant_mode(MlaVariant variant);
MlaVariant mla_variant_for(FusedMode mode);

struct MlaDims {
  std::string model;
  int tp = 8;
  double scale = 1.0;
  DType dtype = DType::BF16;
  int64_t hidden = 0;
  int64_t heads = 0;  // local to the rank: num_attention_heads / tp
  int64_t q_lora = 0, kv_lora = 0, rope = 0, nope = 0, v_dim = 0;
  double eps = 1e-6;  // RMSNorm

  int64_t qkv_a_rows() const { return q_lora + kv_lora + rope; }  // 2112 at TP8
  int64_t g_rows() const { return heads * v_dim; }                  // 1536
  int64_t a_width() const { return qkv_a_rows() + g_rows(); }      // 3648: qkv_a and g outputs side by side
  int64_t qk_head() const { return nope + rope; }                   // 192
  int64_t q_width() const { return heads * qk_head(); }             // 2304 (q_b rows)
  int64_t cache_row() const { return kv_lora + rope; }              // 576: one cached token
  int64_t gated_width() const { return heads * v_dim; }             // 1536 (o_proj K)
  double softmax_scale() const;                                     // 1 / sqrt(nope + rope)
  std::string name() const;                                         // "kimi_k3.mla.tp8"
};

// Per-rank dimensions of the model's MLA block at one TP degree, from data_dir()/models/<model>.json; at scale 1
// they are checked against the file's mla.* projection shapes. scale in (0, 1] shrinks every width (a multiple of
// 8, at least 8) and the heads (at least 2), for the CPU tests; the CUDA attention kernel needs the real widths.
MlaDims mla_dims(const std::string& model, int tp, double scale = 1.0);

// The activation buffers, [max_m, width] each (row stride = width).
enum MlaBuffer : int { kMlaX, kMlaXn, kMlaA, kMlaQn, kMlaQ, kMlaQLat, kMlaOLat, kMlaGated, kMlaOut, kMlaBufferCount };
const char* mla_buffer_name(int buffer);
int64_t mla_buffer_width(const MlaDims& dims, int buffer);

// Byte offsets of one copy of the layer's weights (each block 256-byte aligned). qkv_a and g are adjacent rows of
// one block, so the fused variant runs them zero-copy.
struct MlaWeights {
  int64_t qkv_a_g = 0;  // [qkv_a_rows + g_rows, hidden]
  int64_t q_b = 0;      // [q_width, q_lora]
  int64_t o = 0;        // [hidden, gated_width]
  int64_t uk = 0;       // [heads][kv_lora][nope]
  int64_t uv = 0;       // [heads][v_dim][kv_lora]
  int64_t gamma_in = 0, gamma_q = 0, gamma_kv = 0;  // [hidden], [q_lora], [kv_lora]
  int64_t bytes = 0;       // one copy, with alignment
  int64_t read_bytes = 0;  // what one run of the layer reads of them (each element once)
};
MlaWeights mla_weight_layout(const MlaDims& dims);

// How each weight block is filled (every backend the same way, each with its own random numbers): uniform in
// [center - amp, center + amp). Matrices ±sqrt(3/K), so that each product keeps its input's variance; the
// RMSNorm gains in [0.5, 1.5), never constant, so that a mixed-up gain index shows in the output.
struct MlaFill {
  int64_t offset = 0, elems = 0;  // bytes into one copy, elements
  double center = 0, amp = 0;
};
std::vector<MlaFill> mla_weight_fills(const MlaDims& dims);

int64_t mla_activation_bytes(const MlaDims& dims, int64_t max_m);
// The latent KV cache of m sequences of `context` tokens: m x context x cache_row elements.
int64_t mla_cache_bytes(const MlaDims& dims, int64_t m, int64_t context);
// What one run of the layer moves: weights + cache read + the input read and the output written.
int64_t mla_layer_bytes(const MlaDims& dims, int64_t m, int64_t context);

// How the attention splits each sequence's context: `splits` chunks of `chunk` tokens (a multiple of tile; the
// last one shorter), every chunk non-empty. Enough chunks for about four waves of `slots` CTAs (CTAs resident
// on the device at once) over m sequences x head_groups, at most 256 per sequence.
constexpr int64_t kMlaAttentionTile = 32;  // tokens per step of the attention's online softmax (both backends)
struct MlaSplit {
  int64_t splits = 1, chunk = 0;
};
MlaSplit mla_split(int64_t m, int64_t context, int64_t head_groups, int64_t slots, int64_t tile);

// --context: a comma list of positive integers ("512,2048,8192"); an Error names a bad item.
std::vector<int64_t> parse_contexts(const std::string& spec);

// The operations between the GEMMs, as each backend runs them on one stream. Pointers are the backend's memory;
// strides are in elements.

// y[r, 0:width] = bf16(x[r, 0:width] · rsqrt(mean(x[r]^2) + eps) · gamma), and y[r, width:width+tail] =
// x[r, width:width+tail] (the kv append copies k_rope after the normed latent), for r < rows.
struct MlaNormArgs {
  const void* x = nullptr;
  int64_t ldx = 0;
  void* y = nullptr;
  int64_t ldy = 0;
  const void* gamma = nullptr;
  int64_t rows = 0, width = 0, tail = 0;
  double eps = 1e-6;
};

// Per head h < heads: y[t, h·y_head + j] = bf16(σ · Σ_i x[t, h·x_head + i] · w[h][j][i]) for j < n, i < k, t < m,
// where σ = sigmoid(gate[t, h·n + j]) when gate is set, else 1. (W_UK absorb: x = q, n = kv_lora, k = nope;
// W_UV + gate: x = o_lat, n = v_dim, k = kv_lora.)
struct MlaHeadProjArgs {
  const void* x = nullptr;
  int64_t ldx = 0, x_head = 0;
  const void* w = nullptr;  // [heads][n][k]
  void* y = nullptr;
  int64_t ldy = 0, y_head = 0;
  const void* gate = nullptr;
  int64_t ldg = 0;
  int64_t m = 0, heads = 0, n = 0, k = 0;
};

// Absorbed MLA decode attention: for token t and head h, over the cache rows s < context of sequence t,
// score_s = scale · (q_lat[t, h] · cache[t][s][0:kv_lora] + q[t, h·q_head + rope_offset : +rope] ·
// cache[t][s][kv_lora:]); o_lat[t, h] = bf16(Σ_s softmax(score)_s · cache[t][s][0:kv_lora]).
struct MlaAttentionArgs {
  const void* q_lat = nullptr;
  int64_t ld_qlat = 0;  // [m, heads·kv_lora]
  const void* q = nullptr;
  int64_t ld_q = 0, q_head = 0, rope_offset = 0;
  const void* cache = nullptr;
  int64_t seq_stride = 0;  // elements from one sequence's cache to the next; rows are cache_row wide
  void* o_lat = nullptr;
  int64_t ld_olat = 0;
  int64_t m = 0, context = 0, heads = 0, kv_lora = 0, rope = 0;
  double scale = 0;
};

}  // namespace skinnygemm::tune
