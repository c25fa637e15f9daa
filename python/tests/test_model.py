"""A real model from transformers with its Linear layers swapped to SkinnyLinear (issue 7; docs/torch.md).

The GPU tests build a DeepSeek-V3-style model from its config (python/bench_model.py: real widths, 2 layers, random
bf16 weights, on CUDA), deep-copy it, swap_linears the copy, and compare the logits of both on a prefill and one
decode step. They skip, with the reason, where transformers is not importable, where it has no MLA/MoE model
(DeepseekV3, else DeepseekV2), or where there is no GPU; SKINNYGEMM_TORCH_REQUIRE_GPU=1 (scripts/gpu-check) makes a
missing GPU a failure, but not a missing transformers.

The CPU test runs bench_model's comparison and timing pipeline on a small transformers-shaped toy model, so that the
script's own logic is checked where there is no GPU and no transformers.
"""
import importlib.util
import json
import math
import os
from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import skinnygemm_torch as sg

_BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench_model.py")
_spec = importlib.util.spec_from_file_location("skinnygemm_bench_model", _BENCH)
bm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bm)

# Tolerances (stock model vs the same weights after swap_linears, both bf16):
# - REL_TOL, relative Frobenius error of the logits over the compared tokens. Each swapped GEMM matches cuBLAS within
#   the library's bf16 bound (8e-3 vs FP32, test_ops.py) and in practice differs from it by bf16 rounding of the
#   output (1 ulp = 2^-8 relative on some elements, ~2-4e-3 in Frobenius norm). A token's logits pass through about a
#   dozen swapped GEMMs (q_a, q_b, kv_a, kv_b, o per layer; gate/up/down of the dense and shared-expert MLPs; lm_head)
#   with RMSNorms between, which do not amplify relative error; independent errors of ~3e-3 add up to about
#   sqrt(12) * 3e-3 ~ 1e-2. 2e-2 leaves a factor 2 over that, while a wrong kernel (bad tile, layout, stride) gives
#   errors of order 1.
# - Routing: a token whose router input sits near a tie between its k-th and (k+1)-th expert can be routed to other
#   experts after a rounding-sized change; its logits then differ by O(1), legitimately. With sigmoid scores spread
#   ~0.3 over 8 experts and score changes ~1e-3, about 1-2% of tokens are expected to flip. Flipped tokens (found by
#   recording each router's choice in both models) are left out of the error and argmax checks, and at most
#   max(1, 10%) of the tokens may flip. With 2 layers the only MoE layer is the last one, after its attention, so a
#   flip changes that token's logits alone.
# - Argmax: the random model's logits have std ~1.7 over 32000 entries, so the top-2 gap is ~0.4 on average; a
#   perturbation of ~1e-2 relative (~0.02 absolute) changes the argmax of a few % of tokens. At most max(1, 10%) of
#   the compared tokens may disagree.
REL_TOL = 2e-2
FRACTION = 0.10
PROMPT = 6  # prompt tokens before the decode step
MS = [1, 4, 16]


def _allowed(n):
    return max(1, math.ceil(FRACTION * n))


def _cuda_why():
    """Why the CUDA tests cannot run here (as in test_ops.py), or None."""
    if not torch.cuda.is_available():
        return "needs torch.cuda (a GPU)"
    try:
        x = torch.zeros(1, 8, dtype=torch.bfloat16, device="cuda")
        torch.ops.skinnygemm.linear(x, x)
    except (RuntimeError, NotImplementedError) as e:  # library or extension built without CUDA
        return f"the CUDA op cannot run: {str(e).splitlines()[0]}"
    return None


CUDA_WHY = _cuda_why()
try:
    import transformers  # noqa: F401
    TRANSFORMERS_WHY = None
except Exception as e:  # noqa: BLE001 - any import failure: not usable here
    TRANSFORMERS_WHY = f"transformers not importable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"


def _skip_or_fail():
    """A missing GPU skips (fails under SKINNYGEMM_TORCH_REQUIRE_GPU=1); a missing transformers always skips."""
    if CUDA_WHY and os.environ.get("SKINNYGEMM_TORCH_REQUIRE_GPU") == "1":
        pytest.fail(f"SKINNYGEMM_TORCH_REQUIRE_GPU=1 but {CUDA_WHY}")
    why = "; ".join(w for w in (CUDA_WHY, TRANSFORMERS_WHY) if w)
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def models():
    _skip_or_fail()
    try:
        cfg, model_type = bm.make_config()
        stock = bm.build_model(cfg, "cuda", torch.bfloat16, seed=0)
    except bm.ModelUnavailable as e:
        pytest.skip(str(e))
    skinny, report = bm.swapped_copy(stock)
    yield SimpleNamespace(stock=stock, skinny=skinny, report=report, model_type=model_type, config=stock.config)
    del stock, skinny
    torch.cuda.empty_cache()


