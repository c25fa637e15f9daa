#!/usr/bin/env python3
"""A DeepSeek-V3-style model from transformers, stock against skinnygemm_torch.swap_linears: decode-step latency and
logits (issue 7; docs/torch.md). python/tests/test_model.py uses the same model builder.

    PYTHONPATH=BUILD/pylib python3 python/bench_model.py --json OUT/torch_model.json --md OUT/torch.md
    (BUILD/pylib: where python/run_tests.sh or setup.py built skinnygemm_torch; scripts/gpu-check's torch stage
     runs exactly this with BUILD = build/torch)

The model: transformers' DeepseekV3Config (DeepseekV2Config where V3 is missing) built with AutoModelForCausalLM
.from_config, real widths (hidden 7168, q_lora_rank 1536, kv_lora_rank 512, qk 128+64, v 128, 128 heads, dense
intermediate 18432, expert intermediate 2048) at reduced depth (2 layers: one dense, one MoE), 8 routed experts
(top-2, one group) plus the shared one, vocab 32000 (DeepSeek's is 129280: a smaller lm_head), random bf16 weights
(normal(0, 0.02), norms 1, seeded), on CUDA, eval mode. The swapped model is a deep copy after swap_linears.

One decode step: a forward of M sequences x 1 new token over a KV cache of --context tokens, under
torch.inference_mode. It is captured in a CUDA graph where that is possible (a static cache that the model accepts,
and no host synchronization in the step: transformers' eager MoE loop synchronizes, so expect eager), else run
eager with CUDA events around each step (synchronized before it: what a step costs including the host's launch
work). Median of --iters steps after --warmup. The GPU busy time of a step (the sum of its kernels' durations, from
torch.profiler) is reported too, which separates the kernels' gain from the host's launch overhead.

Writes JSON (rows of kind "torch_model" and a "meta" block) and a Markdown table.
"""
import argparse
import contextlib
import copy
import datetime
import json
import math
import os
import statistics
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    # python/ holds the source package skinnygemm_torch without its built _C: keep it from shadowing the built copy
    # on PYTHONPATH (docs/torch.md).
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# ---- the model -----------------------------------------------------------------------------------------------
MODEL_TYPES = ("deepseek_v3", "deepseek_v2")  # first one transformers has wins; both are MLA + MoE
INIT_STD = 0.02  # DeepSeek-V3's initializer_range


class ModelUnavailable(RuntimeError):
    """transformers is there but has none of MODEL_TYPES (or cannot build it): the caller skips."""


def config_kwargs(layers=2, heads=128, vocab=32000, experts=8, topk=2, max_positions=4096):
    """DeepSeek-V3's widths; depth, experts, heads and vocab as given (see the module docstring)."""
    return dict(
        vocab_size=vocab, hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
        num_hidden_layers=layers, first_k_dense_replace=1,  # layer 0 dense, layers 1.. MoE
        num_attention_heads=heads, num_key_value_heads=heads,
        q_lora_rank=1536, kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
        n_routed_experts=experts, num_experts_per_tok=topk, n_shared_experts=1, n_group=1, topk_group=1,
        routed_scaling_factor=2.5, norm_topk_prob=True,
        hidden_act="silu", max_position_embeddings=max_positions, tie_word_embeddings=False, use_cache=True,
        attention_bias=False, initializer_range=INIT_STD,
    )


def transformers_version():
    try:
        import transformers
        return transformers.__version__
    except Exception:  # noqa: BLE001 - any import failure means "not usable here"
        return None


