#!/usr/bin/env python3
"""Judges and refits the GPU heuristic's cost models offline, without a GPU (issue 4, docs/tuning.md).

The heuristic lives in the library. What it picks, the configs it scores with their predicted times, its constants
and the device facts come from a dump the CLI writes (on a machine without the GPU too: `--device h200` names the
H200's facts):

    skinnygemm heuristic --device h200 --shapes <every NxK of the tuning files> --m 1:64 --json heuristic.json
    scripts/heuristic_cv.py --dump heuristic.json docs/benchmarks/h200/tune/*.json.gz \\
        --lt-reports docs/benchmarks/h200/heuristic*.json

A dump that lacks tuning points is an error that prints the `skinnygemm heuristic` command covering them.
Other inputs: `skinnygemm tune --json` files (every candidate's time per point) and, for cuBLASLt's model only,
held-out reports (`tune --heuristic-report`: cuBLASLt's default time per point).

- The library's picks (the dump's) are judged on the tuning points: loss against the best measured candidate
  (cuBLASLt's other algorithms included, which no heuristic picks), over all points and by M range (1-4, 5-32, 33-64).
- refit: every constant refitted (bounded least squares on log time, soft-L1) to the measured times of the
  configs the heuristic ranks at the training points (a stage ring beyond one wave is scored but never picked: not
  fitted), judged by 5-fold cross-validation over shapes (a shape's every M in one fold), picking among the configs
  the dump says the heuristic ranks at each point; also each kernel model's cross-validated error on those configs
  by M range (median and 90th percentile of |predicted / measured - 1|).
- `--constants` prints the constants fitted to every point, in the order of the families' constant structs.
- `--measured-points FILE` writes the C++ table of the library's picks with their measured times
  (tests/data/heuristic_measured_points.inc).

The model being fitted: refitting evaluates the cost formulas with other constants, so `MODELS` restates the
library's formulas (src/kernels/bulk/family.cpp, src/backends/cuda/cublaslt_family.cpp)
as functions of named constants, for fitting only; the device facts and each config's registers and shared memory
are the dump's. Before fitting, the formulas with the dump's constants must give the dump's prediction of every
scored config: a formula changed in the library alone is an error naming the config, not the fit of another model.
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

DUMP_SCHEMA = "skinnygemm-heuristic-1"
RESERVED_SMEM = 1024  # the runtime's shared memory per CTA, beside the kernel's (bulk_estimate)


def cdiv(a, b):
    return -(-a // b)


def parse(name):
    p = name.split("_")
    if p[0] != "bulk":  # the one scored kernel family (the register ring, reg_*, was retired in 0.2.0)
        return None
    wn, wk = p[2][1:].split("x")
    return dict(fam=p[0], tile=int(p[1][1:]), wn=int(wn), wk=int(wk), u=int(p[3][1:]), sk=int(p[4][2:]))


def model_key(c):
    return c["fam"]


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


def load_dump(path, pts):
    """The `skinnygemm heuristic --json` dump, its points by (n, k, m); every tuning point must be among them."""
    dump = json.load(open(path))
    if dump.get("schema") != DUMP_SCHEMA:
        sys.exit(f"{path}: schema {dump.get('schema')!r}, expected {DUMP_SCHEMA!r} (`skinnygemm heuristic --json`)")
    dump["points"] = {(p["n"], p["k"], p["m"]): p for p in dump["points"]}
    missing = sorted(set(pts) - set(dump["points"]))
    if missing:
        shapes = ",".join(f"{n}x{k}" for n, k in sorted({p[:2] for p in pts}))
        ms = sorted({p[2] for p in pts})
        ms = f"{ms[0]}:{ms[-1]}" if ms == list(range(ms[0], ms[-1] + 1)) else ",".join(map(str, ms))
        n, k, m = missing[0]
        device = "--device " + dump["device"]["from"].removeprefix("preset ").replace(", ", " ")  # the same facts
        sys.exit(f"{path} lacks {len(missing)} of the {len(pts)} tuning points (first {n}x{k} M={m}); dump them:\n"
                 f"  skinnygemm heuristic {device} --shapes {shapes} --m {ms} --json {path}")
    return dump


# ---- the model being fitted (the library's formulas, for fitting only) -------------------------------------------
Param = collections.namedtuple("Param", "name start low high unit")  # start/low/high in units of `unit`


def resident_ctas_per_sm(dev, threads, registers, smem):  # kernels/common/residency.cpp
    per_sm = min(dev["max_threads_per_sm"] // threads, dev["max_blocks_per_sm"])
    if registers > 0:
        per_sm = min(per_sm, dev["regs_per_sm"] // ((registers + 7) // 8 * 8 * threads))
    if smem > 0:
        per_sm = min(per_sm, dev["smem_per_sm"] // smem)
    return max(per_sm, 1)


CLUSTER8_SMS = 64  # kCluster8Sms (src/kernels/bulk/family.cpp)


def bulk_wave_sms(dev, c):
    leader = c["tile"] <= 16  # bulk_leader_reduce
    return min(dev["sms"], CLUSTER8_SMS) if c["sk"] == 8 and leader else dev["sms"]


def bulk_features(dev, n, k, m, c, cand):
    sms = dev["sms"]
    per_sm = resident_ctas_per_sm(dev, 32 * c["wn"] * c["wk"], 0, cand["smem_bytes"] + RESERVED_SMEM)
    waves = math.ceil(cdiv(n, 16) * c["sk"] / (bulk_wave_sms(dev, c) * per_sm))
    stages = cdiv(cdiv(k, 256), c["sk"])
    slots = 4 * c["u"]
    return [n * k * 2, waves * per_sm * 16 * (k / c["sk"]) * 2, waves, max(1.0, stages / slots),
            cdiv(stages, c["wk"]), min(m, c["tile"]) - 1, math.log2(c["sk"]), c["sk"] - 1, c["tile"] // 8 - 1, sms]


def bulk_model(th, F):
    gap, hbm, rnd, stage, xrow, split, split_lin, tile_row = th
    mem = np.maximum(F[:, 0] / hbm, F[:, 1] / (hbm / F[:, 9]))
    chain = F[:, 2] * (F[:, 3] * rnd + F[:, 4] * stage * (1 + xrow * F[:, 5] + tile_row * F[:, 8]))
    return gap + np.maximum(mem, chain) + split * F[:, 6] + split_lin * F[:, 7]


def lt_features(n, k, m):
    mb, m64 = n * k * 2 / 1e6, m / 64
    small = 1 / (1 + mb / 20)  # fixed costs that fade once the stream dominates
    return [1, mb, (k >= 2048) * small, 1.0 * (k >= 4096), m64, mb * m64, min(math.log2(k / 128), 7) * small]


# Each model's constants in the order of its family's struct, with the fit's start and bounds.
# hbm_bytes_per_us at most the H200's HBM3e peak (4.8 TB/s): fitted to the ranked configs alone, most of them
# latency-bound on narrow shapes, it would otherwise run to the bound (7e6) and leave the wider single-wave shapes'
# bytes at a third of their time (3072 x 5120 M = 1: 7.1 us predicted, 9.8 measured).
MODELS = {"bulk": (bulk_features, bulk_model, [
    Param("gap_us", 1.0, 0, 5, 1), Param("hbm_bytes_per_us", 4.0, 2, 4.8, 1e6), Param("round_us", 1.0, 0, 10, 1),
    Param("stage_us", 0.5, 0, 5, 1), Param("x_row", 0.05, 0, 1, 1), Param("split_us", 0.1, 0, 5, 1),
    Param("split_lin_us", 0.05, 0, 5, 1), Param("tile_row", 0.2, 0, 2, 1)])}
LT_FITTED = ["fixed_us", "mb_us", "k2048_short_us", "k4096_us", "m64_us", "mb_m64_us", "log2_k_short_us"]
LT_FIXED = ["misaligned_factor"]  # cuBLASLt's default where N % 8 != 0; measured on one shape, not fitted


def check_model_names(constants):
    """The dump's constants must be the ones the formulas here read, by name."""
    want = {key: [p.name for p in spec[2]] for key, spec in MODELS.items()}
    want["cublaslt"] = LT_FITTED + LT_FIXED
    unknown = set(constants) - set(want)
    if unknown:
        sys.exit(f"the dump has constants of models not fitted here: {', '.join(sorted(unknown))}: state their "
                 "formulas in scripts/heuristic_cv.py's MODELS")
    for key, names in want.items():
        have = list(constants.get(key, {}))
        if have != names:
            sys.exit(f"the dump's {key} constants are {have}; the model fitted here reads {names}: restate the "
                     "library's formula in scripts/heuristic_cv.py's MODELS")