# ---- GPU: the transformers model -----------------------------------------------------------------------------
def test_model_swap_report(models):
    stock, skinny, report, cfg = models.stock, models.skinny, models.report, models.config
    print(bm.describe(cfg, models.model_type))
    print(report)
    left_weights = bm.not_linear_weights(skinny)
    for name, why in left_weights:
        print(f"  not a Linear {name}: {why}")
    swapped = [n for n, _ in report.swapped]
    # every layer that is exactly nn.Linear is eligible (bf16, K % 8 == 0, contiguous) and must be swapped
    assert sorted(swapped) == bm.expected_linear_names(stock)
    assert report.left == [], report.left
    mods = dict(skinny.named_modules())
    assert all(isinstance(mods[n], sg.SkinnyLinear) for n in swapped)
    # the projections a DeepSeek-V3 / V2 model has, wherever the model has them
    want = ["lm_head"]
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        want += [p + "self_attn." + n for n in ("kv_a_proj_with_mqa", "kv_b_proj", "o_proj")]
        want += [p + "self_attn." + n for n in (("q_a_proj", "q_b_proj") if cfg.q_lora_rank else ("q_proj",))]
        mlp = p + ("mlp." if i < cfg.first_k_dense_replace else "mlp.shared_experts.")
        want += [mlp + n for n in ("gate_proj", "up_proj", "down_proj")]
    missing = [n for n in want if n not in swapped]
    assert not missing, f"not swapped: {missing}"
    # the routed experts: nn.Linear in a ModuleList (swapped) or fused 3-D Parameters (left, reported)
    left_names = [n for n, _ in left_weights]
    for i in range(cfg.first_k_dense_replace, cfg.num_hidden_layers):
        p = f"model.layers.{i}.mlp.experts."
        assert any(n.startswith(p) for n in swapped + left_names), f"layer {i}: its routed experts are unaccounted"
    assert "model.embed_tokens.weight" in left_names


