// The step model: Kimi-K3's layer structure (which projection reads which output) over the model file's
// per-rank shapes. See step.h for the layout and docs/step.md for the order and the stand-ins.
#include "lab/step.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "lab/models.h"
#include "skinnygemm/error.h"

namespace skinnygemm::tune {

std::string variant_name(StepVariant variant, bool pdl) {
  const char* base = variant == StepVariant::Cublaslt        ? "cublaslt"
                     : variant == StepVariant::CublasltTorch ? "cublaslt_torch"
                     : variant == StepVariant::Skinny        ? "skinny"
                     : variant == StepVariant::SkinnyFused   ? "skinny_fused"
                     : variant == StepVariant::CublasltFused ? "cublaslt_fused"
                                                             : "tma";
  return std::string(base) + (pdl ? "" : "_nopdl");
}

std::vector<StepVariant> parse_variants(const std::string& list) {
  std::vector<StepVariant> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    StepVariant v = StepVariant::Cublaslt;
    if (item == "skinny") v = StepVariant::Skinny;
    else if (item == "skinny_fused") v = StepVariant::SkinnyFused;
    else if (item == "tma") v = StepVariant::Tma;
    else if (item == "cublaslt_torch") v = StepVariant::CublasltTorch;
    else if (item == "cublaslt_fused") v = StepVariant::CublasltFused;
    else SKINNYGEMM_CHECK(item == "cublaslt", "unknown step variant '" << item << "' in '" << list
                                                  << "'; expected a comma list of cublaslt, cublaslt_torch, cublaslt_fused, "
                                                     "skinny, skinny_fused, tma (no-PDL twins are chosen with --pdl, not by name)");
    SKINNYGEMM_CHECK(std::find(out.begin(), out.end(), v) == out.end(), "step variant '" << item << "' is listed twice in '" << list << "'");
    out.push_back(v);
  }
  SKINNYGEMM_CHECK(!out.empty(), "the variant list is empty; expected e.g. cublaslt,skinny,skinny_fused");
  return out;
}

std::string moe_front_name(MoeFront front) { return front == MoeFront::NonEp ? "non-ep" : "ep"; }

MoeFront parse_moe_front(const std::string& name) {
  if (name == "non-ep") return MoeFront::NonEp;
  SKINNYGEMM_CHECK(name == "ep", "unknown MoE front '" << name << "'; expected ep (router + latent down fused) or non-ep "
                                                          "(router + latent down + shared gate_up fused)");
  return MoeFront::Ep;
}

int64_t StepOp::n() const {
  int64_t n = 0;
  for (const StepSegment& s : segments) n += s.n;
  return n;
}
int64_t StepOp::weight_bytes(std::size_t elem) const { return n() * k() * static_cast<int64_t>(elem); }
int64_t StepOp::bytes(int64_t m, std::size_t elem) const {
  return weight_bytes(elem) + m * (k() + n()) * static_cast<int64_t>(elem);
}

int64_t StepModel::activation_bytes(int64_t max_m) const {
  int64_t b = 0;
  for (const StepBuffer& buf : buffers) b += max_m * buf.width * static_cast<int64_t>(elem());
  return b;
}

int StepModel::buffer_index(const std::string& name) const {
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return static_cast<int>(i);
  SKINNYGEMM_FAIL("the step has no activation buffer '" << name << "'");
}

int64_t step_bytes(const std::vector<StepOp>& ops, int64_t m, std::size_t elem) {
  int64_t b = 0;
  for (const StepOp& op : ops) b += op.bytes(m, elem);
  return b;
}