def make_config(model_type=None, **kw):
    """(config, model_type) for the first of MODEL_TYPES this transformers knows; ModelUnavailable if none."""
    from transformers import AutoConfig
    errors = []
    for mt in ([model_type] if model_type else MODEL_TYPES):
        try:
            cfg = AutoConfig.for_model(mt, **config_kwargs(**kw))
        except (ValueError, KeyError, ImportError, AttributeError) as e:
            errors.append(f"{mt}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        return cfg, mt
    raise ModelUnavailable("transformers " + str(transformers_version()) + " has no MLA/MoE model config usable "
                           "here (" + "; ".join(errors) + ")")


def _device_context(device):
    dev = torch.device(device)
    return dev if hasattr(dev, "__enter__") else contextlib.nullcontext()  # torch >= 2.0: build in place


def init_random_(model, seed=0, std=INIT_STD):
    """Every matrix normal(0, std), norm weights 1, other vectors (biases) 0, from one seeded generator: the
    weights do not depend on what the installed transformers' own init does. Buffers are left as built."""
    torch.manual_seed(seed)
    dev = next(model.parameters()).device
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, std, generator=gen)
            elif "norm" in name.lower():
                p.fill_(1.0)
            else:
                p.zero_()
    return model


def build_model(config, device="cuda", dtype=torch.bfloat16, seed=0):
    """AutoModelForCausalLM.from_config(config) on device in dtype, random weights (init_random_), eval, frozen."""
    from transformers import AutoModelForCausalLM
    try:
        with _device_context(device):
            try:
                model = AutoModelForCausalLM.from_config(config, dtype=dtype)  # transformers >= 4.56
            except TypeError:
                model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
    except ValueError as e:  # "Unrecognized configuration class" and the like
        raise ModelUnavailable(f"AutoModelForCausalLM cannot build {type(config).__name__}: {e}") from e
    model.to(device)
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.dtype != dtype:
                p.data = p.data.to(dtype)
    init_random_(model, seed)
    model.eval()
    model.requires_grad_(False)
    return model


def describe(config, model_type):
    heads = config.num_attention_heads
    return (f"{model_type} ({config.num_hidden_layers} layers: {config.first_k_dense_replace} dense + "
            f"{config.num_hidden_layers - config.first_k_dense_replace} MoE; hidden {config.hidden_size}, "
            f"{heads} heads, q_lora {config.q_lora_rank}, kv_lora {config.kv_lora_rank}, "
            f"{config.n_routed_experts} experts top-{config.num_experts_per_tok} + {config.n_shared_experts} "
            f"shared, vocab {config.vocab_size}; random bf16)")


# ---- the swap and what it leaves ---------------------------------------------------------------------------
def swapped_copy(model, **swap_kwargs):
    """(a deep copy of model with swap_linears applied, the SwapReport)."""
    import skinnygemm_torch as sg
    new = copy.deepcopy(model)
    report = sg.swap_linears(new, **swap_kwargs)
    return new, report


def not_linear_weights(model):
    """[(name, why)] for the weight matrices (2-D and up) that no nn.Linear / SkinnyLinear holds: embeddings,
    routers that are plain Parameters, fused 3-D expert weights. swap_linears never sees these."""
    import skinnygemm_torch as sg
    held = {id(m.weight) for m in model.modules() if isinstance(m, (nn.Linear, sg.SkinnyLinear))}
    owners = dict(model.named_modules())
    out = []
    for name, p in model.named_parameters():
        if p.dim() < 2 or id(p) in held:
            continue
        owner = owners.get(name.rpartition(".")[0])
        kind = type(owner).__name__ if owner is not None else "?"
        what = ("an embedding" if isinstance(owner, nn.Embedding)
                else f"{p.dim()}-D (fused expert weights)" if p.dim() >= 3 else "a plain Parameter (F.linear inside)")
        out.append((name, f"{kind} {list(p.shape)} {str(p.dtype).replace('torch.', '')}: not an nn.Linear, {what}"))
    return out


def report_lists(report, model):
    """(swapped, left) as lists of "name: text" strings: swap_linears' own report plus not_linear_weights."""
    swapped = [f"{n}: {d}" for n, d in report.swapped]
    left = [f"{n}: {r}" for n, r in report.left] + [f"{n}: {r}" for n, r in not_linear_weights(model)]
    return swapped, left


def expected_linear_names(model):
    """Names of the modules of model that are exactly nn.Linear: what swap_linears with no filter should take."""
    return sorted(n for n, m in model.named_modules() if type(m) is nn.Linear)


