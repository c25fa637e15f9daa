#!/usr/bin/env python3
"""Re-scores the heuristic's picks on the recorded held-out points, without a GPU (issue 18, docs/tuning.md).

Each held-out report (`tune --heuristic-report`, docs/benchmarks/h200/heuristic*.json) keeps per point the times of
the pick of the revision that ran it, the best measured candidate, cuBLASLt's default (`cublaslt`), cuBLASLt's best
algorithm and cublaslt_torch; reports since session 16 (eb45e6f) also every measured candidate (`candidates`, with
the identity of each cuBLASLt algorithm, so a pick named by identity is found too). A pick of another revision (a
`skinnygemm heuristic --json` dump) is scored where the report has its time; elsewhere it is "unmeasured" (its time
is at least the point's best, nothing more is known). Every report is scored point by point: the same point measured
in two reports counts twice, once per run, as each report is a run of its own.

    skinnygemm heuristic --device h200 --shapes <the reports' shapes> --m 1:64 --json before.json   # on one revision
    skinnygemm heuristic --device h200 --shapes <the reports' shapes> --m 1:64 --json after.json    # on another
    scripts/heuristic_rescore.py --dump before.json --dump after.json docs/benchmarks/h200/heuristic*.json

A `cublaslt_unsplit` pick (the heuristic's cuBLASLt pick at M <= 64 since session 37) runs one of cuBLASLt's own
answers, which its rule names from each answer's split and tile (src/backends/cuda/cublaslt_unsplit.h): at a point whose
report did not time it by that name, it is scored as the answer the rule names among the report's `cublaslt_a<i>`
identities, the tiles' shapes read from the CUDA toolkit's cublasLt.h (`--cublaslt-header`).

`--shapes-only` prints the reports' distinct NxK (the --shapes argument above) and exits. `--changed` lists every
point whose pick differs between the first two dumps, with the measured times where there are some. `--steps` judges
each dump against the one before it (a chain of rules added one at a time, one dump per rule): the points whose pick
changes, how many of them were timed both ways, faster / slower, their µs summed before and after, within 5% before and
after, and how many leave or join the judged set (docs/tuning.md "Session 35").
"""
import argparse
import json
import os
import re
import statistics
import sys

DUMP_SCHEMA = "skinnygemm-heuristic-1"
UNSPLIT = "cublaslt_unsplit"
IDENTITY = re.compile(r"cublaslt_id\d+_t(\d+)_s\d+_k(-?\d+)_")  # cuBLASLt reports split-K -1 on some algorithms


def tile_shapes(header):
    """{tile id: (rows, tokens)} of every CUBLASLT_MATMUL_TILE_<rows>x<columns> = <id> of cuBLASLt's header."""
    pattern = re.compile(r"CUBLASLT_MATMUL_TILE_(\d+)x(\d+)\s*=\s*(\d+)")
    with open(header) as f:
        return {int(m[3]): (int(m[1]), int(m[2])) for m in pattern.finditer(f.read())}


def unsplit_config(row, tiles):
    """The config whose time is cublaslt_unsplit's at a report's point: "cublaslt" where the default does not split K
    (split-K other than 1) or no later answer has split-K 1, >= 48 tile rows and >= M / 2 tile tokens, else that
    answer's cublaslt_a<i>; None where the report lacks an answer's identity before the rule's decision (an answer
    missing with a later one present: cuBLASLt listed it, the report did not name it) (cublaslt_unsplit.h)."""
    by_config = {c["config"]: c for c in row.get("candidates", [])}
    last = max((int(k[len("cublaslt_a"):]) for k in by_config if re.fullmatch(r"cublaslt_a\d+", k)), default=-1)
    for i in range(last + 1):
        c = by_config.get(f"cublaslt_a{i}")
        m = IDENTITY.match(c.get("identity") or "") if c else None
        if not m:
            return None
        split, (rows, tokens) = int(m[2]), tiles.get(int(m[1]), (0, 0))
        if i == 0 and split == 1:
            return "cublaslt"
        if i > 0 and split == 1 and rows >= 48 and 2 * tokens >= row["m"]:
            return f"cublaslt_a{i}"
    return "cublaslt" if last >= 0 else None