@pytest.mark.parametrize("m", MS)
def test_model_logits_match(models, m):
    stock, skinny, cfg = models.stock, models.skinny, models.config
    prompt, step_ids = bm.inputs(cfg.vocab_size, m, PROMPT, seed=1, device="cuda")
    ref = bm.prefill_and_step(stock, prompt, step_ids)
    rows_seen = []
    hooks = [mod.register_forward_pre_hook(lambda mod, args: rows_seen.append(args[0].numel() // mod.in_features))
             for mod in skinny.modules() if isinstance(mod, sg.SkinnyLinear)]
    try:
        got = bm.prefill_and_step(skinny, prompt, step_ids)
    finally:
        for h in hooks:
            h.remove()
    # the decode step fed its M tokens (<= max_m = 64) to the swapped layers, so they ran the skinnygemm op
    assert m in rows_seen and m <= 64, rows_seen

    routers = bm.find_routers(stock)
    lines, kept_total, disagree_total, rows_total, flips_total = [], 0, 0, 0, 0
    for phase, r, g, rr, gr in (("prefill", ref[0], got[0], ref[2], got[2]),
                                ("decode", ref[1], got[1], ref[3], got[3])):
        rows = r.numel() // r.shape[-1]
        flips = bm.routing_flips(rr, gr, rows)
        if routers:
            assert flips is not None, f"{phase}: the routers {[n for n, _ in routers]} recorded nothing"
        c = bm.compare_logits(r, g, flips)
        n_flips = 0 if flips is None else int(flips.sum())
        lines.append(f"{phase}: {rows} tokens, routing flips {n_flips}, rel err {c['rel_err']:.3e} "
                     f"(all tokens {c['rel_err_all']:.3e}), argmax disagree {c['argmax_disagree']}/{c['kept']}")
        assert c["finite"], lines[-1]
        assert c["rel_err"] <= REL_TOL, "; ".join(lines)
        kept_total += c["kept"]
        disagree_total += c["argmax_disagree"]
        rows_total += rows
        flips_total += n_flips
    print(f"M={m}: " + "; ".join(lines))
    assert flips_total <= _allowed(rows_total), "; ".join(lines)
    assert disagree_total <= _allowed(kept_total), "; ".join(lines)


# ---- CPU: bench_model's pipeline on a toy model ----------------------------------------------------------------
class _ToyCache:
    """DynamicCache's behaviour that bench_model relies on: grows per update, crop(n)."""

    def __init__(self):
        self.kv = {}

    def update(self, i, kv):
        self.kv[i] = kv if i not in self.kv else torch.cat([self.kv[i], kv], dim=1)
        return self.kv[i]

    def get_seq_length(self):
        return next(iter(self.kv.values())).shape[1] if self.kv else 0

    def crop(self, n):
        self.kv = {i: v[:, :n] for i, v in self.kv.items()}


class _ToyNorm(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight.float()).to(x.dtype)


class _ToyMLP(nn.Module):
    def __init__(self, h, i):
        super().__init__()
        self.gate_proj, self.up_proj = nn.Linear(h, i, bias=False), nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class _ToyRouter(nn.Module):
    """DeepSeek-V3's router: a plain Parameter, F.linear in FP32, sigmoid scores + a correction bias."""

    def __init__(self, h, e):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(e, h))
        self.register_buffer("e_score_correction_bias", torch.zeros(e))

    def forward(self, x):
        return F.linear(x.reshape(-1, x.shape[-1]).float(), self.weight.float())


class _ToyMoE(nn.Module):
    """Routed experts as fused 3-D Parameters (transformers >= 5 style) plus a shared expert."""

    def __init__(self, h, i, e, k):
        super().__init__()
        self.k = k
        self.gate = _ToyRouter(h, e)
        self.experts = nn.Module()
        self.experts.gate_up_proj = nn.Parameter(torch.empty(e, 2 * i, h))
        self.experts.down_proj = nn.Parameter(torch.empty(e, h, i))
        self.shared_experts = _ToyMLP(h, i)

    def forward(self, x):
        t = x.reshape(-1, x.shape[-1])
        scores = self.gate(x).sigmoid()
        idx = (scores + self.gate.e_score_correction_bias.float()).topk(self.k, dim=-1).indices
        w = scores.gather(1, idx)
        w = w / w.sum(-1, keepdim=True)
        out = torch.zeros(t.shape, dtype=torch.float32)
        for j in range(self.k):
            gu = torch.bmm(self.experts.gate_up_proj[idx[:, j]].float(), t.float().unsqueeze(-1)).squeeze(-1)
            g, u = gu.chunk(2, dim=-1)
            d = torch.bmm(self.experts.down_proj[idx[:, j]].float(), (F.silu(g) * u).unsqueeze(-1)).squeeze(-1)
            out += w[:, j:j + 1] * d
        return (out.to(x.dtype) + self.shared_experts(t)).reshape(x.shape)


class _ToyAttention(nn.Module):
    def __init__(self, h, layer):
        super().__init__()
        self.layer, self.h = layer, h
        self.q_proj, self.kv_proj = nn.Linear(h, h, bias=False), nn.Linear(h, 2 * h, bias=False)
        self.o_proj = nn.Linear(h, h, bias=False)

    def forward(self, x, cache, past):
        q, kv = self.q_proj(x).float(), self.kv_proj(x)
        if cache is not None:
            kv = cache.update(self.layer, kv)
        k, v = kv.float().chunk(2, dim=-1)
        qpos = past + torch.arange(x.shape[1])
        att = (q @ k.transpose(1, 2)) / math.sqrt(self.h)
        att = att.masked_fill(torch.arange(k.shape[1])[None, :] > qpos[:, None], float("-inf")).softmax(-1)
        return self.o_proj((att @ v).to(x.dtype))


class _ToyLM(nn.Module):
    """Shaped like a transformers causal LM: .config, model.layers.N.{self_attn, mlp}, lm_head; forward(input_ids,
    past_key_values, use_cache) -> .logits, .past_key_values. Layer 0 dense, the others MoE."""

    def __init__(self, h=64, i=64, e=4, k=2, vocab=96, layers=2):
        super().__init__()
        self.config = SimpleNamespace(n_routed_experts=e, num_experts_per_tok=k, vocab_size=vocab)
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, h)
        self.model.layers = nn.ModuleList()
        for li in range(layers):
            layer = nn.Module()
            layer.input_layernorm, layer.post_attention_layernorm = _ToyNorm(h), _ToyNorm(h)
            layer.self_attn = _ToyAttention(h, li)
            layer.mlp = _ToyMLP(h, 2 * i) if li == 0 else _ToyMoE(h, i, e, k)
            self.model.layers.append(layer)
        self.model.norm = _ToyNorm(h)
        self.lm_head = nn.Linear(h, vocab, bias=False)

    def forward(self, input_ids, past_key_values=None, use_cache=True, cache_position=None, **kwargs):
        if past_key_values is None and use_cache:
            past_key_values = _ToyCache()
        past = past_key_values.get_seq_length() if past_key_values is not None else 0
        x = self.model.embed_tokens(input_ids)
        for layer in self.model.layers:
            x = x + layer.self_attn(layer.input_layernorm(x), past_key_values, past)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return SimpleNamespace(logits=self.lm_head(self.model.norm(x)), past_key_values=past_key_values)