# ---- routing: which tokens changed experts -----------------------------------------------------------------
def find_routers(model):
    """[(name, module)]: modules named 'gate' (DeepSeek's MoE router) with a [n_routed_experts, hidden] weight."""
    n_exp = getattr(getattr(model, "config", None), "n_routed_experts", None)
    out = []
    for name, mod in model.named_modules():
        w = getattr(mod, "weight", None)
        if name.rpartition(".")[2] == "gate" and isinstance(w, torch.Tensor) and w.dim() == 2 and \
                (n_exp is None or w.shape[0] == n_exp):
            out.append((name, mod))
    return out


class RoutingRecorder:
    """Records, per router, the set of experts each token goes to (top-k of sigmoid(x W^T) + correction bias, as
    DeepSeek-V3 chooses with one group; the same order as softmax for V2's greedy routing), for as long as the
    `with` lasts. A bf16 difference in a router's input can flip a near-tie: such a token then gets different
    experts, and its logits legitimately differ by far more than rounding."""

    def __init__(self, model):
        cfg = getattr(model, "config", None)
        self.top_k = getattr(cfg, "num_experts_per_tok", None) or 2
        self.routers = find_routers(model)
        self.routes = {}
        self._handles = []

    def _hook(self, name):
        def hook(mod, args):
            if not args or not isinstance(args[0], torch.Tensor):
                return
            w = mod.weight
            x = args[0].reshape(-1, w.shape[1]).float()
            scores = F.linear(x, w.float()).sigmoid()
            bias = getattr(mod, "e_score_correction_bias", None)
            if isinstance(bias, torch.Tensor):
                scores = scores + bias.float()
            idx = scores.topk(min(self.top_k, scores.shape[-1]), dim=-1).indices.sort(dim=-1).values
            self.routes.setdefault(name, []).append(idx)
        return hook

    def __enter__(self):
        self._handles = [m.register_forward_pre_hook(self._hook(n)) for n, m in self.routers]
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles = []
        return False

    def result(self):
        """{router name: LongTensor [tokens, k]} (calls concatenated), or None where nothing was recorded."""
        if not self.routers or len(self.routes) != len(self.routers):
            return None
        return {n: torch.cat(v) for n, v in self.routes.items()}


def routing_flips(a, b, rows):
    """Bool [rows]: the tokens whose experts differ in any router between two recordings; None if unknown."""
    if a is None or b is None or set(a) != set(b):
        return None
    mask = None
    for n in a:
        if a[n].shape != b[n].shape or a[n].shape[0] != rows:
            return None
        d = (a[n] != b[n]).any(dim=-1).cpu()
        mask = d if mask is None else mask | d
    return mask


def compare_logits(ref, out, exclude=None):
    """Stock logits ref vs swapped out (any shape [..., vocab]). exclude: bool per row to leave out (tokens whose
    routing flipped). rel_err: ||out - ref||_F / ||ref||_F over the kept rows (rel_err_all: over every row);
    argmax_disagree: kept rows whose argmax differs."""
    v = ref.shape[-1]
    r, o = ref.reshape(-1, v).float().cpu(), out.reshape(-1, v).float().cpu()
    keep = torch.ones(r.shape[0], dtype=torch.bool) if exclude is None else ~exclude

    def rel(mask):
        if not bool(mask.any()):
            return 0.0
        return (o[mask] - r[mask]).norm().item() / max(r[mask].norm().item(), 1e-30)

    agree = (r.argmax(-1) == o.argmax(-1))
    return dict(rows=int(r.shape[0]), kept=int(keep.sum()), rel_err=rel(keep),
                rel_err_all=rel(torch.ones_like(keep)), argmax_disagree=int((~agree & keep).sum()),
                argmax_agree=float(agree[keep].float().mean()) if bool(keep.any()) else 1.0,
                finite=bool(torch.isfinite(o).all() and torch.isfinite(r).all()))