def kernel_us(th, dev, point, cand):
    c = parse(cand["config"])
    features, model = MODELS[model_key(c)][:2]
    F = np.array([features(dev, point["n"], point["k"], point["m"], c, cand)], float)
    return float(model([th[model_key(c)][p.name] for p in MODELS[model_key(c)][2]], F)[0])


def lt_us(th, n, k, m):
    lt = th["cublaslt"]
    us = max(0.05, float(np.dot([lt[name] for name in LT_FITTED], lt_features(n, k, m))))
    return us * (lt["misaligned_factor"] if n % 8 else 1.0)


def check_formulas(dump):
    """The formulas here with the dump's constants must predict what the library predicted, config by config."""
    th, dev, wrong, checked = dump["heuristic"]["models"], dump["device"], [], 0
    for (n, k, m), point in dump["points"].items():
        pairs = [(c["config"], kernel_us(th, dev, point, c), c["us"]) for c in point["candidates"]]
        pairs.append(("cublaslt", lt_us(th, n, k, m), point["best"]["cublaslt"]["us"]))
        checked += len(pairs)
        wrong += [(n, k, m) + pair for pair in pairs if not math.isclose(pair[1], pair[2], rel_tol=1e-9)]
    for w in wrong[:5]:
        print("%dx%d M=%d %s: the fitted model predicts %.6g us, the library %.6g" % w, file=sys.stderr)
    if wrong:
        sys.exit(f"the fitted model is not the library's at {len(wrong)} of {checked} predictions: restate the "
                 "library's formulas in scripts/heuristic_cv.py's MODELS")
    print(f"the fitted model reproduces the library's {checked} predictions of the dump")