StepSegment fused_as_one_gemm(const StepModel& model, const StepOp& op) {
  StepSegment whole = op.segments.at(0);
  whole.name = op.name;
  for (std::size_t i = 1; i < op.segments.size(); ++i) {
    const StepSegment& s = op.segments[i];
    SKINNYGEMM_CHECK(s.block == whole.block && s.row == whole.row + whole.n && s.y.buffer == whole.y.buffer &&
                         s.y.col == whole.y.col + whole.y.n,
                     op.name << " (layer " << op.layer << ") cannot run as one GEMM: its part " << s.name
                             << " reads rows [" << s.row << ", " << s.row + s.n << ") of block "
                             << model.blocks.at(static_cast<std::size_t>(s.block)).name << " and writes columns ["
                             << s.y.col << ", " << s.y.col + s.y.n << ") of "
                             << model.buffers.at(static_cast<std::size_t>(s.y.buffer)).name << "; expected rows "
                             << whole.row + whole.n << ".. of block "
                             << model.blocks.at(static_cast<std::size_t>(whole.block)).name << " and columns "
                             << whole.y.col + whole.y.n << ".. of "
                             << model.buffers.at(static_cast<std::size_t>(whole.y.buffer)).name
                             << ", right after the parts before it");
    whole.n += s.n;
    whole.y.n += s.y.n;
  }
  return whole;
}

std::map<std::string, int> op_counts(const std::vector<StepOp>& ops) {
  std::map<std::string, int> counts;
  for (const StepOp& op : ops) ++counts[op.name];
  return counts;
}

std::vector<std::size_t> all_reduce_points(const StepModel& model, const std::vector<StepOp>& ops) {
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const StepOp& op = ops[i];
    const bool row = std::any_of(op.segments.begin(), op.segments.end(), [](const StepSegment& s) { return s.parallel == "row"; });
    if (!row) continue;
    SKINNYGEMM_CHECK(!op.fused(), op.name << " (layer " << op.layer << ") fuses a row-parallel projection with others; "
                                          << "expected row-parallel projections to run alone (their output is all-reduced)");
    const StepSlice& y = op.segments[0].y;
    SKINNYGEMM_CHECK(y.col == 0 && y.n == model.buffers.at(static_cast<std::size_t>(y.buffer)).width,
                     op.name << " (layer " << op.layer << ") writes columns [" << y.col << ", " << y.col + y.n << ") of "
                             << model.buffers[y.buffer].name << " (width " << model.buffers[y.buffer].width
                             << "); expected whole rows, which the all-reduce sums in place");
    points.push_back(i);
  }
  return points;
}

std::vector<bool> row_parallel_blocks(const StepModel& model) {
  std::vector<bool> row(model.blocks.size(), false);
  for (const StepOp& op : model.ops_unfused)
    for (const StepSegment& s : op.segments)
      if (s.parallel == "row") row.at(static_cast<std::size_t>(s.block)) = true;
  return row;
}

void verify_order(const StepModel& model, const std::vector<StepOp>& ops) {
  std::vector<std::vector<char>> written;
  for (const StepBuffer& b : model.buffers) written.emplace_back(static_cast<std::size_t>(b.width), b.input);
  auto in_range = [&](const StepSlice& s, const StepOp& op, const char* what) {
    SKINNYGEMM_CHECK(s.buffer >= 0 && static_cast<std::size_t>(s.buffer) < model.buffers.size(),
                     op.name << " (layer " << op.layer << "): its " << what << " names buffer #" << s.buffer
                             << " of " << model.buffers.size());
    SKINNYGEMM_CHECK(s.col >= 0 && s.n > 0 && s.col + s.n <= model.buffers[s.buffer].width,
                     op.name << " (layer " << op.layer << "): its " << what << " columns [" << s.col << ", "
                             << s.col + s.n << ") lie outside buffer " << model.buffers[s.buffer].name << " of width "
                             << model.buffers[s.buffer].width);
  };
  for (const StepOp& op : ops) {
    in_range(op.x, op, "input");
    for (int64_t c = op.x.col; c < op.x.col + op.x.n; ++c)
      SKINNYGEMM_CHECK(written[op.x.buffer][c], op.name << " (layer " << op.layer << ") reads column " << c << " of "
                                                        << model.buffers[op.x.buffer].name
                                                        << ", which no earlier GEMM of the step wrote");
    for (const StepSegment& s : op.segments) {
      SKINNYGEMM_CHECK(s.k == op.k() && s.y.n == s.n, op.name << " segment " << s.name << ": k=" << s.k << ", y width "
                                                              << s.y.n << "; expected k=" << op.k() << " and n=" << s.n);
      in_range(s.y, op, "output");
      std::fill(written[s.y.buffer].begin() + s.y.col, written[s.y.buffer].begin() + s.y.col + s.y.n, 1);
    }
  }
}