def test_bench_pipeline_on_a_toy_model_cpu(tmp_path):
    torch.manual_seed(0)
    stock = _ToyLM().to(torch.bfloat16)
    bm.init_random_(stock, seed=3, std=0.1)
    stock.eval()
    stock.requires_grad_(False)
    skinny, report = bm.swapped_copy(stock)
    assert sorted(n for n, _ in report.swapped) == bm.expected_linear_names(stock)
    assert "lm_head" in [n for n, _ in report.swapped] and report.left == []
    left = dict(bm.not_linear_weights(skinny))
    assert set(left) == {"model.embed_tokens.weight", "model.layers.1.mlp.gate.weight",
                         "model.layers.1.mlp.experts.gate_up_proj", "model.layers.1.mlp.experts.down_proj"}
    assert "3-D" in left["model.layers.1.mlp.experts.gate_up_proj"] and "embedding" in left["model.embed_tokens.weight"]
    assert [n for n, _ in bm.find_routers(stock)] == ["model.layers.1.mlp.gate"]

    # the test's comparison on the toy: prefill + one step, routing recorded
    prompt, step_ids = bm.inputs(96, 3, 5, seed=0, device="cpu")
    ref, got = bm.prefill_and_step(stock, prompt, step_ids), bm.prefill_and_step(skinny, prompt, step_ids)
    assert ref[0].shape == (3, 5, 96) and ref[1].shape == (3, 1, 96)
    for r, g, rr, gr in ((ref[0], got[0], ref[2], got[2]), (ref[1], got[1], ref[3], got[3])):
        flips = bm.routing_flips(rr, gr, r.numel() // 96)
        assert flips is not None and flips.dtype == torch.bool
        c = bm.compare_logits(r, g, flips)
        assert c["finite"] and c["rel_err"] <= REL_TOL, c

    # the benchmark: rows, JSON, Markdown
    meta = dict(model="toy", gpu=None, context=7, iters=20, warmup=1)
    doc = bm.run_benchmark(stock, skinny, report, [1, 3], 7, "toy", meta, iters=20, warmup=1, log=lambda s: None)
    assert [r["m"] for r in doc["rows"]] == [1, 3]
    for r in doc["rows"]:
        assert r["kind"] == "torch_model" and r["context"] == 7 and r["samples"] == 20
        assert r["stock_us"] > 0 and r["skinny_us"] > 0 and r["speedup"] > 0
        assert r["stock_cache"] == r["skinny_cache"] == "dynamic" and r["stock_mode"] == "eager"
        assert r["logits_rel_err"] <= REL_TOL and r["routing_flips"] is not None
        assert len(r["swapped"]) == len(report.swapped) and len(r["left"]) == 4
    path = tmp_path / "torch_model.json"
    path.write_text(json.dumps(doc))
    assert json.loads(path.read_text())["rows"][1]["m"] == 3
    md = bm.render_markdown(doc)
    assert "| M | stock µs |" in md and "\n| 3 |" in md and "## Left as they are (4)" in md
    assert "Largest kernels" not in md  # no CUDA profile on the CPU

    # the per-kernel table the GPU profile feeds it: totals per step, largest first, long names cut
    events = [("gemm_a", 10.0), ("norm", 1.0), ("gemm_a", 12.0), ("x" * 120, 4.0), ("norm", 1.0)]
    table = bm.kernel_table(events, steps=2, top=2, width=20)
    assert [k["name"] for k in table] == ["gemm_a", "x" * 17 + "..."]
    assert table[0]["us"] == 11.0 and table[0]["count"] == 1.0
    doc["rows"][0]["skinny_kernels"] = table
    assert "- 11.0 µs, 1x `gemm_a`" in bm.render_markdown(doc)


def test_compare_and_flips():
    ref = torch.tensor([[1.0, 2.0, 3.0], [3.0, 1.0, 0.0], [0.0, 5.0, 1.0]])
    out = ref.clone()
    out[1] = torch.tensor([0.0, 9.0, 0.0])  # a flipped token: far off, other argmax
    a = {"g": torch.tensor([[0, 1], [0, 2], [1, 2]])}
    b = {"g": torch.tensor([[0, 1], [1, 2], [1, 2]])}
    flips = bm.routing_flips(a, b, 3)
    assert flips.tolist() == [False, True, False]
    c = bm.compare_logits(ref, out, flips)
    assert c["rel_err"] == 0.0 and c["argmax_disagree"] == 0 and c["kept"] == 2 and c["rel_err_all"] > 0.5
    c = bm.compare_logits(ref, out)
    assert c["argmax_disagree"] == 1 and c["rel_err"] > 0.5
    assert bm.routing_flips(a, {"h": b["g"]}, 3) is None and bm.routing_flips(None, b, 3) is None