# ---- fitting and judging ----------------------------------------------------------------------------------------
def fit(pts, lt_pts, dump):
    """Constants fitted to the measured times of pts (and cuBLASLt's of lt_pts), by model and name."""
    data = collections.defaultdict(lambda: ([], []))
    dev = dump["device"]
    for p, d in pts.items():
        point = dump["points"][p]
        scored = {c["config"]: c for c in point["candidates"]}
        for name, us in d.items():
            c = parse(name)
            # Not a config the heuristic scores here, or one it scores but never picks (a stage ring beyond one wave:
            # single_wave): the model is fitted where it ranks. Fitting the bulk model to its second waves too left
            # 11 fewer picks within 10% of the best at M = 1-4 under cross-validation (session 34).
            if c is None or name not in scored or not scored[name]["ranked"]:
                continue
            key = model_key(c)
            data[key][0].append(MODELS[key][0](dev, *p, c, scored[name]))
            data[key][1].append(us)
    th = {}
    for key, (F, y) in data.items():
        _, model, params = MODELS[key]
        F, y, unit = np.array(F, float), np.array(y), np.array([q.unit for q in params])
        x = least_squares(lambda t: np.log(model(t * unit, F) / y), [q.start for q in params],
                          bounds=([q.low for q in params], [q.high for q in params]), loss="soft_l1", f_scale=0.2).x
        th[key] = dict(zip((q.name for q in params), x * unit))
    keys = [p for p in lt_pts if p[0] % 8 == 0]
    X = np.array([lt_features(*p) for p in keys])
    y = np.array([lt_pts[p] for p in keys])
    shipped = dump["heuristic"]["models"]["cublaslt"]
    x = least_squares(lambda t: np.log(np.maximum(X @ t, 0.05) / y), [shipped[name] for name in LT_FITTED],
                      loss="soft_l1", f_scale=0.1).x
    th["cublaslt"] = dict(zip(LT_FITTED, x), **{name: shipped[name] for name in LT_FIXED})
    return th


def predicted(th, dump, p):
    """The library's ranking (select.cpp) with constants th: the best ranked scored config by better_pick (None
    where none is) with its predicted time, and cuBLASLt's predicted time."""
    point, tolerance, best = dump["points"][p], dump["heuristic"]["pick_tie_tolerance"], (None, math.inf, 0)
    for cand in point["candidates"]:
        if not cand["ranked"]:
            continue
        us, u = kernel_us(th, dump["device"], point, cand), parse(cand["config"])["u"]
        if us < best[1] * (1 - tolerance) or (us <= best[1] * (1 + tolerance) and u < best[2]):
            best = (cand["config"], us, u)
    return best[0], best[1], lt_us(th, *p)


def pick(prediction, margin):
    """A kernel where it is predicted at most margin x cuBLASLt's time, else cuBLASLt."""
    kernel, us, lt = prediction
    return kernel if kernel and us <= margin * lt else "cublaslt"


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


M_RANGES = ((1, 4), (5, 32), (33, 64))


def by_m(picks):
    """picks split by M range, ranges without points left out."""
    out = {}
    for lo, hi in M_RANGES:
        sel = {p: v for p, v in picks.items() if lo <= p[2] <= hi}
        if sel:
            out[f"M {lo}-{hi}"] = sel
    return out