def prefill_and_step(model, prompt, step_ids):
    """Prefill prompt [M, P] (dynamic KV cache), then one decode step of step_ids [M, 1] over that cache.
    Returns (prefill logits, step logits, prefill routes, step routes)."""
    with torch.inference_mode():
        with RoutingRecorder(model) as rp:
            out = model(input_ids=prompt, use_cache=True)
        with RoutingRecorder(model) as rs:
            step = model(input_ids=step_ids, past_key_values=out.past_key_values, use_cache=True)
    return out.logits, step.logits, rp.result(), rs.result()


# ---- one decode step, timed ------------------------------------------------------------------------------------
def _first_line(e):
    s = str(e).strip().splitlines()
    return f"{type(e).__name__}: {s[0] if s else ''}"[:300]


def _static_cache(model, batch, max_len):
    from transformers import StaticCache
    dev, dt = next(model.parameters()).device, next(model.parameters()).dtype
    tries = (dict(config=model.config, max_batch_size=batch, max_cache_len=max_len, device=dev, dtype=dt),
             dict(config=model.config, max_cache_len=max_len))
    err = None
    for kw in tries:
        try:
            return StaticCache(**kw)
        except TypeError as e:
            err = e
    raise err


class DecodeStep:
    """A model, M sequences prefilled to `context` tokens, and step() = one forward of M new tokens over that cache
    returning the logits. A static cache when the model takes one (step() rewrites slot `context`: same work every
    call, capturable), else the dynamic cache the prefill returns, cropped back to `context` by reset() after each
    step (or, where the cache cannot crop, left to grow by one token a step: noted)."""

    def __init__(self, model, prompt, step_ids, try_static=True):
        self.model, self.step_ids = model, step_ids
        self.context = prompt.shape[1]
        dev = prompt.device
        self.cache_kind, self.notes = None, []
        self._reset = None
        with torch.inference_mode():
            if try_static:
                try:
                    cache = _static_cache(model, prompt.shape[0], self.context + 1)
                    model(input_ids=prompt, past_key_values=cache, use_cache=True,
                          cache_position=torch.arange(self.context, device=dev))
                    pos = torch.tensor([self.context], device=dev)
                    self._call = lambda: model(input_ids=step_ids, past_key_values=cache, use_cache=True,
                                               cache_position=pos).logits
                    self._call()  # the decode step runs with it, too
                    self.cache_kind = "static"
                except Exception as e:  # noqa: BLE001 - any failure: use the dynamic cache
                    self.notes.append(f"static cache: {_first_line(e)}")
            if self.cache_kind is None:
                out = model(input_ids=prompt, use_cache=True)
                cache = out.past_key_values
                self._call = lambda: model(input_ids=step_ids, past_key_values=cache, use_cache=True).logits
                crop = getattr(cache, "crop", None)
                if callable(crop):
                    self._reset = lambda: crop(self.context)
                else:
                    self.notes.append(f"{type(cache).__name__} has no crop(): the cache grows by one token a step")
                self.cache_kind = "dynamic"

    def step(self):
        return self._call()

    def reset(self):
        if self._reset is not None:
            self._reset()


def _sync_free(step):
    """None if one step runs with no host synchronization (torch.cuda.set_sync_debug_mode('error')), else why."""
    if not hasattr(torch.cuda, "set_sync_debug_mode"):
        return "torch has no set_sync_debug_mode"
    torch.cuda.synchronize()
    try:
        torch.cuda.set_sync_debug_mode("error")
        step()
        return None
    except Exception as e:  # noqa: BLE001
        return f"the step synchronizes with the host ({_first_line(e)})"
    finally:
        torch.cuda.set_sync_debug_mode("default")
        torch.cuda.synchronize()


def _capture(step):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    graph.replay()
    torch.cuda.synchronize()
    return graph, out


def kernel_table(events, steps, top=10, width=90):
    """The largest kernels of a step: [(name, us per step, launches per step)] from (name, us) device events of
    `steps` steps, largest total first; names cut to `width` characters (templated kernels run long)."""
    totals = {}
    for name, us in events:
        t = totals.setdefault(name, [0.0, 0])
        t[0] += us
        t[1] += 1
    rows = sorted(totals.items(), key=lambda kv: -kv[1][0])[:top]
    return [dict(name=name if len(name) <= width else name[:width - 3] + "...", us=t / steps, count=c / steps)
            for name, (t, c) in rows]


