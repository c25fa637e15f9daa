#!/usr/bin/env python3
"""Offline evaluation of heuristics on tuning data, without a GPU (issue 4, docs/tuning.md).

Input: `skinnygemm tune --json` files (every candidate's time per point; docs/benchmarks/h200/tune/*.json.gz).
For each point the pick of a heuristic is looked up among the measured candidates, so its loss against the
best measured config is exact; a pick that was not a candidate counts as "unmeasured".

- `current`: a Python port of src/core/select.cpp's GPU heuristic with the constants of src/core/cost_model.cpp
  (stage ring only, M <= 8, one wave, kernel if predicted <= 0.85x cuBLASLt). `--check-port REPORT` replays it on
  a held-out report (`tune --heuristic-report`) and counts the points where it picks what the C++ picked.
- `refit`: the same model structures (estimate_bulk, estimate_reg, the cuBLASLt fit) with constants refitted
  (bounded least squares on log time) to the training points; candidates as the table is tuned
  (scripts/tune-table): stage ring and register ring up to M = 4, the register ring above, smallest token tile.
  Judged by 5-fold cross-validation over shapes (a shape's every M is in one fold).

    scripts/heuristic_cv.py docs/benchmarks/h200/tune/*.json.gz [--check-port docs/benchmarks/h200/heuristic.json]
"""
import argparse
import collections
import gzip
import json
import math
import random
import sys

import numpy as np
from scipy.optimize import least_squares

SMS = 132
PITCH = 576  # kBulkPitchBytes


def cdiv(a, b):
    return -(-a // b)


def parse(name):
    p = name.split("_")
    if p[0] not in ("bulk", "reg"):
        return None
    wn, wk = p[2][1:].split("x")
    return dict(fam=p[0], tile=int(p[1][1:]), wn=int(wn), wk=int(wk), u=int(p[3][1:]), sk=int(p[4][2:]))


def load(paths):
    pts = collections.defaultdict(dict)
    for path in paths:
        for r in json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))["rows"]:
            pts[(r["n"], r["k"], r["m"])][r["config"]] = r["us"]
    return pts


# ---- model features (cost_model.cpp) -------------------------------------------------------------------------
def registers(c):  # estimated_registers
    if c["fam"] == "bulk":
        return 40 if c["tile"] <= 16 else 56 if c["tile"] == 32 else 80
    u4 = c["u"] == 4
    return {8: 112 if u4 else 64, 16: 145 if u4 else 90, 32: 246 if u4 else 144}.get(c["tile"], 244)


def bulk_smem(c, m):  # bulk_launch_smem_bytes
    slot = (16 + min(m, c["tile"])) * PITCH
    partials = c["tile"] * (16 + 4) * c["wk"] * 4
    leader = 16 + (c["sk"] - 1) * c["tile"] * 16 * 4 if c["sk"] > 1 and c["tile"] <= 16 else 0
    return 128 + 4 * c["u"] * slot + partials + leader