namespace {

int64_t config_int(const models::ModelInfo& info, const std::string& key) {
  return models::config_int(info, key, "the step");
}

struct Builder {
  StepModel m;
  double s = 1.0;
  std::map<std::string, models::Projection> proj;
  std::vector<StepOp> unfused, fused;

  int64_t dim(int64_t v) const {
    return s == 1.0 ? v : std::max<int64_t>(8, std::llround(static_cast<double>(v) * s / 8) * 8);
  }
  const models::Projection& p(const std::string& name) const {
    auto it = proj.find(name);
    SKINNYGEMM_CHECK(it != proj.end(), "model " << m.model << " has no projection '" << name
                                                << "'; the step knows the Kimi-K3 layer structure (KDA/MLA + latent MoE)");
    return it->second;
  }
  int64_t n(const std::string& name) const { return dim(p(name).n); }
  int64_t k(const std::string& name) const { return dim(p(name).k); }
  std::string fusion(const std::vector<std::string>& parts) const {
    for (const auto& [name, f] : proj)
      if (f.fused_parts == parts) return name;
    std::string names;
    for (const std::string& part : parts) names += (names.empty() ? "" : " + ") + part;
    SKINNYGEMM_FAIL("model " << m.model << " has no fusion of " << names << "; expected an entry of models/" << m.model
                              << ".json \"fusions\" with these parts in this order");
  }
  int block(const std::string& name, int layer, int64_t rows, int64_t kk) {
    m.blocks.push_back({name + "@" + std::to_string(layer), layer, rows, kk, m.arena_bytes});
    m.arena_bytes += (rows * kk * static_cast<int64_t>(m.elem()) + 255) / 256 * 256;
    return static_cast<int>(m.blocks.size()) - 1;
  }
  StepSlice slice(const char* buffer, int64_t col, int64_t width) const { return {m.buffer_index(buffer), col, width}; }
  StepSegment seg(const std::string& name, int blk, int64_t row, StepSlice y) const {
    const int64_t kk = k(name);
    return {name, n(name), kk, blk, row, y, p(name).parallel};
  }
  // A projection that reads the hidden state (K must be the hidden size) or writes it (N must be).
  void check_hidden(const std::string& name, bool reads) const {
    const int64_t v = reads ? k(name) : n(name);
    SKINNYGEMM_CHECK(v == m.hidden, name << " has " << (reads ? "K=" : "N=") << v << " but the step's hidden state is "
                                         << m.hidden << " wide; expected equal (it " << (reads ? "reads" : "writes") << " it)");
  }
  StepOp op(const std::string& name, const std::string& kind, int layer, StepSlice x, std::vector<StepSegment> segs) {
    return {name, kind, layer, x, std::move(segs)};
  }
  // One projection as its own op in both variants.
  void single(const std::string& name, const std::string& kind, int layer, StepSlice x, StepSlice y) {
    const int blk = block(name, layer, n(name), k(name));
    const StepOp o = op(name, kind, layer, x, {seg(name, blk, 0, y)});
    unfused.push_back(o);
    fused.push_back(o);
  }
};

}  // namespace

