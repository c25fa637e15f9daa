#!/usr/bin/env python3
"""How much a table tuned at M buckets loses against tuning every M (issue 4's bucket evidence).

Input: `skinnygemm tune --json` files from a run that tuned many Ms (every candidate's row per point, the
stored one marked). Selection serves M from the smallest tuned bucket M' >= M (Table::find_bucket), so for a
bucket set B the config that runs at M is the one stored at M' = min{b in B: b >= M}. Its time at M is that
config's own row at M, measured in the same run as the config stored for M itself. Loss = that time over the
per-M stored config's time - 1 (the per-M pick's time is a winner's median, so small losses are partly noise).

    scripts/bucket_study.py tune-gpu0.json tune-gpu1.json.gz --buckets 1,2,4,8,16,32,64 [--json F] [--md F]

A point where `tune --refine` kept the heuristic (the file's "heuristic_kept" list) has a heuristic marker in the
table: at its own M the heuristic's pick runs (its time is the per-M time), and as a bucket it serves the Ms below it
with the heuristic's pick at each, which the tune file does not record; those points are listed under "heuristic"
and left out of the losses.
"""
import argparse
import gzip
import json
import statistics
import sys


def load(paths):
    points = {}  # (dtype, n, k, m) -> {config: us}, plus the config that runs there under key None
    marked = set()  # points with a heuristic marker: key None is the heuristic's pick
    meta = None
    for path in paths:
        d = json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))
        meta = meta or d.get("meta")
        for r in d["rows"]:
            key = (r["dtype"], r["n"], r["k"], r["m"])
            p = points.setdefault(key, {})
            p[r["config"]] = r["us"]
            if r.get("stored"):
                p[None] = r["config"]
        for kept in d.get("heuristic_kept", []):
            key = (kept["dtype"], kept["n"], kept["k"], kept["m"])
            p = points.setdefault(key, {})
            p[None] = kept["config"]
            p.setdefault(kept["config"], kept["us"])  # a pick outside the candidates has no row
            marked.add(key)
    return meta, points, marked


def study(points, buckets, marked):
    shapes = sorted({k[:3] for k in points})
    rows, missing, heuristic = [], [], []
    for shape in shapes:
        ms = sorted(k[3] for k in points if k[:3] == shape)
        for m in ms:
            here = points[shape + (m,)]
            if None not in here:
                continue
            above = [b for b in buckets if b >= m and shape + (b,) in points and None in points[shape + (b,)]]
            if not above:
                continue
            b = min(above)
            if shape + (b,) in marked:  # the heuristic's pick at M runs, whatever it is (at M = b: no loss)
                if m != b:
                    heuristic.append({"n": shape[1], "k": shape[2], "m": m, "bucket": b})
                continue
            cfg = points[shape + (b,)][None]
            if cfg not in here:  # the bucket's config was not measured (or not supported) at this M
                missing.append({"n": shape[1], "k": shape[2], "m": m, "bucket": b, "config": cfg})
                continue
            own = here[here[None]]
            dflt = here.get("cublaslt")
            rows.append({"dtype": shape[0], "n": shape[1], "k": shape[2], "m": m, "bucket": b,
                         "bucket_config": cfg, "bucket_us": here[cfg], "per_m_config": here[None], "per_m_us": own,
                         "loss": here[cfg] / own - 1, "cublaslt_us": dflt,
                         "slower_than_cublaslt": dflt is not None and here[cfg] > dflt})
    return rows, missing, heuristic


def summary(rows):
    between = [r for r in rows if r["m"] != r["bucket"]]
    losses = sorted(r["loss"] for r in between)
    if not losses:
        return {"points": 0}
    worst = max(between, key=lambda r: r["loss"])
    return {"points": len(between), "median_loss": statistics.median(losses),
            "p90_loss": losses[int(0.9 * (len(losses) - 1))], "worst_loss": worst["loss"],
            "worst": {k: worst[k] for k in ("n", "k", "m", "bucket", "bucket_config", "per_m_config")},
            "over_2pct": sum(v > 0.02 for v in losses),
            "slower_than_cublaslt": sum(r["slower_than_cublaslt"] for r in between)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tune_json", nargs="+")
    ap.add_argument("--buckets", action="append", required=True,
                    help="comma-separated bucket Ms; repeat to compare several sets")
    ap.add_argument("--json", help="write the rows and summaries here")
    ap.add_argument("--md", help="write a Markdown summary here")
    args = ap.parse_args()
    meta, points, marked = load(args.tune_json)
    if not points:
        sys.exit("bucket_study.py: no rows in " + ", ".join(args.tune_json))
    result = {"meta": meta, "command": "scripts/bucket_study.py " + " ".join(sys.argv[1:]), "sets": []}
    lines = ["# M buckets against per-M tuning", "",
             "Every point below was tuned at its own M in the same run; the bucket row is the time, at that M, of",
             "the config stored for the bucket that would serve it (smallest bucket >= M). Points at a bucket's",
             "own M are left out (no loss by construction).", "",
             f"Command: `{result['command']}`", "",
             "| buckets | points | median loss | p90 | worst | worst at | > 2% | slower than cuBLASLt |",
             "|---|---|---|---|---|---|---|---|"]
    for spec in args.buckets:
        buckets = sorted({int(v) for v in spec.split(",")})
        rows, missing, heuristic = study(points, buckets, marked)
        s = summary(rows)
        result["sets"].append({"buckets": buckets, "summary": s, "missing": missing, "heuristic": heuristic,
                               "rows": rows})
        if s["points"]:
            w = s["worst"]
            lines.append(f"| {','.join(map(str, buckets))} | {s['points']} | {100 * s['median_loss']:.2f}% | "
                         f"{100 * s['p90_loss']:.2f}% | {100 * s['worst_loss']:.1f}% | {w['n']}x{w['k']} M={w['m']} "
                         f"({w['bucket_config']} from M={w['bucket']} vs {w['per_m_config']}) | {s['over_2pct']} | "
                         f"{s['slower_than_cublaslt']} |")
        if missing:
            lines.append(f"|  | {len(missing)} points where the bucket's config was not measured at that M |||||||")
        if heuristic:
            lines.append(f"|  | {len(heuristic)} points served by a bucket's heuristic marker (the heuristic's pick "
                         "at that M, not in the tune file) |||||||")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)
    if args.md:
        open(args.md, "w").write(text)


if __name__ == "__main__":
    main()