def bulk_features(n, k, m, c):
    per_sm = max(1, min((228 * 1024) // (bulk_smem(c, m) + 1024), 2048 // (32 * c["wk"]), 32))
    ctas = cdiv(n, 16) * c["sk"]
    stages = cdiv(cdiv(k, 256), c["sk"])
    waves_f = ctas / (SMS * per_sm)
    waves = math.ceil(waves_f)
    return [n * k * 2, waves * per_sm * 16 * (k / c["sk"]) * 2, waves * cdiv(stages, 4 * c["u"]),
            waves * stages / c["wk"], min(m, c["tile"]) - 1, math.log2(c["sk"]), waves_f]


def bulk_model(th, F):
    gap, hbm, rnd, stage, split, xrow = th
    mem = np.maximum(F[:, 0] / (hbm * 1e6), F[:, 1] / (hbm * 1e6 / SMS))
    return gap + np.maximum(mem, F[:, 2] * rnd + F[:, 3] * stage * (1 + xrow * F[:, 4])) + split * F[:, 5]


def reg_features(n, k, m, c):
    threads = 32 * c["wn"] * c["wk"]
    regs = (registers(c) + 7) // 8 * 8
    per_sm = max(1, min(2048 // threads, 65536 // (regs * threads), 32))
    blocks = cdiv(cdiv(n, 16), c["wn"])
    clusters = min(blocks, max(1, per_sm * SMS // c["sk"]))
    per_cta = cdiv(blocks, clusters)
    ctas_per_sm = cdiv(clusters * c["sk"], SMS)
    rounds = per_cta * cdiv(cdiv(cdiv(k, 32), c["wk"] * c["sk"]), c["u"])
    sm_bytes = ctas_per_sm * per_cta * 16 * c["wn"] * (k / c["sk"]) * 2
    return [n * k * 2, sm_bytes, rounds, math.log2(c["sk"]), c["tile"] / 8 - 1]


def reg_model(th, F):
    gap, rnd, hbm, split, tile_cost, level, burst = th
    mem = np.maximum(F[:, 0] / (hbm * 1e6), F[:, 1] / (burst * hbm * 1e6 / SMS))
    return (gap + np.maximum(mem, F[:, 2] * rnd) + split * F[:, 3]) * (1 + tile_cost * F[:, 4]) * level


def lt_features(n, k, m):
    mb, m64 = n * k * 2 / 1e6, m / 64
    return [1, mb, 1.0 * (k >= 4096), m64, mb * m64]


# Constants of src/core/cost_model.cpp at this revision (hbm in bytes/us / 1e6).
CURRENT = dict(bulk=[0.0018, 4.148, 3.145, 0.578, 0.2965, 0.0739],
               reg=[1.277, 0.956, 4.505, 0.914, 0.282, 1 / 1.27, 1.6],
               lt=[3.53, 0.235, 1.38, 0.083, 0.0116])
BOUNDS = dict(bulk=([0, 2, 0, 0, 0, 0], [5, 6, 10, 5, 5, 1]),
              reg=([0, 0.05, 2, 0, 0, 0.2, 1], [5, 5, 6, 5, 2, 3, 4]))


def predict(th, fam, n, k, m, c):
    if fam == "bulk":
        f = bulk_features(n, k, m, c)
        return float(bulk_model(th["bulk"], np.array([f]))[0]), f[-1]
    return float(reg_model(th["reg"], np.array([reg_features(n, k, m, c)]))[0]), 0.0


def lt_predict(th, n, k, m):
    return float(np.dot(th["lt"], lt_features(n, k, m)))


# ---- heuristics -------------------------------------------------------------------------------------------------
BULK_M8 = [f"bulk_m8_w1x{wk}_u{u}_sk{sk}" for wk in (4, 8) for u in (2, 4) for sk in (1, 2, 4, 8)]


def pick_current(th, n, k, m, margin=0.85):
    """select.cpp heuristic_choice on a GPU: the stage ring at M <= 8, one wave, vs cuBLASLt's prediction."""
    best = None
    if m <= 8:
        for name in BULK_M8:
            c = parse(name)
            if cdiv(k, 256) < c["sk"]:
                continue
            us, waves = predict(th, "bulk", n, k, m, c)
            if waves > 1:
                continue
            if best is None or us < best[1] * (1 - 1e-3) or (us <= best[1] * (1 + 1e-3) and c["u"] < parse(best[0])["u"]):
                best = (name, us)
    if best and best[1] <= margin * lt_predict(th, n, k, m):
        return best[0]
    return "cublaslt"


def pick_refit(th, n, k, m, measured, margin, bulk_max_m=4):
    """Candidates as tuned (measured at the point): stage ring (one wave) up to bulk_max_m, register ring."""
    best = None
    for name in measured:
        c = parse(name)
        if c is None or (c["fam"] == "bulk" and m > bulk_max_m):
            continue
        us, waves = predict(th, c["fam"], n, k, m, c)
        if waves > 1:
            continue
        if best is None or us < best[1] * (1 - 1e-3):
            best = (name, us)
    if best and best[1] <= margin * lt_predict(th, n, k, m):
        return best[0]
    return "cublaslt"


def fit(pts):
    th = {}
    for fam, feats, model in (("bulk", bulk_features, bulk_model), ("reg", reg_features, reg_model)):
        F, y = [], []
        for (n, k, m), d in pts.items():
            for name, us in d.items():
                c = parse(name)
                if c and c["fam"] == fam:
                    F.append(feats(n, k, m, c))
                    y.append(us)
        F, y = np.array(F), np.array(y)
        th[fam] = list(least_squares(lambda t: np.log(model(t, F) / y), CURRENT[fam], bounds=BOUNDS[fam],
                                     loss="soft_l1", f_scale=0.2).x)
    X = np.array([lt_features(*p) for p, d in pts.items() if "cublaslt" in d])
    y = np.array([d["cublaslt"] for d in pts.values() if "cublaslt" in d])
    th["lt"] = list(least_squares(lambda t: np.log(np.maximum(X @ t, 0.05) / y), CURRENT["lt"]).x)
    return th


def judge(picks, pts):
    losses, slower, unmeasured = [], 0, 0
    for p, name in picks.items():
        d = pts[p]
        if name not in d:
            unmeasured += 1
            continue
        losses.append(d[name] / min(d.values()) - 1)
        slower += d[name] > d["cublaslt"]
    L = np.array(losses)
    return dict(points=len(L), unmeasured=unmeasured, median=float(np.median(L)), within_10pct=int((L <= 0.1).sum()),
                worst=float(L.max()), slower_than_cublaslt=int(slower))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tune_json", nargs="+")
    ap.add_argument("--check-port", help="a held-out report: how often the port picks what the C++ heuristic did")
    ap.add_argument("--margins", default="0.85,0.9,0.95")
    args = ap.parse_args()
    if args.check_port:
        rows = json.load(open(args.check_port))["rows"]
        same = sum(pick_current(CURRENT, r["n"], r["k"], r["m"]) == r["config"] for r in rows)
        print(f"port of the current heuristic: the C++ pick at {same} of {len(rows)} points of {args.check_port}")
    pts = load(args.tune_json)
    print(f"{len(pts)} points, {sum(len(d) for d in pts.values())} measured candidates")
    print("current heuristic:", judge({p: pick_current(CURRENT, *p) for p in pts}, pts))
    shapes = sorted({p[:2] for p in pts})
    random.Random(1).shuffle(shapes)
    folds = [set(shapes[i::5]) for i in range(5)]
    for margin in (float(v) for v in args.margins.split(",")):
        picks = {}
        for fold in folds:
            th = fit({p: d for p, d in pts.items() if p[:2] not in fold})
            for p, d in pts.items():
                if p[:2] in fold:
                    picks[p] = pick_refit(th, *p, d, margin)
        print(f"refit, 5-fold over shapes, margin {margin}:", judge(picks, pts))
    th = fit(pts)
    print("refit constants on every point:", {k: [round(v, 4) for v in t] for k, t in th.items()})


if __name__ == "__main__":
    sys.exit(main())
