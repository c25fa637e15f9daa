#!/usr/bin/env python3
"""Render a heuristic report (rows of kind "heuristic", `skinnygemm tune --heuristic-report`) as Markdown:
the summary, the distribution of the loss (heuristic pick / best measured - 1) and the worst points.

    scripts/heuristic_md.py docs/benchmarks/h200/heuristic.json > docs/benchmarks/h200/heuristic.md
"""
import json
import sys


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
        print(f"| {r['name']} | {r['n']}×{r['k']} | {r['m']} | {r['heuristic_config']} | {r['heuristic_us']:.2f} | "
              f"{r['best_config']} | {r['best_us']:.2f} | {r.get('cublaslt_us', 0):.2f} | {100 * l:.0f}% |")


if __name__ == "__main__":
    main(sys.argv[1])