def _busy_profile(fn, reset, n=5):
    """(mean GPU busy time of fn, its largest kernels per step) from torch.profiler's device events, or
    (None, None) where the profiler does not work."""
    try:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(n):
                fn()
                torch.cuda.synchronize()
                reset()
        events = [(e.name, e.time_range.elapsed_us()) for e in prof.events() if e.device_type == DeviceType.CUDA]
        total = sum(us for _, us in events)
        return (total / n, kernel_table(events, n)) if total > 0 else (None, None)
    except Exception:  # noqa: BLE001 - a profiler that does not work here: no number
        return None, None


def time_step(ds, iters=30, warmup=5, graph=True, busy=True):
    """Times ds.step(). Returns dict(us=median, samples, mode, mode_note, busy_us, graph_rel_err)."""
    cuda = ds.step_ids.is_cuda
    res = dict(mode="eager", mode_note=None, busy_us=None, kernels=None, graph_rel_err=None)
    with torch.inference_mode():
        for _ in range(warmup):
            ds.step()
            ds.reset()
        run, reset = ds.step, ds.reset  # reset (the dynamic cache's crop) runs outside the timed window
        if cuda and graph:
            why = "graph capture needs a static cache" if ds.cache_kind != "static" else _sync_free(ds.step)
            if why is None:
                try:
                    want = ds.step().float()
                    g, out = _capture(ds.step)
                    err = ((out.float() - want).norm() / want.norm().clamp_min(1e-30)).item()
                    res["graph_rel_err"] = err
                    if not math.isfinite(err) or err > 1e-2:
                        why = f"the replayed graph's logits differ from eager (rel err {err:.3g})"
                    else:
                        run, reset, res["mode"] = g.replay, (lambda: None), "cuda_graph"
                except Exception as e:  # noqa: BLE001
                    why = f"capture failed: {_first_line(e)}"
                    with contextlib.suppress(Exception):
                        torch.cuda.synchronize()
            res["mode_note"] = why
        times = []
        for _ in range(iters):
            if cuda:
                torch.cuda.synchronize()
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                run()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b) * 1e3)
            else:
                t0 = time.perf_counter()
                run()
                times.append((time.perf_counter() - t0) * 1e6)
            reset()
        if cuda and busy:
            res["busy_us"], res["kernels"] = _busy_profile(run, reset)
    res["us"] = statistics.median(times)
    res["samples"] = len(times)
    return res


def inputs(vocab, m, context, seed, device):
    g = torch.Generator(device="cpu")
    g.manual_seed(seed * 1000 + m)
    prompt = torch.randint(0, vocab, (m, context), generator=g).to(device)
    step_ids = torch.randint(0, vocab, (m, 1), generator=g).to(device)
    return prompt, step_ids


def bench_m(stock, skinny, m, context, seed=0, iters=30, warmup=5, graph=True, busy=True):
    """One row: both models' decode step at M = m over a cache of `context` tokens, timed, and their logits."""
    device = next(stock.parameters()).device
    prompt, step_ids = inputs(stock.config.vocab_size, m, context, seed, device)
    row = dict(m=m, context=context)
    logits, routes = {}, {}
    for key, model in (("stock", stock), ("skinny", skinny)):
        # NOTE: the dynamic cache: with transformers 5.x a static cache ignores cache_position and advances its
        # own write index on every call, which runs past a context + 1 cache (review of 2026-11-29).
        ds = DecodeStep(model, prompt, step_ids, try_static=False)
        with torch.inference_mode():
            with RoutingRecorder(model) as rec:
                logits[key] = ds.step().float().clone()
            ds.reset()
        routes[key] = rec.result()
        t = time_step(ds, iters=iters, warmup=warmup, graph=graph, busy=busy)
        row[f"{key}_us"] = t["us"]
        row[f"{key}_busy_us"] = t["busy_us"]
        row[f"{key}_kernels"] = t["kernels"]
        row[f"{key}_mode"] = t["mode"]
        row[f"{key}_notes"] = [n for n in ds.notes + [t["mode_note"]] if n]
        row[f"{key}_cache"] = ds.cache_kind
        del ds
    flips = routing_flips(routes["stock"], routes["skinny"], m)
    cmp = compare_logits(logits["stock"], logits["skinny"], flips)
    row.update(speedup=row["stock_us"] / row["skinny_us"] if row["skinny_us"] else None,
               busy_speedup=(row["stock_busy_us"] / row["skinny_busy_us"]
                             if row["stock_busy_us"] and row["skinny_busy_us"] else None),
               logits_rel_err=cmp["rel_err"], logits_rel_err_all=cmp["rel_err_all"],
               argmax_agree=cmp["argmax_agree"], routing_flips=None if flips is None else int(flips.sum()),
               samples=iters, warmup=warmup)
    return row


