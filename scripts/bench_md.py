#!/usr/bin/env python3
"""Render a skinnygemm result JSON (shared schema, docs/measuring.md) as a Markdown table, with the kernel
issue's acceptance lines where the rows carry the chain floor and cuBLASLt as torch configures it.

    scripts/bench_md.py docs/benchmarks/h200/kernels.json > docs/benchmarks/h200/kernels.md
"""
import json
import sys

SEEDS_M16 = {(3648, 7168): ("<= 12.7 us", lambda us, m: us <= 12.7)}


def acceptance(rows):
    """The kernel issue's targets, each with the rows that miss it (rows with chain_us only)."""
    rows = [r for r in rows if r.get("chain_us")]
    if not rows:
        return []
    lines = []

    def check(title, cases):
        misses = [f"{r['n']}x{r['k']} M={r['m']} ({why})" for r, ok, why in cases if not ok]
        lines.append(f"- {title}: {'met' if not misses else 'missed at ' + str(len(misses)) + '/' + str(len(cases))}"
                     + ("" if not misses else ": " + ", ".join(misses[:12]) + (" ..." if len(misses) > 12 else "")))

    big = [r for r in rows if r["n"] * r["k"] * 2 >= 30e6]
    small = [r for r in rows if r["n"] * r["k"] * 2 < 30e6]
    check("shapes >= 30 MB: efficiency >= 0.90 at M <= 16",
          [(r, r["efficiency"] >= 0.90, f"{r['efficiency']:.2f}") for r in big if r["m"] <= 16])
    check("shapes >= 30 MB: efficiency >= 0.85 at M <= 64",
          [(r, r["efficiency"] >= 0.85, f"{r['efficiency']:.2f}") for r in big])
    check("shapes < 30 MB: us <= 1.05 x chain_us at M <= 16",
          [(r, r["us"] <= 1.05 * r["chain_us"], f"{r['us'] / r['chain_us']:.2f}x") for r in small if r["m"] <= 16])
    check("shapes < 30 MB: us <= 1.20 x chain_us at M <= 64",
          [(r, r["us"] <= 1.20 * r["chain_us"], f"{r['us'] / r['chain_us']:.2f}x") for r in small])
    check("1536x128 and 144x7168 <= 1.5 us at M <= 4",
          [(r, r["us"] <= 1.5, f"{r['us']:.2f} us") for r in rows
           if (r["n"], r["k"]) in ((1536, 128), (144, 7168)) and r["m"] <= 4])
    check("3648x7168 <= 12.7 us at M <= 16",
          [(r, r["us"] <= 12.7, f"{r['us']:.2f} us") for r in rows if (r["n"], r["k"]) == (3648, 7168) and r["m"] <= 16])
    peer = {(2112, 7168): {1: 7.2, 8: 7.3, 16: 7.8}, (1536, 7168): {1: 5.9, 8: 6.1, 16: 7.0}}
    check("2112x7168 and 1536x7168 at the peer-kernel targets (M = 1, 8, 16)",
          [(r, r["us"] <= peer[(r["n"], r["k"])][r["m"]], f"{r['us']:.2f} us")
           for r in rows if (r["n"], r["k"]) in peer and r["m"] in peer[(r["n"], r["k"])]])
    check("7168x14336 >= 1.15x faster than cublaslt_torch at M = 1, 2",
          [(r, r["cublaslt_torch_us"] / r["us"] >= 1.15, f"{r['cublaslt_torch_us'] / r['us']:.2f}x") for r in rows
           if (r["n"], r["k"]) == (7168, 14336) and r["m"] <= 2])
    check("never slower than the faster of cuBLASLt's default and cublaslt_torch",
          [(r, r["us"] <= min(r["cublaslt_us"], r["cublaslt_torch_us"]),
            f"{r['us']:.2f} vs {min(r['cublaslt_us'], r['cublaslt_torch_us']):.2f} us") for r in rows])
    weak = [r for r in rows if r.get("chain_reference_us") and r["chain_us"] > 1.03 * r["chain_reference_us"]]
    lines.append(f"- chain probe within 3% of the reference probe: {len(rows) - len(weak)}/{len(rows)} rows"
                 + ("" if not weak else f" (weak at {len(weak)}: worst "
                    f"{max(r['chain_us'] / r['chain_reference_us'] for r in weak):.3f}x)"))
    return lines


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
    chain = any("chain_us" in r for r in rows)
    head = "| name | N×K | M | config | source | µs |"
    sep = "|---|---|---:|---|---|---:|"
    if gpu:
        head += " limit µs | efficiency | cuBLASLt µs | best cuBLASLt µs | speedup | speedup vs best |"
        sep += "---:|---:|---:|---:|---:|---:|"
    if chain:
        head += " cuBLASLt-torch µs | chain µs | µs / chain |"
        sep += "---:|---:|---:|"
    print(head)
    print(sep)
    for r in rows:
        line = (f"| {r.get('name', '-')} | {r['n']}×{r['k']} | {r['m']} | {r['config']} | {r['source']} "
                f"| {r['us']:.2f} |")
        if gpu:
            line += (f" {r.get('stream_read_us', 0):.2f} | {r.get('efficiency', 0):.2f} | {r.get('cublaslt_us', 0):.2f}"
                     f" | {r.get('cublaslt_best_us', 0):.2f} | {r.get('speedup', 0):.2f} | {r.get('speedup_best', 0):.2f} |")
        if chain:
            line += (f" {r.get('cublaslt_torch_us', 0):.2f} | {r.get('chain_us', 0):.2f} |"
                     f" {r['us'] / r['chain_us'] if r.get('chain_us') else 0:.2f} |")
        print(line)
    if gpu:
        n = len(rows)
        eff = sorted(r["efficiency"] for r in rows)
        wins = sum(1 for r in rows if r["speedup"] >= 1.0)
        print(f"\n{n} rows; efficiency median {eff[n // 2]:.2f}, min {eff[0]:.2f}, max {eff[-1]:.2f}; "
              f"as fast as or faster than cuBLASLt's default in {wins}/{n}.")
    lines = acceptance(rows)
    if lines:
        print("\n## Acceptance (kernel issue)\n")
        print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
