#!/usr/bin/env python3
"""Fits and judges the GPU heuristic's cost models offline, without a GPU (issue 4, docs/tuning.md).

Input: `skinnygemm tune --json` files (every candidate's time per point; docs/benchmarks/h200/tune/*.json.gz) and,
for cuBLASLt's model only, held-out reports (`tune --heuristic-report`: cuBLASLt's default time per point).

- The models are those of src/runtime/cost_model.cpp (session 5): the stage ring (`bulk`), the register ring with
  its own constants per token tile (`reg8` .. `reg64`) and cuBLASLt's default (`lt`). `CURRENT` holds the
  constants compiled into the library; `pick_current` is a port of select.cpp's GPU heuristic with them (the
  stage ring up to M = 4 in one wave, the register ring at the smallest token tile holding M, a kernel only
  where it is predicted at most 0.85x cuBLASLt). `--check-port REPORT` counts the points of a held-out report
  where the port picks what the C++ picked.
- `fit` refits every constant (bounded least squares on log time, soft-L1) to the training points; judged by
  5-fold cross-validation over shapes (a shape's every M in one fold), loss against the best measured
  candidate (cuBLASLt's other algorithms included, which no heuristic picks).
- `--constants` prints the constants fitted to every point, in CURRENT's layout, for cost_model.cpp.

    scripts/heuristic_cv.py docs/benchmarks/h200/tune/*.json.gz --lt-reports docs/benchmarks/h200/heuristic*.json
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
BULK_MAX_M = 4  # the stage ring is a candidate up to this M (scripts/tune-table: a register ring behind it is slow)
MARGIN = 0.85  # kHeuristicKernelMargin
REG_TILES = (8, 16, 32, 64)
REG_LAYOUTS = ((1, 4), (1, 8), (2, 4), (4, 2))  # kWarpLayouts order (ties go to the first)


def cdiv(a, b):
    return -(-a // b)


def parse(name):
    p = name.split("_")
    if p[0] not in ("bulk", "reg"):
        return None
    wn, wk = p[2][1:].split("x")
    return dict(fam=p[0], tile=int(p[1][1:]), wn=int(wn), wk=int(wk), u=int(p[3][1:]), sk=int(p[4][2:]))


def model_key(c):
    return "bulk" if c["fam"] == "bulk" else f"reg{c['tile']}"


def load(paths):
    pts = collections.defaultdict(dict)
    for path in paths:
        for r in json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))["rows"]:
            pts[(r["n"], r["k"], r["m"])][r["config"]] = r["us"]
    return pts


def load_lt(pts, reports):
    """cuBLASLt's default time per point: the tuning data, then held-out reports."""
    lt = {p: d["cublaslt"] for p, d in pts.items() if "cublaslt" in d}
    for path in reports or []:
        for r in json.load(open(path))["rows"]:
            lt.setdefault((r["n"], r["k"], r["m"]), r["cublaslt_us"])
    return lt


# ---- the models (cost_model.cpp) ---------------------------------------------------------------------------------
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


