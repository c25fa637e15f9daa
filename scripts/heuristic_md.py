#!/usr/bin/env python3
"""Render a heuristic report (rows of kind "heuristic", `skinnygemm tune --heuristic-report`) as Markdown:
the summary, the distribution of the loss (heuristic pick / best measured - 1) and the worst points.

    scripts/heuristic_md.py docs/benchmarks/h200/heuristic.json > docs/benchmarks/h200/heuristic.md
    scripts/heuristic_md.py A.json B.json --merge AB.json > AB.md   (runs of one set at different Ms, e.g. a long
                                                                     set cut into parts by device calls)
"""
import json
import sys


def merge(paths, out):
    """One report from several: rows appended, the summary recomputed as `tune --heuristic-report` does."""
    docs = [json.load(open(p)) for p in paths]
    data = docs[0]
    data["meta"]["command"] = " && ".join(d["meta"]["command"] for d in docs)
    data["meta"]["revision"] = " + ".join(sorted({d["meta"]["revision"] for d in docs}))
    data["rows"] = [r for d in docs for r in d["rows"]]
    rows = [r for r in data["rows"] if r.get("kind") == "heuristic"]
    ok = [r for r in rows if r.get("heuristic_us") is not None]
    loss = sorted(r["heuristic_us"] / r["best_us"] - 1 for r in ok)
    worst = max(ok, key=lambda r: r["heuristic_us"] / r["best_us"])
    data["summary"] = dict(points=len(rows), heuristic_failed=len(rows) - len(ok), median_loss=loss[len(loss) // 2],
                           worst_loss=loss[-1], worst_point=f"{worst['name']} {worst['n']}x{worst['k']} m={worst['m']}",
                           slower_than_cublaslt=sum(r["heuristic_us"] > r["cublaslt_us"] for r in ok),
                           cublaslt_points=sum(r.get("cublaslt_us") is not None for r in rows))
    with open(out, "w") as f:  # compact: a set's report is ~1.5 MB indented, 1.05 compact, and the tree a call
        json.dump(data, f, separators=(",", ":"))  # carries is capped at 64 MiB (session 47)
    return out


def main(path):
    data = json.load(open(path))
    meta, s = data["meta"], data["summary"]
    rows = [r for r in data["rows"] if r.get("kind") == "heuristic"]
    loss = sorted(r["heuristic_us"] / r["best_us"] - 1 for r in rows)
    n = len(loss)
    print(f"# {path.split('/')[-1]}\n")
    print(f"- GPU: {meta['gpu']} ({meta['sms']} SMs), CUDA {meta['cuda']}, cuBLASLt {meta['cublaslt']}, {meta['date']}")
    print(f"- revision: `{meta['revision']}`")
    print(f"- command: `{meta['command']}`\n")
    print(f"{n} points (held-out shapes x M): median loss {100 * s['median_loss']:.1f}%, worst "
          f"{100 * s['worst_loss']:.0f}% ({s['worst_point']}); within 10% of the best at "
          f"{sum(l <= 0.10 for l in loss)}/{n}; slower than cuBLASLt's default at {s['slower_than_cublaslt']}/{n}.\n")
    for q in (0.5, 0.75, 0.9, 0.95):
        print(f"- {int(q * 100)}th percentile loss: {100 * loss[min(n - 1, int(q * n))]:.1f}%")
    print("\n## Points where the heuristic loses more than 10%\n")
    print("| name | N×K | M | heuristic pick | µs | best measured | µs | cuBLASLt µs | loss |")
    print("|---|---|---:|---|---:|---|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: -r["heuristic_us"] / r["best_us"]):
        l = r["heuristic_us"] / r["best_us"] - 1
        if l <= 0.10:
            break
        print(f"| {r.get('name') or 'shape'} | {r['n']}×{r['k']} | {r['m']} | {r['heuristic_config']} | {r['heuristic_us']:.2f} | "
              f"{r['best_config']} | {r['best_us']:.2f} | {r.get('cublaslt_us', 0):.2f} | {100 * l:.0f}% |")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--merge" in args:
        i = args.index("--merge")
        main(merge(args[:i] + args[i + 2:], args[i + 1]))
    else:
        main(args[0])