def load_reports(paths):
    """Every report row as (report name, row)."""
    out = []
    for path in paths:
        rows = json.load(open(path))["rows"]
        out += [(os.path.basename(path), r) for r in rows if r.get("kind") == "heuristic"]
    return out


def measured(row):
    """The configs a report row has a time for: {config: us}."""
    t = {}
    for name_key, us_key in (("best_config", "best_us"), ("cublaslt_best_config", "cublaslt_best_us"),
                             ("heuristic_config", "heuristic_us")):
        if row.get(name_key) and row.get(us_key):
            t[row[name_key]] = row[us_key]
    if row.get("cublaslt_us"):
        t["cublaslt"] = row["cublaslt_us"]
    for c in row.get("candidates", []):
        t.setdefault(c["config"], c["us"])
        if c.get("identity"):
            t.setdefault(c["identity"], c["us"])
    return t


def load_dump(path):
    """The dump's pick per (n, k, m)."""
    d = json.load(open(path))
    if d.get("schema") != DUMP_SCHEMA:
        sys.exit(f"{path}: not a `skinnygemm heuristic --json` dump ({DUMP_SCHEMA})")
    return {(p["n"], p["k"], p["m"]): p["pick"] for p in d["points"]}


def score(rows, picks, tiles=None):
    """Per row: (pick, us or None, loss or None, vs the faster of cuBLASLt's default and cublaslt_torch or None)."""
    out = []
    for _, r in rows:
        key = (r["n"], r["k"], r["m"])
        if key not in picks:
            sys.exit(f"the dump has no pick at {r['n']}x{r['k']} m={r['m']}: run `skinnygemm heuristic` with "
                     f"--shapes $({sys.argv[0]} --shapes-only <reports>) --m 1:64")
        pick = picks[key]
        times = measured(r)
        us = times.get(pick)
        if us is None and pick == UNSPLIT:
            if tiles is None:
                sys.exit(f"a dump picks {UNSPLIT}: give --cublaslt-header (cuBLASLt's tile shapes)")
            us = times.get(unsplit_config(r, tiles) or "", None)
        faster_lt = min(x for x in (r.get("cublaslt_us"), r.get("cublaslt_torch_us")) if x)
        out.append((pick, us, None if us is None else us / r["best_us"] - 1, None if us is None else us / faster_lt))
    return out


def summary(scored):
    """Judged points, unmeasured, within 5% / 10%, median and worst loss, over 3% behind the faster cuBLASLt,
    summed time of the judged picks."""
    losses = [s[2] for s in scored if s[2] is not None]
    return dict(points=len(scored), judged=len(losses), unmeasured=len(scored) - len(losses),
                within5=sum(l <= 0.05 for l in losses), within10=sum(l <= 0.10 for l in losses),
                median=statistics.median(losses) if losses else None, worst=max(losses) if losses else None,
                over_lt3=sum(s[3] > 1.03 for s in scored if s[3] is not None),
                summed_us=sum(s[1] for s in scored if s[1] is not None))


def step_line(before, after):
    """One step of --steps: what changed between two scorings of the same rows."""
    changed = [i for i in range(len(before)) if before[i][0] != after[i][0]]
    both = [i for i in changed if before[i][1] is not None and after[i][1] is not None]
    faster = sum(after[i][1] < before[i][1] for i in both)
    slower = sum(after[i][1] > before[i][1] for i in both)
    within = lambda sc: sum(sc[i][2] <= 0.05 for i in both)
    left = sum(before[i][1] is not None and after[i][1] is None for i in changed)
    joined = sum(before[i][1] is None and after[i][1] is not None for i in changed)
    return (f"{len(changed)} | {len(both)} | {faster} / {slower} | {sum(before[i][1] for i in both):.1f} -> "
            f"{sum(after[i][1] for i in both):.1f} | {within(before)} -> {within(after)} | {left} / {joined}")


