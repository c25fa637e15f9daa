#!/usr/bin/env python3
"""Take entries from another table of the same device signature: those of some M buckets (--m), or every
point the other table has (no --m; its entries replace the same (dtype, N, K, M) and add the rest).

For when the whole step says a bucket's per-kernel winners lose together (docs/kernels.md, session 3: the M = 8
entries of the session-3 table made the unfused Kimi-K3 step 0.90x cuBLASLt; the session-2 entries measured
1.03x). Both tables are measured; this only chooses, per bucket, which measurement to ship.

    scripts/table_take_m.py tables/nvidia-h200.json --from OLD.json --m 8 [--out FILE]
    scripts/table_take_m.py tables/nvidia-h200.json --from gpu1.json     (merge tables tuned on two GPUs)

A heuristic marker (`"config": "heuristic"`, `tune --refine`) is a measurement like an entry: taken, it replaces
the point's entry, and an entry taken replaces a marker.
"""
import argparse
import json
import sys

from table_file import write_table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--from", dest="source", required=True, help="table whose entries of those Ms to take")
    ap.add_argument("--m", help="comma-separated M buckets, e.g. 8 or 8,16 (default: every point of --from)")
    ap.add_argument("--out", help="where to write (default: overwrite TABLE)")
    args = ap.parse_args()
    ms = {int(v) for v in args.m.split(",")} if args.m else None
    table, source = json.load(open(args.table)), json.load(open(args.source))
    for field in ("gpu", "sms"):
        if table["meta"].get(field) != source["meta"].get(field):
            sys.exit(f"table_take_m.py: {field} differs: {table['meta'].get(field)} vs {source['meta'].get(field)}")
    key = lambda e: (e["dtype"], e["n"], e["k"], e["m"])
    taken = [e for e in source["entries"] if ms is None or e["m"] in ms]
    if not taken:
        sys.exit(f"table_take_m.py: {args.source} has no entries" + (f" at M = {sorted(ms)}" if ms else ""))
    replaced = {key(e) for e in taken}
    kept = [e for e in table["entries"] if key(e) not in replaced and (ms is None or e["m"] not in ms)]
    table["entries"] = sorted(kept + taken, key=key)
    out = args.out or args.table
    write_table(out, table["meta"], table["entries"])
    where = f" at M = {sorted(ms)}" if ms else ""
    print(f"{out}: {len(kept)} entries kept, {len(taken)} taken from {args.source}{where}")


if __name__ == "__main__":
    main()