StepModel build_step_model(const std::string& model, int tp, double scale, MoeFront moe_front) {
  SKINNYGEMM_CHECK(scale > 0 && scale <= 1, "scale " << scale << " must be in (0, 1] (1 = the real model)");
  const models::ModelInfo info = models::model_info(model);
  Builder b;
  b.s = scale;
  b.m.model = model;
  b.m.tp = tp;
  b.m.scale = scale;
  b.m.moe_front = moe_front;
  b.m.dtype = parse_dtype(info.dtype);
  for (const auto& pr : models::model_projections(model, tp, true)) b.proj[pr.name] = pr;
  const int layers = static_cast<int>(config_int(info, "num_hidden_layers"));
  const int dense_layers = static_cast<int>(config_int(info, "dense_layers"));
  b.m.layers = scale == 1.0 ? layers : std::max(6, static_cast<int>(std::lround(layers * scale)));
  b.m.hidden = b.dim(config_int(info, "hidden_size"));
  const int64_t qkvg = b.n("kda.qkvg"), fab = b.n("kda.fab");
  // Rounding each width separately may make the packed in_proj shorter than QKVG + [f_a|b] (then f_b would read
  // columns it never wrote): the packed in_proj gets the longer of the two.
  const int64_t kda_in = std::max(b.n("kda.in_proj_qkvgfab"), qkvg + fab);
  const bool non_ep = moe_front == MoeFront::NonEp;
  b.m.buffers = {{"hidden", b.m.hidden, true},
                 {"mla.a", b.n("mla.fused_qkv_a") + b.n("mla.g_proj"), false},
                 {"mla.q", b.n("mla.q_b_proj"), false},
                 {"kda.in", kda_in, false},
                 {"kda.f", b.n("kda.f_b_proj"), false},
                 {"moe.a", b.n("moe.router") + b.n("moe.latent_down") + (non_ep ? b.n("shared.gate_up") : 0), false},
                 {"moe.up", b.n("moe.latent_up"), false},
                 {"dense.gu", b.n("dense.gate_up"), false},
                 {"logits", b.n("lm_head"), false}};
  // non-ep: the shared experts' gate_up writes the columns after router + latent down in moe.a (one fused GEMM).
  if (!non_ep)
    b.m.buffers.insert(b.m.buffers.begin() + b.m.buffer_index("moe.up") + 1, {"shared.gu", b.n("shared.gate_up"), false});
  for (const char* r : {"mla.fused_qkv_a", "mla.g_proj", "kda.in_proj_qkvgfab", "moe.router", "moe.latent_down",
                        "shared.gate_up", "dense.gate_up", "lm_head"})
    b.check_hidden(r, true);
  for (const char* w : {"mla.o_proj", "kda.o_proj", "shared.down", "dense.down"}) b.check_hidden(w, false);
  const StepSlice hidden = b.slice("hidden", 0, b.m.hidden);
  int mla = 0, kda = 0, moe = 0, dense = 0;
  for (int l = 1; l <= b.m.layers; ++l) {
    // full_attn_layers = [4, 8, ..., 88, 92, 93] (1-based): MLA at every 4th layer and at the last one.
    if (l % 4 == 0 || l == b.m.layers) {
      ++mla;
      const int64_t qa = b.n("mla.fused_qkv_a");
      const int ag = b.block("mla.qkv_a_g", l, qa + b.n("mla.g_proj"), b.m.hidden);
      const StepSegment sa = b.seg("mla.fused_qkv_a", ag, 0, b.slice("mla.a", 0, qa));
      const StepSegment sg = b.seg("mla.g_proj", ag, qa, b.slice("mla.a", qa, b.n("mla.g_proj")));
      const int qb = b.block("mla.q_b_proj", l, b.n("mla.q_b_proj"), b.k("mla.q_b_proj"));
      const StepOp q_b = b.op("mla.q_b_proj", "mla", l, b.slice("mla.a", 0, b.k("mla.q_b_proj")),
                              {b.seg("mla.q_b_proj", qb, 0, b.slice("mla.q", 0, b.n("mla.q_b_proj")))});
      // o_proj reads the gated attention output, which has the gate's width: the gate's columns stand in.
      const int o = b.block("mla.o_proj", l, b.n("mla.o_proj"), b.k("mla.o_proj"));
      const StepOp o_proj = b.op("mla.o_proj", "mla", l, b.slice("mla.a", qa, b.k("mla.o_proj")),
                                 {b.seg("mla.o_proj", o, 0, hidden)});
      b.unfused.insert(b.unfused.end(), {b.op("mla.fused_qkv_a", "mla", l, hidden, {sa}), q_b,
                                         b.op("mla.g_proj", "mla", l, hidden, {sg}), o_proj});
      b.fused.insert(b.fused.end(), {b.op(b.fusion({"mla.fused_qkv_a", "mla.g_proj"}), "mla", l, hidden, {sa, sg}),
                                     q_b, o_proj});
    } else {
      ++kda;
      const int in = b.block("kda.in_proj", l, kda_in, b.m.hidden);
      StepSegment packed = b.seg("kda.in_proj_qkvgfab", in, 0, b.slice("kda.in", 0, kda_in));
      packed.n = kda_in;  // = the file's in_proj rows at scale 1 (at every TP); see kda_in above
      b.unfused.push_back(b.op(packed.name, "kda", l, hidden, {packed}));
      b.fused.push_back(b.op(b.fusion({"kda.qkvg", "kda.fab"}), "kda", l, hidden,
                             {b.seg("kda.qkvg", in, 0, b.slice("kda.in", 0, qkvg)),
                              b.seg("kda.fab", in, qkvg, b.slice("kda.in", qkvg, fab))}));
      // f_b reads the f_a columns (right after QKVG); o_proj the gated output, which has g's width: the g
      // columns (the last of QKVG) stand in.
      b.single("kda.f_b_proj", "kda", l, b.slice("kda.in", qkvg, b.k("kda.f_b_proj")),
               b.slice("kda.f", 0, b.n("kda.f_b_proj")));
      b.single("kda.o_proj", "kda", l, b.slice("kda.in", qkvg - b.k("kda.o_proj"), b.k("kda.o_proj")), hidden);
    }
    if (l <= dense_layers) {
      ++dense;
      b.single("dense.gate_up", "dense", l, hidden, b.slice("dense.gu", 0, b.n("dense.gate_up")));
      // down reads SiTU(gate) * up, half of gate_up's width: the first half stands in.
      b.single("dense.down", "dense", l, b.slice("dense.gu", 0, b.k("dense.down")), hidden);
    } else {
      ++moe;
      // The MoE front: router + latent down in one block (and one fused op), the shared gate_up's rows after them in
      // the same block with non-ep, in a block of its own with ep.
      const int64_t router = b.n("moe.router"), down = b.n("moe.latent_down"), gu = b.n("shared.gate_up");
      const StepSlice gate_up_out = non_ep ? b.slice("moe.a", router + down, gu) : b.slice("shared.gu", 0, gu);
      const int blk = b.block(non_ep ? "moe.router_latent_down_shared" : "moe.router_latent_down", l,
                              router + down + (non_ep ? gu : 0), b.m.hidden);
      std::vector<StepSegment> front = {b.seg("moe.router", blk, 0, b.slice("moe.a", 0, router)),
                                        b.seg("moe.latent_down", blk, router, b.slice("moe.a", router, down))};
      if (non_ep) front.push_back(b.seg("shared.gate_up", blk, router + down, gate_up_out));
      std::vector<std::string> parts;
      for (const StepSegment& s : front) {
        b.unfused.push_back(b.op(s.name, "moe", l, hidden, {s}));
        parts.push_back(s.name);
      }
      b.fused.push_back(b.op(b.fusion(parts), "moe", l, hidden, front));
      // latent up reads the routed experts' latent output (experts are not in the step): latent down's stands in.
      b.single("moe.latent_up", "moe", l, b.slice("moe.a", router, b.k("moe.latent_up")),
               b.slice("moe.up", 0, b.n("moe.latent_up")));
      if (!non_ep) b.single("shared.gate_up", "moe", l, hidden, gate_up_out);
      // down reads SiLU(gate) * up, half of gate_up's width: the gate columns stand in.
      b.single("shared.down", "moe", l, {gate_up_out.buffer, gate_up_out.col, b.k("shared.down")}, hidden);
    }
  }
  b.single("lm_head", "head", b.m.layers + 1, hidden, b.slice("logits", 0, b.n("lm_head")));
  if (scale == 1.0) {  // the derived pattern must reproduce the file's counts
    const std::pair<const char*, int> kinds[] = {{"mla_layers", mla}, {"kda_layers", kda}, {"moe_layers", moe}, {"dense_layers", dense}};
    for (const auto& [key, got] : kinds)
      SKINNYGEMM_CHECK(config_int(info, key) == got, "the step's layer pattern gives " << got << " " << key << " but "
                                                          << model << " says " << config_int(info, key));
  }
  const auto counts = op_counts(b.unfused);
  for (const auto& [name, pr] : b.proj) {
    if (!pr.in_step || pr.fused()) continue;
    const auto it = counts.find(name);
    SKINNYGEMM_CHECK(it != counts.end(), "the step does not place in-step projection " << name << " of " << model);
    SKINNYGEMM_CHECK(scale != 1.0 || it->second == pr.count, name << " runs " << it->second << " times in the step but "
                                                                  << model << " says count=" << pr.count);
  }
  verify_order(b.m, b.unfused);
  verify_order(b.m, b.fused);
  all_reduce_points(b.m, b.unfused);  // throws now, not in a multi-GPU run, when the layout cannot be reduced
  all_reduce_points(b.m, b.fused);
  for (const StepOp& op : b.fused)  // likewise for the cublaslt_fused variant's single GEMMs
    if (op.fused()) fused_as_one_gemm(b.m, op);
  b.m.ops_unfused = std::move(b.unfused);
  b.m.ops_fused = std::move(b.fused);
  return b.m;
}

