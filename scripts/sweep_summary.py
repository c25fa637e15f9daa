#!/usr/bin/env python3
"""Summarise a `skinnygemm bench --sweep` JSON: per (N, K, M) the heuristic's pick, the best config, and
the best config of each family/split/layout, against the stream-read limit and cuBLASLt."""
import collections
import json
import sys


def main(path, top=5):
    data = json.load(open(path))
    groups = collections.defaultdict(list)
    for r in data["rows"]:
        groups[(r["n"], r["k"], r["m"])].append(r)
    for (n, k, m), rows in groups.items():
        base = next((r for r in rows if r.get("stream_read_us")), rows[0])
        limit, lt = base.get("stream_read_us", 0), base.get("cublaslt_us", 0)
        rows = sorted(rows, key=lambda r: r["us"])
        print(f"{n}x{k} m={m}: limit {limit:.2f} us, cuBLASLt {lt:.2f} us, picked {base['config']} {base['us']:.2f} us")
        for r in rows[:top]:
            eff = limit / r["us"] if limit else 0
            print(f"    {r['config']:24s} {r['us']:8.2f} us  eff {eff:.2f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