def fmt(s):
    pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"
    return (f"{s['points']} | {s['judged']} | {s['unmeasured']} | {s['within5']} | {s['within10']} | "
            f"{pct(s['median'])} | {pct(s['worst'])} | {s['over_lt3']} | {s['summed_us']:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", help="held-out reports (tune --heuristic-report)")
    ap.add_argument("--dump", action="append", default=[], help="`skinnygemm heuristic --json` (repeat: before, after)")
    ap.add_argument("--shapes-only", action="store_true", help="print the reports' distinct NxK, comma-separated")
    ap.add_argument("--changed", action="store_true", help="list the points whose pick differs between two dumps")
    ap.add_argument("--steps", action="store_true", help="judge each dump against the one before it")
    cuda = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    ap.add_argument("--cublaslt-header", default=os.path.join(cuda, "include", "cublasLt.h"),
                    help="cuBLASLt's header, for the tile shapes of cublaslt_unsplit picks (default: %(default)s)")
    a = ap.parse_args()
    rows = load_reports(a.reports)
    if a.shapes_only:
        print(",".join(sorted({f"{r['n']}x{r['k']}" for _, r in rows}, key=lambda s: tuple(map(int, s.split("x"))))))
        return
    if not a.dump:
        sys.exit("give at least one --dump")
    dumps = [load_dump(d) for d in a.dump]
    tiles = None
    if any(UNSPLIT in d.values() for d in dumps):
        if not os.path.exists(a.cublaslt_header):
            sys.exit(f"a dump picks {UNSPLIT}: cuBLASLt's header {a.cublaslt_header} is missing (--cublaslt-header)")
        tiles = tile_shapes(a.cublaslt_header)
    scored = [score(rows, d, tiles) for d in dumps]
    header = ("| report | points | judged | unmeasured | within 5% | within 10% | median loss | worst "
              "| > 3% behind cuBLASLt | µs summed (judged) |")
    for d, sc in zip(a.dump, scored):
        print(f"\n{d}\n\n{header}\n|---|" + "---:|" * 9)
        for rep in sorted({n for n, _ in rows}):
            sel = [s for (n, _), s in zip(rows, sc) if n == rep]
            print(f"| {rep} | {fmt(summary(sel))} |")
        print(f"| all | {fmt(summary(sc))} |")
    if len(scored) >= 2:
        common = [i for i in range(len(rows)) if scored[0][i][2] is not None and scored[1][i][2] is not None]
        print(f"\npoints judged under both dumps: {len(common)}")
        for j in (0, 1):
            print(f"| {a.dump[j]} | {fmt(summary([scored[j][i] for i in common]))} |")
    if a.steps and len(scored) >= 2:
        print("\n| step | points changed | timed both | faster / slower | µs summed (both) | within 5% (both) "
              "| left / joined the judged set |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for j in range(1, len(scored)):
            print(f"| {a.dump[j - 1]} -> {a.dump[j]} | {step_line(scored[j - 1], scored[j])} |")
    if a.changed and len(scored) >= 2:
        print("\n| report | N×K | M | before | µs | after | µs | best | µs |")
        print("|---|---|---:|---|---:|---|---:|---|---:|")
        for (rep, r), b, c in zip(rows, scored[0], scored[1]):
            if b[0] != c[0]:
                us = lambda v: "unmeasured" if v is None else f"{v:.2f}"
                print(f"| {rep} | {r['n']}×{r['k']} | {r['m']} | {b[0]} | {us(b[1])} | {c[0]} | {us(c[1])} | "
                      f"{r['best_config']} | {r['best_us']:.2f} |")


if __name__ == "__main__":
    main()
