// The MLA layer's dimensions, variants, layout and byte counts (mla.h, docs/mla.md).
#include "lab/mla.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "lab/models.h"
#include "skinnygemm/error.h"

namespace skinnygemm::tune {

namespace {

constexpr MlaVariant kVariants[] = {MlaVariant::Cublaslt, MlaVariant::SkinnySeparate, MlaVariant::SkinnyFused,
                                    MlaVariant::SkinnySideGate};

int64_t config_int(const models::ModelInfo& info, const std::string& key) {
  return models::config_int(info, key, "the MLA layer");
}

int64_t align256(int64_t v) { return (v + 255) / 256 * 256; }

}  // namespace

std::string mla_variant_name(MlaVariant variant) {
  switch (variant) {
    case MlaVariant::Cublaslt: return "cublaslt";
    case MlaVariant::SkinnySeparate: return "skinny_separate";
    case MlaVariant::SkinnyFused: return "skinny_fused";
    case MlaVariant::SkinnySideGate: return "skinny_side_gate";
  }
  return "?";
}

std::vector<MlaVariant> parse_mla_variants(const std::string& list) {
  std::vector<MlaVariant> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto* it = std::find_if(std::begin(kVariants), std::end(kVariants),
                                  [&](MlaVariant v) { return mla_variant_name(v) == item; });
    SKINNYGEMM_CHECK(it != std::end(kVariants), "unknown mla variant '" << item << "' in '" << list << "'; expected a "
                                                    << "comma list of cublaslt, skinny_separate, skinny_fused, "
                                                    << "skinny_side_gate");
    SKINNYGEMM_CHECK(std::find(out.begin(), out.end(), *it) == out.end(),
                     "mla variant '" << item << "' is listed twice in '" << list << "'");
    out.push_back(*it);
  }
  SKINNYGEMM_CHECK(!out.empty(), "the variant list is empty; expected e.g. cublaslt,skinny_fused");
  return out;
}

std::optional<FusedMode> mla_variant_mode(MlaVariant variant) {
  switch (variant) {
    case MlaVariant::Cublaslt: return std::nullopt;
    case MlaVariant::SkinnySeparate: return FusedMode::Separate;
    case MlaVariant::SkinnyFused: return FusedMode::Fused;
    case MlaVariant::SkinnySideGate: return FusedMode::SideStream;
  }
  return std::nullopt;
}

MlaVariant mla_variant_for(FusedMode mode) {
  switch (mode) {
    case FusedMode::Fused: return MlaVariant::SkinnyFused;
    case FusedMode::SideStream: return MlaVariant::SkinnySideGate;
    case FusedMode::Separate: return MlaVariant::SkinnySeparate;
  }
  return MlaVariant::SkinnySeparate;
}

double MlaDims::softmax_scale() const { return 1.0 / std::sqrt(static_cast<double>(nope + rope)); }

std::string MlaDims::name() const { return model + ".mla.tp" + std::to_string(tp); }

MlaDims mla_dims(const std::string& model, int tp, double scale) {
  SKINNYGEMM_CHECK(scale > 0 && scale <= 1, "scale " << scale << " must be in (0, 1] (1 = the real model)");
  SKINNYGEMM_CHECK(tp >= 1, "tp=" << tp << " must be >= 1");
  const models::ModelInfo info = models::model_info(model);
  MlaDims d;
  d.model = model;
  d.tp = tp;
  d.scale = scale;
  d.dtype = parse_dtype(info.dtype);
  SKINNYGEMM_CHECK(d.dtype == DType::BF16, "model " << model << " has dtype " << info.dtype
                                                    << "; the MLA layer runs BF16 only (the released checkpoint's)");
  const int64_t heads = config_int(info, "num_attention_heads");
  SKINNYGEMM_CHECK(heads % tp == 0, "model " << model << ": " << heads << " attention heads do not split over tp=" << tp
                                             << "; expected a TP degree dividing the head count");
  const auto dim = [&](int64_t v) {
    return scale == 1.0 ? v : std::max<int64_t>(8, std::llround(static_cast<double>(v) * scale / 8) * 8);
  };
  d.hidden = dim(config_int(info, "hidden_size"));
  d.heads = scale == 1.0 ? heads / tp : std::max<int64_t>(2, std::llround(static_cast<double>(heads / tp) * scale));
  d.q_lora = dim(config_int(info, "q_lora_rank"));
  d.kv_lora = dim(config_int(info, "kv_lora_rank"));
  d.rope = dim(config_int(info, "qk_rope_head_dim"));
  d.nope = dim(config_int(info, "qk_nope_head_dim"));
  d.v_dim = dim(config_int(info, "v_head_dim"));
  if (scale == 1.0) {
    // The config and the projection shapes of the same file must agree, or the benchmark would measure a layer
    // that is not the model's.
    for (const models::Projection& p : models::model_projections(model, tp, false)) {
      int64_t n = 0, k = 0;
      if (p.name == "mla.fused_qkv_a") n = d.qkv_a_rows(), k = d.hidden;
      else if (p.name == "mla.q_b_proj") n = d.q_width(), k = d.q_lora;
      else if (p.name == "mla.g_proj") n = d.g_rows(), k = d.hidden;
      else if (p.name == "mla.o_proj") n = d.hidden, k = d.gated_width();
      else continue;
      SKINNYGEMM_CHECK(p.n == n && p.k == k, "model " << model << " at tp=" << tp << ": " << p.name << " is " << p.shape()
                                                      << " but its config gives " << n << "x" << k);
    }
  }
  return d;
}