# ---- output ------------------------------------------------------------------------------------------------
def _fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def render_markdown(doc):
    meta, rows = doc["meta"], doc["rows"]
    out = ["# skinnygemm_torch in a transformers model: decode-step latency, stock vs swap_linears", ""]
    out.append(f"- model: {meta.get('model')}")
    out.append(f"- GPU: {meta.get('gpu')}; torch {meta.get('torch')} (CUDA {meta.get('cuda')}); transformers "
               f"{meta.get('transformers')}; attention: {meta.get('attn_implementation')}")
    out.append(f"- revision {meta.get('revision')}; {meta.get('date')}; command: `{meta.get('command')}`")
    out.append(f"- one decode step: M sequences x 1 new token over a KV cache of {meta.get('context')} tokens, "
               f"torch.inference_mode; median of {meta.get('iters')} steps after {meta.get('warmup')} warm-up; "
               "eager steps are timed with CUDA events after a synchronize (host launch work included), "
               "GPU busy = the sum of the step's kernel durations (torch.profiler)")
    out.append("- logits: the decode step's, stock vs swapped, relative Frobenius error over the tokens whose "
               "experts did not change (routing flips: near-tie tokens routed differently)")
    out += ["", "| M | stock µs | skinny µs | speedup | stock GPU busy µs | skinny GPU busy µs | busy speedup "
            "| logits rel err | argmax agree | routing flips | mode (stock; skinny) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        out.append(f"| {r['m']} | {_fmt(r['stock_us'])} | {_fmt(r['skinny_us'])} | {_fmt(r['speedup'], 3)} "
                   f"| {_fmt(r['stock_busy_us'])} | {_fmt(r['skinny_busy_us'])} | {_fmt(r['busy_speedup'], 3)} "
                   f"| {r['logits_rel_err']:.2e} | {r['argmax_agree']:.2f} "
                   f"| {'-' if r['routing_flips'] is None else r['routing_flips']} "
                   f"| {r['stock_mode']}/{r['stock_cache']}; {r['skinny_mode']}/{r['skinny_cache']} |")
    # Where the busy time goes: the largest kernels of one step at the smallest and the largest M.
    ends = sorted({min(r["m"] for r in rows), max(r["m"] for r in rows)}) if rows else []
    for r in [r for r in rows if r["m"] in ends]:
        for key in ("stock", "skinny"):
            ks = r.get(f"{key}_kernels")
            if not ks:
                continue
            out += ["", f"Largest kernels of one {key} step at M = {r['m']} (µs per step, launches per step):", ""]
            out += [f"- {k['us']:.1f} µs, {k['count']:g}x `{k['name']}`" for k in ks]
    notes = sorted({n for r in rows for k in ("stock_notes", "skinny_notes") for n in r.get(k, [])})
    if notes:
        out += ["", "Notes (why not a CUDA graph / static cache):", ""] + [f"- {n}" for n in notes]
    if rows:
        out += ["", f"## Swapped to SkinnyLinear ({len(rows[0]['swapped'])})", ""]
        out += [f"- `{s}`" for s in rows[0]["swapped"]]
        out += ["", f"## Left as they are ({len(rows[0]['left'])})", ""]
        out += [f"- `{s}`" for s in rows[0]["left"]]
    return "\n".join(out) + "\n"