def prediction_error(fold_constants, folds, pts, dump):
    """Each kernel model's cross-validated error on the configs the heuristic ranks: median and 90th percentile of
    |predicted / measured - 1| by M range, the constants fitted without the point's shape."""
    errs = collections.defaultdict(list)
    for fold, th in zip(folds, fold_constants):
        for p, d in pts.items():
            if p[:2] not in fold:
                continue
            point = dump["points"][p]
            for cand in point["candidates"]:
                if cand["ranked"] and cand["config"] in d:
                    key = model_key(parse(cand["config"]))
                    rng = next(f"M {lo}-{hi}" for lo, hi in M_RANGES if lo <= p[2] <= hi)
                    errs[(key, rng)].append(abs(kernel_us(th, dump["device"], point, cand) / d[cand["config"]] - 1))
    return {f"{key} {rng}": dict(configs=len(e), median=round(float(np.median(e)), 4),
                                 p90=round(float(np.percentile(e, 90)), 4)) for (key, rng), e in sorted(errs.items())}


def write_measured_points(path, pts, dump):
    shapes = [(144, 7168), (896, 7168), (1536, 7168), (3648, 7168), (7168, 1536), (2304, 1536), (1536, 128),
              (20480, 7168), (7168, 14336), (4608, 1536), (224, 7168), (12288, 7168)]
    with open(path, "w") as f:
        f.write("// Written by scripts/heuristic_cv.py --measured-points (tests/cpu/test_cost_model.cpp): "
                "{{M, N, K}, pick, pick_us, best_us, cublaslt_us}\n")
        for n, k in shapes:
            for m in (1, 4, 8, 16, 32, 64):
                d = pts.get((n, k, m))
                if d is None:
                    continue
                name = dump["points"][(n, k, m)]["scored_pick"]
                if name not in d:
                    continue
                f.write(f'{{{{{m}, {n}, {k}, DType::BF16}}, "{name}", {d[name]:.3f}, {min(d.values()):.3f}, '
                        f'{d["cublaslt"]:.3f}}},\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tune_json", nargs="+")
    ap.add_argument("--dump", required=True, help="`skinnygemm heuristic --json` at (at least) the tuning points")
    ap.add_argument("--lt-reports", nargs="*", default=[], help="held-out reports: more cuBLASLt points to fit")
    ap.add_argument("--margins", default="0.8,0.85,0.9", help="kernel margins to cross-validate the refit at")
    ap.add_argument("--constants", action="store_true", help="print the constants fitted to every point")
    ap.add_argument("--measured-points", help="write the C++ table of measured picks (tests/data/*.inc)")
    args = ap.parse_args()
    pts = load(args.tune_json)
    dump = load_dump(args.dump, pts)
    lt_pts = load_lt(pts, args.lt_reports)
    print(f"{len(pts)} points, {sum(len(d) for d in pts.values())} measured candidates, {len(lt_pts)} cuBLASLt points")
    library = {p: dump["points"][p]["scored_pick"] for p in pts}
    print(f"the library's picks ({dump['device']['from']}; constants fitted to these points: not a held-out "
          "judgement):", judge(library, pts))
    for rng, sel in by_m(library).items():
        print(f"    {rng}:", judge(sel, pts))
    if args.measured_points:
        write_measured_points(args.measured_points, pts, dump)
    check_model_names(dump["heuristic"]["models"])
    check_formulas(dump)
    shapes = sorted({p[:2] for p in pts})
    random.Random(1).shuffle(shapes)
    folds = [set(shapes[i::5]) for i in range(5)]
    fold_constants = [fit({p: d for p, d in pts.items() if p[:2] not in fold},
                          {p: v for p, v in lt_pts.items() if p[:2] not in fold}, dump) for fold in folds]
    predictions = {p: predicted(th, dump, p) for fold, th in zip(folds, fold_constants) for p in pts if p[:2] in fold}
    for margin in (float(v) for v in args.margins.split(",")):
        picks = {p: pick(prediction, margin) for p, prediction in predictions.items()}
        print(f"refit, 5-fold over shapes, margin {margin}:", judge(picks, pts))
        for rng, sel in by_m(picks).items():
            print(f"    {rng}:", judge(sel, pts))
    for name, e in prediction_error(fold_constants, folds, pts, dump).items():
        print(f"refit, 5-fold over shapes, error of the {name} predictions (ranked configs):", e)
    if args.constants:
        th = fit(pts, lt_pts, dump)
        for key, values in th.items():
            print(f"{key} {{{', '.join(f'{v:.4g}' for v in values.values())}}}  // {', '.join(values)}")


if __name__ == "__main__":
    sys.exit(main())
