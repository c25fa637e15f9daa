#!/usr/bin/env python3
"""Prints a `skinnygemm bench` JSON for the trial scripts' console (tools/trials): its measured rows (the selected or
forced config with cuBLASLt, torch's cuBLASLt and the chain floor), then, with --best N, the N fastest --sweep rows,
per --group substring when given (e.g. --group _r128_ --group _r64_).
  tools/trials/bench_rows.py OUT/sweep.json --best 8"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--best", type=int, default=0, help="also the N fastest swept configs")
    ap.add_argument("--group", action="append", default=[], help="rank the swept configs per substring of the name")
    a = ap.parse_args()
    try:
        rows = json.load(open(a.json))["rows"]
    except (OSError, ValueError, KeyError) as e:
        print("no rows in", a.json, e)
        return
    for r in rows:
        if r.get("cublaslt_us"):
            print("%5dx%-5d m=%2d %-28s %6.2f  cuBLASLt %6.2f  torch %6.2f  chain %6.2f  err %.1e" % (
                r["n"], r["k"], r["m"], r["config"], r["us"], r["cublaslt_us"], r["cublaslt_torch_us"], r["chain_us"],
                r.get("rel_error", float("nan"))))
    swept = sorted((r for r in rows if not r.get("cublaslt_us")), key=lambda r: r["us"])
    if a.best:
        for g in a.group or [""]:
            best = [r for r in swept if g in r["config"]][:a.best]
            print("  %d swept%s; best %d: %s" % (len(swept), " (%s)" % g if g else "", len(best),
                                               " ".join("%s=%.2f" % (r["config"], r["us"]) for r in best)))


if __name__ == "__main__":
    main()
