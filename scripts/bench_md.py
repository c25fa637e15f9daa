#!/usr/bin/env python3
"""Render a skinnygemm result JSON (shared schema, docs/measuring.md) as a Markdown table.

    scripts/bench_md.py docs/benchmarks/h200/kernels.json > docs/benchmarks/h200/kernels.md
"""
import json
import sys


def main(path):
    data = json.load(open(path))
    meta = data["meta"]
    rows = data["rows"]
    print(f"# {path.split('/')[-1]}\n")
    print(f"- GPU: {meta['gpu']} ({meta['sms']} SMs, {meta['l2_mib']:.0f} MiB L2), CUDA {meta['cuda']}, "
          f"cuBLASLt {meta['cublaslt']}, {meta['date']}")
    print(f"- revision: `{meta['revision']}`")
    print(f"- command: `{meta['command']}`")
    print(f"- best streaming read seen: {data['stream_read_tbps']:.2f} TB/s\n")
    gpu = any("stream_read_us" in r for r in rows)
    head = "| name | N×K | M | config | source | µs |"
    sep = "|---|---|---:|---|---|---:|"
    if gpu:
        head += " limit µs | efficiency | cuBLASLt µs | best cuBLASLt µs | speedup | speedup vs best |"
        sep += "---:|---:|---:|---:|---:|---:|"
    print(head)
    print(sep)
    for r in rows:
        line = (f"| {r.get('name', '-')} | {r['n']}×{r['k']} | {r['m']} | {r['config']} | {r['source']} "
                f"| {r['us']:.2f} |")
        if gpu:
            line += (f" {r.get('stream_read_us', 0):.2f} | {r.get('efficiency', 0):.2f} | {r.get('cublaslt_us', 0):.2f}"
                     f" | {r.get('cublaslt_best_us', 0):.2f} | {r.get('speedup', 0):.2f} | {r.get('speedup_best', 0):.2f} |")
        print(line)
    if gpu:
        n = len(rows)
        eff = sorted(r["efficiency"] for r in rows)
        wins = sum(1 for r in rows if r["speedup"] >= 1.0)
        print(f"\n{n} rows; efficiency median {eff[n // 2]:.2f}, min {eff[0]:.2f}, max {eff[-1]:.2f}; "
              f"as fast as or faster than cuBLASLt's default in {wins}/{n}.")


if __name__ == "__main__":
    main(sys.argv[1])
