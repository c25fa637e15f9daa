#!/usr/bin/env python3
"""A table from forced `skinnygemm bench` rows (bench --config C --json F, with baselines; rows of kind "gemm" whose
source is "forced"): one entry per row, its config,
its time and cuBLASLt's default time in the same run, the device signature from the bench's meta. For configs judged in
the whole step on a GPU that has no table (docs/kernels.md "Session 40": the H100's table), where `tune` would judge them
alone. Refuses rows of two devices, rows without a cuBLASLt time, and a point given twice.

    scripts/table_from_bench.py --library 0.2.0 --out tables/nvidia-h100-80gb-hbm3.json A.json B.json
"""
import argparse
import json
import sys

from table_file import write_table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", nargs="+", help="bench JSONs (rows of kind \"gemm\" with a forced config)")
    ap.add_argument("--library", required=True, help="the library version the entries were measured with")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    meta, entries = None, {}
    for path in a.bench:
        doc = json.load(open(path))
        m = doc["meta"]
        sig = {"gpu": m["gpu"], "sms": m["sms"], "cuda": m["cuda"], "cublaslt": m["cublaslt"], "library": a.library,
               "alignment": 16}
        if meta is not None and sig != meta:
            sys.exit("%s: device %s/%d differs from the first file's %s/%d" % (path, sig["gpu"], sig["sms"], meta["gpu"], meta["sms"]))
        meta = sig
        for r in doc["rows"]:
            key = (r["dtype"], r["n"], r["k"], r["m"])
            if r.get("kind") != "gemm" or r.get("source") != "forced":
                sys.exit("%s: %s is a row of kind %s, source %s; expected kind gemm, source forced (bench --config)" %
                         (path, key, r.get("kind"), r.get("source")))
            if not r.get("cublaslt_us"):
                sys.exit("%s: %s has no cuBLASLt time (bench without --no-baselines)" % (path, key))
            if key in entries:
                sys.exit("%s: point %s given twice" % (path, key))
            entries[key] = {"dtype": r["dtype"], "n": r["n"], "k": r["k"], "m": r["m"], "config": r["config"],
                            "us": r["us"], "cublaslt_us": r["cublaslt_us"]}
    if not any(e["config"].startswith("cublaslt") for e in entries.values()):
        # No entry names a cuBLASLt algorithm, the only thing another cuBLASLt version may number differently: the
        # table then holds under any version (Table::mismatch checks the version only where the meta names one).
        del meta["cublaslt"]
    write_table(a.out, meta, [entries[k] for k in sorted(entries)])
    print("%s: %d entries for %s" % (a.out, len(entries), meta["gpu"]))


main()