def bulk_waves(n, k, m, c):
    per_sm = max(1, min((228 * 1024) // (bulk_smem(c, m) + 1024), 2048 // (32 * c["wk"]), 32))
    return per_sm, cdiv(n, 16) * c["sk"] / (SMS * per_sm)


def bulk_features(n, k, m, c):
    per_sm, waves_f = bulk_waves(n, k, m, c)
    waves = math.ceil(waves_f)
    stages = cdiv(cdiv(k, 256), c["sk"])
    slots = 4 * c["u"]
    return [n * k * 2, waves * per_sm * 16 * (k / c["sk"]) * 2, waves, max(1.0, stages / slots), stages / c["wk"],
            min(m, c["tile"]) - 1, math.log2(c["sk"]), c["sk"] - 1, slots]


def bulk_model(th, F):
    gap, hbm, rnd, stage, xrow, split, split_lin, wave, slot = th
    mem = np.maximum(F[:, 0] / (hbm * 1e6), F[:, 1] / (hbm * 1e6 / SMS))
    chain = F[:, 2] * (F[:, 3] * rnd + F[:, 4] * stage * (1 + xrow * F[:, 5]))
    return gap + np.maximum(mem, chain) + split * F[:, 6] + split_lin * F[:, 7] + wave * (F[:, 2] - 1) + slot * F[:, 8]


def reg_features(n, k, m, c):
    threads = 32 * c["wn"] * c["wk"]
    regs = (registers(c) + 7) // 8 * 8
    per_sm = max(1, min(2048 // threads, 65536 // (regs * threads), 32))
    blocks = cdiv(cdiv(n, 16), c["wn"])
    clusters = min(blocks, max(1, per_sm * SMS // c["sk"]))
    per_cta = cdiv(blocks, clusters)
    ctas_per_sm = cdiv(clusters * c["sk"], SMS)
    chunks = cdiv(cdiv(k, 32), c["wk"] * c["sk"])
    sm_bytes = ctas_per_sm * per_cta * 16 * c["wn"] * (k / c["sk"]) * 2
    return [n * k * 2, sm_bytes, per_cta * max(1.0, chunks / c["u"]), math.log2(c["sk"]), per_cta, c["sk"] - 1,
            chunks * per_cta]


def reg_model(th, F):
    gap, rnd, hbm, split, burst, block, split_lin, chunk = th
    mem = np.maximum(F[:, 0] / (hbm * 1e6), F[:, 1] / (burst * hbm * 1e6 / SMS))
    return (gap + np.maximum(mem, F[:, 2] * rnd + F[:, 6] * chunk) + split * F[:, 3] + block * F[:, 4] +
            split_lin * F[:, 5])


def lt_features(n, k, m):
    mb, m64 = n * k * 2 / 1e6, m / 64
    small = 1 / (1 + mb / 20)  # fixed costs that fade once the stream dominates
    return [1, mb, (k >= 2048) * small, 1.0 * (k >= 4096), m64, mb * m64, min(math.log2(k / 128), 7) * small]


LT_MISALIGNED = 1.5  # cuBLASLt's default where N % 8 != 0 (rows of y not 16-byte aligned): 9999x2048, 1.5-6x

MODELS = {"bulk": (bulk_features, bulk_model,
                   [1.0, 4.5, 1.0, 0.5, 0.05, 0.1, 0.05, 2.0, 0.01],
                   ([0, 2, 0, 0, 0, 0, 0, 0, 0], [5, 7, 10, 5, 1, 5, 5, 10, 1]))}
for _t in REG_TILES:
    MODELS[f"reg{_t}"] = (reg_features, reg_model, [1.5, 0.5, 4.5, 0.5, 1.6, 0.2, 0.05, 0.01],
                          ([0, 0, 2, 0, 1, 0, 0, 0], [6, 5, 7, 5, 4, 3, 3, 1]))

# Constants of src/runtime/cost_model.cpp at this revision.
CURRENT = {
    "bulk": [0.8603, 5.066, 0.621, 0.8985, 0.03689, 0, 0.09956, 2.765, 0],
    "reg8": [0.1095, 0.9242, 3.29, 0.2519, 1.549, 1.972, 0, 0],
    "reg16": [0, 0.09544, 3.105, 0.36, 3.997, 2.632, 0, 0.4277],
    "reg32": [0.539, 0, 2.58, 0.1979, 1.103, 2.6, 0, 0.6264],
    "reg64": [0.254, 1.764, 7.0, 2.001, 2.094, 3.0, 0, 0],
    "lt": [2.442, 0.2415, 1.411, 0.9846, 0.3083, 0.005854, 0.2189],
}


def predict(th, n, k, m, c):
    features, model = MODELS[model_key(c)][:2]
    return float(model(np.array(th[model_key(c)]), np.array([features(n, k, m, c)], float))[0])


def lt_predict(th, n, k, m):
    us = max(0.05, float(np.dot(th["lt"], lt_features(n, k, m))))
    return us * (LT_MISALIGNED if n % 8 else 1.0)


# ---- the heuristic ----------------------------------------------------------------------------------------------
def candidates(n, k, m):
    """What select.cpp scores: the stage ring (8-token tile, w1x4/w1x8) up to BULK_MAX_M in one wave, and the
    register ring at the smallest token tile holding M; only configs whose K slices all get work."""
    out = []
    if m <= BULK_MAX_M:
        out += [f"bulk_m8_w1x{wk}_u{u}_sk{sk}" for wk in (4, 8) for u in (2, 4) for sk in (1, 2, 4, 8)]
    tile = next(t for t in REG_TILES if t >= m)
    out += [f"reg_m{tile}_w{wn}x{wk}_u{u}_sk{sk}" for wn, wk in REG_LAYOUTS for u in (2, 4) for sk in (1, 2, 4, 8)
            if tile * u <= 128]
    keep = []
    for name in out:
        c = parse(name)
        if c["fam"] == "bulk" and (cdiv(k, 256) < c["sk"] or bulk_waves(n, k, m, c)[1] > 1):
            continue
        if c["fam"] == "reg" and cdiv(k, 32) < c["wk"] * c["sk"]:
            continue
        keep.append(name)
    return keep


def pick(th, n, k, m, margin=MARGIN):
    best = None
    for name in candidates(n, k, m):
        c = parse(name)
        us = predict(th, n, k, m, c)
        # better_pick: faster by > 0.1%, or as fast with a smaller unroll (list order breaks the rest)
        if best is None or us < best[1] * (1 - 1e-3) or (us <= best[1] * (1 + 1e-3) and c["u"] < parse(best[0])["u"]):
            best = (name, us)
    if best and best[1] <= margin * lt_predict(th, n, k, m):
        return best[0]
    return "cublaslt"


def pick_current(n, k, m):
    return pick(CURRENT, n, k, m)


# ---- fitting and judging ----------------------------------------------------------------------------------------
def fit(pts, lt_pts):
    data = collections.defaultdict(lambda: ([], []))
    for (n, k, m), d in pts.items():
        for name, us in d.items():
            c = parse(name)
            if c is None or (c["fam"] == "bulk" and m > BULK_MAX_M):
                continue
            key = model_key(c)
            data[key][0].append(MODELS[key][0](n, k, m, c))
            data[key][1].append(us)
    th = {}
    for key, (F, y) in data.items():
        _, model, start, bounds = MODELS[key]
        F, y = np.array(F, float), np.array(y)
        th[key] = list(least_squares(lambda t: np.log(model(t, F) / y), start, bounds=bounds, loss="soft_l1",
                                     f_scale=0.2).x)
    keys = [p for p in lt_pts if p[0] % 8 == 0]
    X = np.array([lt_features(*p) for p in keys])
    y = np.array([lt_pts[p] for p in keys])
    th["lt"] = list(least_squares(lambda t: np.log(np.maximum(X @ t, 0.05) / y), CURRENT["lt"], loss="soft_l1",
                                  f_scale=0.1).x)
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
    return dict(points=len(L), unmeasured=unmeasured, median=round(float(np.median(L)), 4),
                within_10pct=int((L <= 0.1).sum()), worst=round(float(L.max()), 3), slower_than_cublaslt=int(slower))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tune_json", nargs="+")
    ap.add_argument("--lt-reports", nargs="*", default=[], help="held-out reports: more cuBLASLt points to fit")
    ap.add_argument("--check-port", help="a held-out report: how often the port picks what the C++ heuristic did")
    ap.add_argument("--margins", default="0.8,0.85,0.9")
    ap.add_argument("--constants", action="store_true", help="print the constants fitted to every point")
    ap.add_argument("--port-fixture", help="write the port's picks (CURRENT) at every point and held-out shape to this "
                    "JSON, for the C++ test that the library picks the same (tests/cpu/test_cost_model.cpp)")
    ap.add_argument("--measured-points", help="write the C++ table of measured picks (tests/data/*.inc)")
    ap.add_argument("--fixture-shapes", nargs="*", default=[], help="models/*.json files: more shapes for the fixture")
    args = ap.parse_args()
    if args.check_port:
        rows = json.load(open(args.check_port))["rows"]
        same = sum(pick_current(r["n"], r["k"], r["m"]) == r["config"] for r in rows)
        print(f"port of the current heuristic: the C++ pick at {same} of {len(rows)} points of {args.check_port}")
    pts = load(args.tune_json)
    lt_pts = load_lt(pts, args.lt_reports)
    print(f"{len(pts)} points, {sum(len(d) for d in pts.values())} measured candidates, {len(lt_pts)} cuBLASLt points")
    print("current constants (fitted to these points: not a held-out judgement):",
          judge({p: pick_current(*p) for p in pts}, pts))
    shapes = sorted({p[:2] for p in pts})
    random.Random(1).shuffle(shapes)
    folds = [set(shapes[i::5]) for i in range(5)]
    for margin in (float(v) for v in args.margins.split(",")):
        picks = {}
        for fold in folds:
            th = fit({p: d for p, d in pts.items() if p[:2] not in fold},
                     {p: v for p, v in lt_pts.items() if p[:2] not in fold})
            for p in pts:
                if p[:2] in fold:
                    picks[p] = pick(th, *p, margin)
        print(f"refit, 5-fold over shapes, margin {margin}:", judge(picks, pts))
    if args.port_fixture:
        points = set(pts)
        for path in args.fixture_shapes:
            for proj in json.load(open(path))["projections"]:
                n, k = (int(v) for v in proj["shape"]["1"].split("x"))
                points |= {(n, k, m) for m in (1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 48, 64)}
        rows = [dict(n=n, k=k, m=m, pick=pick_current(n, k, m)) for n, k, m in sorted(points)]
        with open(args.port_fixture, "w") as f:  # one point per line
            f.write('{"note": "written by scripts/heuristic_cv.py --port-fixture: the GPU heuristic\'s picks (the '
                    'Python port, constants of src/runtime/cost_model.cpp)",\n"points": [\n')
            f.write(",\n".join(json.dumps(r) for r in rows) + "\n]}\n")
        print(f"{args.port_fixture}: {len(rows)} points, {sum(r['pick'] != 'cublaslt' for r in rows)} kernel picks")
    if args.measured_points:
        shapes = [(144, 7168), (896, 7168), (1536, 7168), (3648, 7168), (7168, 1536), (2304, 1536), (1536, 128),
                  (20480, 7168), (7168, 14336), (4608, 1536), (224, 7168), (12288, 7168)]
        with open(args.measured_points, "w") as f:
            f.write("// Written by scripts/heuristic_cv.py --measured-points (tests/cpu/test_cost_model.cpp): "
                    "{{M, N, K}, pick, pick_us, best_us, cublaslt_us}\n")
            for n, k in shapes:
                for m in (1, 4, 8, 16, 32, 64):
                    d = pts.get((n, k, m))
                    name = pick_current(n, k, m)
                    if d is None or name not in d:
                        continue
                    f.write(f'{{{{{m}, {n}, {k}, DType::BF16}}, "{name}", {d[name]:.3f}, {min(d.values()):.3f}, '
                            f'{d["cublaslt"]:.3f}}},\n')
    if args.constants:
        th = fit(pts, lt_pts)
        for key in sorted(th):
            print(f'    "{key}": [{", ".join(f"{v:.4g}" for v in th[key])}],')


if __name__ == "__main__":
    sys.exit(main())
