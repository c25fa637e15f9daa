#!/usr/bin/env python3
"""Render whole-step results (rows of kind "step", docs/step.md) as Markdown plus a plot of step time per
variant against M. Several files may be given (runs at different M); each keeps its own revision line.
A run across GPUs (`step --ranks N`) is shown by its overall rows (the slowest rank), with the communication
columns and each rank's time; its per-rank rows only feed the "ranks" column.

    scripts/step_md.py docs/benchmarks/h200/step-*.json --out-dir docs/benchmarks/h200
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("step_md.py: matplotlib is not importable (apt-get install python3-matplotlib)")
    docs = [(f, json.load(open(f))) for f in args.files]
    all_rows = [r for _, d in docs for r in d["rows"] if r.get("kind") == "step"]
    rows = [r for r in all_rows if r.get("scope") != "rank"]
    if not rows:
        sys.exit("step_md.py: no rows of kind \"step\" in " + ", ".join(args.files))
    rows.sort(key=lambda r: (r["m"], not r["variant"].startswith("cublaslt"), r["variant"], not r.get("pdl", True)))
    ranks = max(r.get("ranks", 1) for r in rows)
    comm = any("comm_us" in r for r in rows)
    out = ["# Whole decode step (Kimi-K3, " + (f"across {ranks} GPUs, the slowest rank" if ranks > 1 else "per rank") + ")", ""]
    for f, d in docs:
        m = d["meta"]
        out.append(f"- `{os.path.basename(f)}`: {m['gpu']} ({m['sms']} SMs), CUDA {m['cuda']}, cuBLASLt {m['cublaslt']}, "
                   f"{m['date']}, revision `{m['revision']}`; stream read {d.get('stream_read_tbps', 0):.2f} TB/s; "
                   f"command `{m['command']}`")
    comm_head = " all-reduces | comm µs (alone) | comm share | ranks' µs |" if comm else ""
    # `step --chain-floor`: the dependent-chain floor of each variant's own launches, and us / that floor.
    chain = any("chain_floor_us" in r for r in rows)
    chain_head = " chain floor µs | chain floor / step |" if chain else ""
    out += ["", "| M | variant | PDL | GEMMs | GB | step µs | floor µs | efficiency | × cuBLASLt | checked | max rel. error |"
            + chain_head + comm_head,
            "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if chain else "")
            + ("---:|---:|---:|---|" if comm else "")]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['m']} | {r['variant']} | {'on' if r.get('pdl', True) else 'off'} | {r['gemms']} | "
                       f"FAILED: {r['error']} |")
            continue
        line = (f"| {r['m']} | {r['variant']} | {'on' if r.get('pdl', True) else 'off'} | {r['gemms']} | "
                f"{r['bytes'] / 1e9:.2f} | {r['us']:.1f} | {r['floor_us']:.1f} | {r['efficiency']:.2f} | "
                f"{r.get('speedup', 0):.2f} | {r['checked']} | {r['max_rel_error']:.1e} |")
        if chain:
            line += (f" {r['chain_floor_us']:.1f} ({r.get('chain_rings', '')}) | {r['chain_efficiency']:.3f} |"
                     if "chain_floor_us" in r else " - | - |")
        if comm:
            line += (f" {r.get('all_reduces', 0)} | {r.get('comm_us', 0):.1f} | {100 * r.get('comm_share', 0):.1f}% | "
                     + " / ".join(f"{u:.0f}" for u in r.get("rank_us", [])) + " |")
        out.append(line)
    # Across GPUs the sinks are each rank's own (no communication in them): rank 0's stand for all.
    sink_rows = rows if ranks == 1 else [r for r in all_rows if r.get("scope") == "rank" and r.get("rank") == 0]
    out += ["", "## Largest time sinks (each projection alone, in a graph of its own launches"
            + (", rank 0)" if ranks > 1 else ")"), ""]
    for r in sink_rows:
        if not r.get("sinks"):
            continue
        out.append(f"**{r['variant']}, M = {r['m']}** (all sinks {r['sinks_us']:.0f} µs vs step {r['us']:.0f} µs): " +
                   "; ".join(f"{s['name']} {s['n']}×{s['k']} {s['count']}× {s['us']:.2f} µs = {s['total_us']:.0f} µs"
                             for s in r["sinks"]))
        out.append("")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    variants = sorted({(r["variant"], r.get("pdl", True)) for r in rows})
    for v, pdl in variants:
        pts = sorted((r["m"], r["us"] / 1000) for r in rows
                     if r["variant"] == v and r.get("pdl", True) == pdl and "error" not in r)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v + ("" if pdl else " (no PDL)"))
    # The unfused step's floor (cublaslt's bytes): a fused variant reads x once per fusion, so its floor is lower.
    floor = sorted({(r["m"], r["floor_us"] / 1000) for r in rows
                    if r["variant"] in ("cublaslt", "cublaslt_nopdl") and "floor_us" in r})
    ax.plot([p[0] for p in floor], [p[1] for p in floor], "k--", label="floor (bytes / stream read)")
    for v, style in (("skinny_fused", "k:"), ("cublaslt", "k-.")):
        pts = sorted({(r["m"], r["chain_floor_us"] / 1000) for r in rows if r["variant"] == v and "chain_floor_us" in r})
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"dependent-chain floor of {v}'s launches")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M (tokens)")
    ax.set_ylabel("step time (ms)")
    ax.set_ylim(bottom=0)
    ax.set_title("Kimi-K3 TP8: every dense projection of one decode step, one CUDA graph"
                 + (f" per rank, {ranks} GPUs, NCCL all-reduces" if ranks > 1 else ""), fontsize=9 if ranks > 1 else None)
    ax.legend(fontsize=8)
    fig.tight_layout()
    png = os.path.join(args.out_dir, "step.png")
    fig.savefig(png, dpi=110)
    out.insert(2 + len(docs), f"\n![step time per variant vs M](step.png)\n")
    with open(os.path.join(args.out_dir, "step.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {os.path.join(args.out_dir, 'step.md')} and {png}")


if __name__ == "__main__":
    main()