std::vector<StepOp> StepModel::ops(StepVariant variant) const {
  return runs_fused_ops(variant) ? ops_fused : ops_unfused;
}

bool runs_fused_ops(StepVariant variant) {
  return variant == StepVariant::SkinnyFused || variant == StepVariant::CublasltFused;
}

MemoryFit memory_fit(const std::string& model, int tp, double scale, int64_t free_bytes) {
  auto gb = [](int64_t b) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << static_cast<double>(b) / 1e9 << " GB";
    return os.str();
  };
  MemoryFit fit;
  fit.tp = tp;
  fit.free = free_bytes;
  std::ostringstream msg;
  for (int t : models::model_info(model).tps) {
    const StepModel m = build_step_model(model, t, scale);
    const int64_t needed = m.arena_bytes + m.activation_bytes(64) + kStepReserveBytes;
    if (t == tp) {
      fit.weights = m.arena_bytes;
      fit.needed = needed;
      fit.fits = needed <= free_bytes;
      msg << "the step at TP" << tp << " needs " << gb(needed) << " per rank (" << gb(m.arena_bytes) << " weights + "
          << gb(m.activation_bytes(64)) << " activations + " << gb(kStepReserveBytes) << " reserve) and "
          << gb(free_bytes) << " are free";
    }
    if (needed <= free_bytes && (!fit.smallest_tp || t < fit.smallest_tp)) fit.smallest_tp = t;
  }
  SKINNYGEMM_CHECK(fit.needed > 0, "model " << model << " has no shapes for tp " << tp);
  if (!fit.fits)
    msg << ": it does not fit; "
        << (fit.smallest_tp ? "the smallest TP that fits is TP" + std::to_string(fit.smallest_tp)
                            : std::string("no TP degree of ") + model + " fits");
  fit.message = msg.str();
  return fit;
}

}  // namespace skinnygemm::tune
