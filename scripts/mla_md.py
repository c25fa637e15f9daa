#!/usr/bin/env python3
"""Render `skinnygemm mla --json` results (rows of kind "mla_layer", docs/mla.md) as Markdown plus a heat map (PNG)
of the best skinny variant's gain over cuBLASLt per (M, context).

    scripts/mla_md.py build/gpu-out/mla_layer.json --out-dir docs/benchmarks/h200
        -> docs/benchmarks/h200/mla_layer.md and docs/benchmarks/h200/mla_layer_gain.png

The best skinny variant at a point is the policy's pick ("policy_choice"); its gain is cuBLASLt's µs / its µs.
The summary checks the issue's acceptance: the pick within 2% of the best variant measured at the point (cuBLASLt
included), and no point slower than cuBLASLt.
"""
import argparse
import json
import math
import os
import sys

VARIANTS = ["cublaslt", "skinny_separate", "skinny_fused", "skinny_side_gate"]
SHORT = {"skinny_separate": "sep", "skinny_fused": "fused", "skinny_side_gate": "side"}


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import TwoSlopeNorm
        return plt, TwoSlopeNorm
    except ImportError:
        sys.exit("mla_md.py: matplotlib is needed for the heat map; install it (apt-get install python3-matplotlib, "
                 "or pip install matplotlib) and run again")


def ctx_label(c):
    return f"{c // 1024}K" if c >= 1024 and c % 1024 == 0 else str(c)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    rows = [r for r in doc.get("rows", []) if r.get("kind") == "mla_layer"]
    if not rows:
        sys.exit(f"mla_md.py: {path} has no rows of kind \"mla_layer\"; expected the output of `skinnygemm mla --json`")
    return doc, rows


def grid(rows):
    """{(m, context): {variant: row}} and the sorted axes."""
    points = {}
    for r in rows:
        points.setdefault((r["m"], r["context"]), {})[r["variant"]] = r
    ms = sorted({m for m, _ in points})
    contexts = sorted({c for _, c in points})
    return points, ms, contexts


def us(row):
    return row.get("us") if row and "error" not in row else None


