#!/usr/bin/env python3
"""Which of cuBLASLt's heuristic answers to run at M > 16 (issue 18, docs/tuning.md "Session 40"): at every recorded
held-out point where a heuristic dump picks cublaslt_unsplit and the report names each answer's identity, how many
points each rule puts within 5% of the best measured candidate, and their time summed. Rules: the shipped one
(src/backends/cuda/cublaslt_unsplit.h), cuBLASLt's first answer, the best answer (an oracle), threshold variants, the
best wave efficiency among the first answers that qualify, and a model of bytes per SM, waves and the split's reduction.

    skinnygemm heuristic --device h200 --shapes "$(scripts/heuristic_rescore.py --shapes-only REPORTS)" --m 1:64 --json d.json
    scripts/cublaslt_answer_study.py d.json docs/benchmarks/h200/heuristic-*.json
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heuristic_rescore as hr  # noqa: E402

SMS = 132


def answers(row, tiles):
    """cuBLASLt's answers at a report row, in its order: [{i, split, rows, tok, us}], or None where one is unnamed."""
    by = {c["config"]: c for c in row.get("candidates", [])}
    out = []
    while f"cublaslt_a{len(out)}" in by:
        m = hr.IDENTITY.match(by[f"cublaslt_a{len(out)}"].get("identity") or "")
        if not m:
            return None
        rows, tok = tiles.get(int(m[1]), (0, 0))
        out.append(dict(i=len(out), split=int(m[2]), rows=rows, tok=tok, us=by[f"cublaslt_a{len(out)}"]["us"]))
    return out or None


def shipped(r, ans, min_rows=48, tok_factor=2, full_cover=False):
    if ans[0]["split"] == 1:
        return 0
    ok = [a for a in ans[1:] if a["split"] == 1 and a["rows"] >= min_rows and a["tok"] * tok_factor >= r["m"]]
    if full_cover and any(a["tok"] >= r["m"] for a in ok):
        ok = [a for a in ok if a["tok"] >= r["m"]]
    return ok[0]["i"] if ok else 0


def tiles_of(r, a):
    return math.ceil(r["n"] / a["rows"]) * math.ceil(r["m"] / a["tok"]) * max(a["split"], 1)


def best_waves(r, ans, first=3):
    if ans[0]["split"] == 1:
        return 0
    ok = [a for a in ans[1:] if a["split"] == 1 and a["rows"] >= 48 and 2 * a["tok"] >= r["m"]][:first]
    eff = lambda a: tiles_of(r, a) / (math.ceil(tiles_of(r, a) / SMS) * SMS)
    return max(ok, key=lambda a: (eff(a), -a["i"]))["i"] if ok else 0


def model(r, ans, x_weight=0.0, reduce_weight=4.0):
    def cost(a):
        if not a["rows"] or not a["tok"]:
            return float("inf")
        s = max(a["split"], 1)
        per_cta = (a["rows"] + x_weight * a["tok"]) * r["k"] / s
        return math.ceil(tiles_of(r, a) / SMS) * per_cta + (reduce_weight * (s - 1) * r["n"] * r["m"] * 4 / SMS)
    return min(ans, key=lambda a: (cost(a), a["i"]))["i"]


def main():
    dump, reports = sys.argv[1], sys.argv[2:]
    picks = hr.load_dump(dump)
    tiles = hr.tile_shapes("/usr/local/cuda/include/cublasLt.h")
    points = []
    for _, r in hr.load_reports(reports):
        ans = answers(r, tiles) if r["m"] > 16 else None
        if ans and picks.get((r["n"], r["k"], r["m"])) == hr.UNSPLIT:
            points.append((r, ans))
    rules = {"shipped": shipped, "first answer": lambda r, a: 0,
             "best answer (oracle)": lambda r, a: min(a, key=lambda x: x["us"])["i"]}
    for rows in (32, 64, 96):
        rules[f"shipped, tile rows >= {rows}"] = lambda r, a, rows=rows: shipped(r, a, min_rows=rows)
    for f in (1, 4):
        rules[f"shipped, tile tokens >= M / {f}"] = lambda r, a, f=f: shipped(r, a, tok_factor=f)
    rules["shipped, all M tokens in one tile first"] = lambda r, a: shipped(r, a, full_cover=True)
    for k in (2, 3, 6):
        rules[f"best waves among the first {k} that qualify"] = lambda r, a, k=k: best_waves(r, a, k)
    for xw, rw in ((0.0, 4.0), (0.25, 4.0), (0.0, 1.0)):
        rules[f"bytes-per-SM model (x {xw}, reduction {rw})"] = lambda r, a, xw=xw, rw=rw: model(r, a, xw, rw)
    print(f"{len(points)} points at M > 16 where the dump picks {hr.UNSPLIT} and every answer is named")
    print("| rule | within 5% | µs summed |\n|---|---:|---:|")
    for name, rule in rules.items():
        us = [ans[rule(r, ans)]["us"] for r, ans in points]
        within = sum(u <= 1.05 * r["best_us"] for u, (r, _) in zip(us, points))
        print(f"| {name} | {within} | {sum(us):.0f} |")


if __name__ == "__main__":
    main()