const char* mla_buffer_name(int buffer) {
  static const char* names[kMlaBufferCount] = {"x", "xn", "a", "qn", "q", "q_lat", "o_lat", "gated", "out"};
  SKINNYGEMM_CHECK(buffer >= 0 && buffer < kMlaBufferCount, "MLA buffer #" << buffer << " does not exist");
  return names[buffer];
}

int64_t mla_buffer_width(const MlaDims& d, int buffer) {
  switch (buffer) {
    case kMlaX: case kMlaXn: case kMlaOut: return d.hidden;
    case kMlaA: return d.a_width();
    case kMlaQn: return d.q_lora;
    case kMlaQ: return d.q_width();
    case kMlaQLat: case kMlaOLat: return d.heads * d.kv_lora;
    case kMlaGated: return d.gated_width();
    default: SKINNYGEMM_FAIL("MLA buffer #" << buffer << " does not exist");
  }
}

MlaWeights mla_weight_layout(const MlaDims& d) {
  const int64_t e = static_cast<int64_t>(dtype_size(d.dtype));
  MlaWeights w;
  int64_t at = 0, read = 0;
  const auto block = [&](int64_t elems) {
    const int64_t offset = at;
    at += align256(elems * e);
    read += elems * e;
    return offset;
  };
  w.qkv_a_g = block(d.a_width() * d.hidden);
  w.q_b = block(d.q_width() * d.q_lora);
  w.o = block(d.hidden * d.gated_width());
  w.uk = block(d.heads * d.kv_lora * d.nope);
  w.uv = block(d.heads * d.v_dim * d.kv_lora);
  w.gamma_in = block(d.hidden);
  w.gamma_q = block(d.q_lora);
  w.gamma_kv = block(d.kv_lora);
  w.bytes = at;
  w.read_bytes = read;
  return w;
}

std::vector<MlaFill> mla_weight_fills(const MlaDims& d) {
  const MlaWeights w = mla_weight_layout(d);
  const auto amp = [](int64_t k) { return std::sqrt(3.0 / static_cast<double>(k)); };
  return {{w.qkv_a_g, d.a_width() * d.hidden, 0, amp(d.hidden)},
          {w.q_b, d.q_width() * d.q_lora, 0, amp(d.q_lora)},
          {w.o, d.hidden * d.gated_width(), 0, amp(d.gated_width())},
          {w.uk, d.heads * d.kv_lora * d.nope, 0, amp(d.nope)},
          {w.uv, d.heads * d.v_dim * d.kv_lora, 0, amp(d.kv_lora)},
          {w.gamma_in, d.hidden, 1, 0.5},
          {w.gamma_q, d.q_lora, 1, 0.5},
          {w.gamma_kv, d.kv_lora, 1, 0.5}};
}

int64_t mla_activation_bytes(const MlaDims& d, int64_t max_m) {
  int64_t b = 0;
  for (int i = 0; i < kMlaBufferCount; ++i) b += align256(max_m * mla_buffer_width(d, i) * static_cast<int64_t>(dtype_size(d.dtype)));
  return b;
}

int64_t mla_cache_bytes(const MlaDims& d, int64_t m, int64_t context) {
  return m * context * d.cache_row() * static_cast<int64_t>(dtype_size(d.dtype));
}

int64_t mla_layer_bytes(const MlaDims& d, int64_t m, int64_t context) {
  return mla_weight_layout(d).read_bytes + mla_cache_bytes(d, m, context) +
         2 * m * d.hidden * static_cast<int64_t>(dtype_size(d.dtype));
}

MlaSplit mla_split(int64_t m, int64_t context, int64_t head_groups, int64_t slots, int64_t tile) {
  SKINNYGEMM_CHECK(m >= 1 && context >= 1 && head_groups >= 1 && slots >= 1 && tile >= 1,
                   "mla_split(m=" << m << ", context=" << context << ", head_groups=" << head_groups << ", slots="
                                  << slots << ", tile=" << tile << "): every argument must be >= 1");
  constexpr int64_t kMaxSplits = 256;
  const int64_t tiles = (context + tile - 1) / tile;
  const int64_t want = (4 * slots + m * head_groups - 1) / (m * head_groups);
  const int64_t splits = std::clamp<int64_t>(want, 1, std::min(kMaxSplits, tiles));
  MlaSplit s;
  s.chunk = (tiles + splits - 1) / splits * tile;
  s.splits = (context + s.chunk - 1) / s.chunk;  // every chunk starts before the context ends
  return s;
}

std::vector<int64_t> parse_contexts(const std::string& spec) {
  std::vector<int64_t> out;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    const bool digits = !item.empty() && item.size() < 12 &&
                        std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    SKINNYGEMM_CHECK(digits && std::stoll(item) >= 1, "context '" << item << "' in '" << spec
                                                                  << "': expected a positive whole number of tokens");
    SKINNYGEMM_CHECK(std::find(out.begin(), out.end(), std::stoll(item)) == out.end(),
                     "context " << item << " is listed twice in '" << spec << "'");
    out.push_back(std::stoll(item));
  }
  SKINNYGEMM_CHECK(!out.empty(), "no context given ('" << spec << "'); expected e.g. 512,2048,8192");
  return out;
}

}  // namespace skinnygemm::tune