def heat_map(plt, norm_cls, points, choice, ms, contexts, png, title):
    gain = [[math.nan] * len(contexts) for _ in ms]
    labels = [[""] * len(contexts) for _ in ms]
    for i, m in enumerate(ms):
        for j, c in enumerate(contexts):
            row = points.get((m, c), {})
            pick = choice.get(f"{m}:{c}")
            lt, best = us(row.get("cublaslt")), us(row.get(pick)) if pick else None
            if lt and best:
                gain[i][j] = lt / best
                labels[i][j] = f"{lt / best:.2f}\n{SHORT.get(pick, pick)}"
            elif pick:
                labels[i][j] = SHORT.get(pick, pick)
    finite = [g for line in gain for g in line if not math.isnan(g)]
    spread = max([abs(g - 1) for g in finite] + [0.05])
    fig, ax = plt.subplots(figsize=(1.6 * len(contexts) + 2, 0.7 * len(ms) + 1.8))
    image = ax.imshow(gain, cmap="RdYlGn", norm=norm_cls(vmin=1 - spread, vcenter=1.0, vmax=1 + spread), aspect="auto")
    ax.set_xticks(range(len(contexts)), [ctx_label(c) for c in contexts])
    ax.set_yticks(range(len(ms)), [str(m) for m in ms])
    ax.set_xlabel("context (KV-cache tokens per sequence)")
    ax.set_ylabel("M (sequences, one token each)")
    ax.set_title(title, fontsize=10)
    for i in range(len(ms)):
        for j in range(len(contexts)):
            ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label="cuBLASLt µs / best skinny µs")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def markdown(doc, rows, points, choice, ms, contexts, png_name, json_name):
    meta = doc.get("meta", {})
    layer = doc.get("layer", {})
    out = [f"# MLA decode layer: fused QKV-A+gate vs side-stream gate ({layer.get('name', '?')})", ""]
    out.append(f"- GPU: {meta.get('gpu', '?')} ({meta.get('sms', '?')} SMs, {meta.get('l2_mib', 0):.0f} MiB L2), "
               f"CUDA {meta.get('cuda', '?')}, cuBLASLt {meta.get('cublaslt', '?')}, {meta.get('date', '?')}")
    out.append(f"- revision: `{meta.get('revision', '?')}`")
    out.append(f"- command: `{meta.get('command', '?')}`")
    out.append(f"- data: [{json_name}]({json_name}); best streaming read seen: {doc.get('stream_read_tbps', 0):.2f} TB/s")
    out.append(f"- layer per rank: {layer.get('heads', '?')} heads, hidden {layer.get('hidden', '?')}, q_lora "
               f"{layer.get('q_lora_rank', '?')}, kv_lora {layer.get('kv_lora_rank', '?')} + rope "
               f"{layer.get('qk_rope_head_dim', '?')}, {layer.get('weight_bytes', 0) / 1e6:.1f} MB of weights; "
               f"outputs checked against the reference (relative error <= {layer.get('tolerance', '?')})")
    out += ["", f"![best skinny variant's gain over cuBLASLt]({png_name})", ""]
    head = "| context | M | " + " | ".join(f"{v} µs" for v in VARIANTS) + \
           " | pick | margin | gain vs cuBLASLt | attention µs | attention TB/s | efficiency |"
    out += [head, "|" + "---:|" * 2 + "---:|" * len(VARIANTS) + "---|---:|---:|---:|---:|---:|"]
    within, total, slower, compared = 0, 0, [], 0
    for c in contexts:
        for m in ms:
            row = points.get((m, c))
            if not row:
                continue
            pick = choice.get(f"{m}:{c}")
            times = {v: us(row.get(v)) for v in VARIANTS}
            cells = [("FAIL" if v in row and "error" in row[v] else fmt(times[v])) for v in VARIANTS]
            any_row = next(iter(row.values()))
            pick_us, lt = times.get(pick) if pick else None, times["cublaslt"]
            margin = gain = "-"
            if pick and pick_us:
                others = [t for v, t in times.items() if t and v not in (pick, "cublaslt")]
                margin = f"{100 * (min(others) / pick_us - 1):.1f}%" if others else "-"
                best_all = min(t for t in times.values() if t)
                total += 1
                within += pick_us <= 1.02 * best_all
                if lt:
                    compared += 1
                    gain = f"{lt / pick_us:.3f}"
                    if pick_us > lt:
                        slower.append(f"M={m} context={c} ({pick} {pick_us:.1f} µs vs cuBLASLt {lt:.1f} µs)")
            eff = row.get(pick, {}).get("efficiency") if pick else None
            out.append(f"| {c} | {m} | " + " | ".join(cells) + f" | {pick or '-'} | {margin} | {gain} | "
                       f"{fmt(any_row.get('attention_us'))} | {fmt(any_row.get('attention_tbps'), 2)} | {fmt(eff, 2)} |")
    out += ["", "## Acceptance (issue 8)", ""]
    out.append(f"- the policy's pick is within 2% of the best variant measured at {within} of {total} points")
    out.append(f"- points where the pick is slower than cuBLASLt: {len(slower)} of {compared}"
               + (": " + "; ".join(slower) if slower else ""))
    failed = [r for r in rows if "error" in r]
    if failed:
        out += ["", "## Failed checks (not timed)", ""]
        out += [f"- {r['variant']} M={r['m']} context={r['context']}: {r['error']}" for r in failed]
    if doc.get("skipped"):
        out += ["", "## Skipped points", ""]
        out += [f"- M={s['m']} context={s['context']}: {s['reason']}" for s in doc["skipped"]]
    out += ["", "Columns: µs per layer (median of graph replays over rotating weight copies); pick = the fastest "
            "skinny variant (the policy's choice); margin = runner-up skinny µs / pick µs - 1; gain = cuBLASLt µs / "
            "pick µs; attention = the split + combine kernels alone, TB/s = cache bytes / µs; efficiency = the "
            "layer's bytes at the stream-read bandwidth / µs (docs/mla.md)."]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="the output of skinnygemm mla --json")
    ap.add_argument("--out-dir", help="where mla_layer.md and mla_layer_gain.png go (default: beside the JSON)")
    args = ap.parse_args()
    plt, norm_cls = pyplot()  # before anything is written: no half-made report
    doc, rows = load(args.json)
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(out_dir, exist_ok=True)
    points, ms, contexts = grid(rows)
    choice = doc.get("policy_choice", {})
    png = os.path.join(out_dir, "mla_layer_gain.png")
    title = f"{doc.get('layer', {}).get('name', 'MLA layer')} on {doc.get('meta', {}).get('gpu', '?')}\n" \
            "best skinny variant's gain over cuBLASLt (label: its gain and name)"
    heat_map(plt, norm_cls, points, choice, ms, contexts, png, title)
    md = os.path.join(out_dir, "mla_layer.md")
    with open(md, "w") as f:
        f.write(markdown(doc, rows, points, choice, ms, contexts, os.path.basename(png), os.path.basename(args.json)))
    print(f"wrote {md} and {png}")


if __name__ == "__main__":
    main()