def run_benchmark(stock, skinny, report, ms, context, model_name, meta, seed=0, iters=30, warmup=5, graph=True,
                  busy=True, log=print):
    """Rows for every M, each with the swap report. Returns {"meta": meta, "rows": rows}."""
    swapped, left = report_lists(report, skinny)
    rows = []
    for m in ms:
        row = dict(kind="torch_model", model=model_name)
        row.update(bench_m(stock, skinny, m, context, seed=seed, iters=iters, warmup=warmup, graph=graph,
                           busy=busy))
        row.update(swapped=swapped, left=left)
        rows.append(row)
        log(f"M={m:3d}: stock {row['stock_us']:9.1f} us  skinny {row['skinny_us']:9.1f} us  "
            f"speedup {row['speedup']:.3f}  busy {_fmt(row['stock_busy_us'])}/{_fmt(row['skinny_busy_us'])} us  "
            f"logits rel err {row['logits_rel_err']:.2e} (all rows {row['logits_rel_err_all']:.2e})  "
            f"argmax {row['argmax_agree']:.2f}  flips {row['routing_flips']}  "
            f"[{row['stock_mode']}/{row['stock_cache']}; {row['skinny_mode']}/{row['skinny_cache']}]")
    return {"meta": meta, "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", default="1,2,4,8,16", help="decode batch sizes (comma-separated)")
    ap.add_argument("--context", type=int, default=512, help="KV cache length before the step")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=128, help="attention heads (DeepSeek-V3: 128; TP8: 16)")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--topk", type=int, default=2)
    ap.add_argument("--model-type", default=None, help=f"one of {MODEL_TYPES} (default: the first available)")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-graph", action="store_true", help="eager only (no CUDA graph attempt)")
    ap.add_argument("--no-busy", action="store_true", help="no torch.profiler GPU busy time")
    ap.add_argument("--json", default=None, help="write the rows and meta here")
    ap.add_argument("--md", default=None, help="write the Markdown table here")
    args = ap.parse_args(argv)
    if args.iters < 20:
        ap.error("--iters must be >= 20")

    tv = transformers_version()
    if tv is None:
        print("bench_model: SKIPPED: transformers not importable", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench_model: SKIPPED: needs torch.cuda (a GPU)", file=sys.stderr)
        return 2
    import skinnygemm_torch as sg

    ms = [int(v) for v in args.m.split(",") if v.strip()]
    shape = dict(layers=args.layers, heads=args.heads, vocab=args.vocab, experts=args.experts, topk=args.topk,
                 max_positions=max(4096, args.context + 1))
    cfg, mt = make_config(args.model_type, **shape)
    t0 = time.time()
    stock = build_model(cfg, "cuda", torch.bfloat16, seed=args.seed)
    skinny, report = swapped_copy(stock)
    print(f"built {describe(cfg, mt)} in {time.time() - t0:.1f} s", flush=True)
    print(report, flush=True)
    meta = dict(
        gpu=torch.cuda.get_device_name(), torch=torch.__version__, cuda=torch.version.cuda, transformers=tv,
        model=describe(cfg, mt), model_type=mt, config=config_kwargs(**shape),
        attn_implementation=getattr(stock.config, "_attn_implementation", None), context=args.context, iters=args.iters,
        warmup=args.warmup, seed=args.seed, ms=ms, skinnygemm_torch=sg.library_path,
        command=" ".join([sys.executable, sys.argv[0]] + list(sys.argv[1:] if argv is None else argv)),
        revision=os.environ.get("SKINNYGEMM_REVISION", "unknown"),
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    doc = run_benchmark(stock, skinny, report, ms, args.context, meta["model"], meta, seed=args.seed,
                        iters=args.iters, warmup=args.warmup, graph=not args.no_graph, busy=not args.no_busy,
                        log=lambda s: print(s, flush=True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    md = render_markdown(doc)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    else:
        print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
