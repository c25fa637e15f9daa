#!/usr/bin/env python3
"""ctest Scripts.TableScripts: scripts/bucket_study.py, table_take_m.py and table_drop_unjudged.py on small *synthetic* files
(made-up times, written to a temporary folder, never committed as results).

- bucket_study: a point between buckets is charged the time, at its own M, of the config stored for the bucket
  above it; points at a bucket's own M are left out of the summary; a bucket config not measured at that M is
  reported missing; where refine kept the heuristic (a heuristic marker), its pick's time is the point's own, and a
  point whose bucket is a marker is listed as served by the heuristic, with no loss charged.
- table_take_m: --m swaps whole M buckets; without --m every point of the other table replaces the same point
  and new points are added, heuristic markers like entries; tables of another device are refused.
- table_drop_unjudged: heuristic markers are kept, also where the pick is structural, and need not be in the dump.

    python3 tests/scripts/test_table_scripts.py scripts/
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True)


def tune_rows():
    # N=100,K=256: per M, a few candidates; the stored one is the fastest.
    times = {1: {"a": 1.0, "b": 2.0, "cublaslt": 3.0}, 2: {"a": 1.5, "b": 1.2, "cublaslt": 3.0},
             3: {"a": 1.8, "b": 1.2, "cublaslt": 1.5}, 4: {"a": 1.0, "b": 2.0, "cublaslt": 3.0},
             5: {"b": 1.0, "cublaslt": 2.0}, 8: {"a": 1.0, "cublaslt": 2.0}}
    rows = []
    for m, cands in times.items():
        best = min(cands, key=cands.get)
        for c, us in cands.items():
            rows.append({"kind": "gemm", "dtype": "bf16", "n": 100, "k": 256, "m": m, "config": c, "us": us,
                         "stored": c == best})
    # N=200 tuned with refine: the heuristic kept at M = 3 (its pick "b", outside the candidates) and M = 8; "a"
    # stored at M = 4 and 5.
    refined = {3: ({"a": 1.32, "cublaslt": 2.0}, None), 4: ({"a": 1.0, "cublaslt": 2.0}, "a"),
               5: ({"a": 1.0, "cublaslt": 2.0}, "a"), 8: ({"a": 1.0, "b": 0.99}, None)}
    for m, (cands, stored) in refined.items():
        for c, us in cands.items():
            rows.append({"kind": "gemm", "dtype": "bf16", "n": 200, "k": 256, "m": m, "config": c, "us": us,
                         "stored": c == stored})
    kept = [{"dtype": "bf16", "n": 200, "k": 256, "m": 3, "config": "b", "us": 1.1},
            {"dtype": "bf16", "n": 200, "k": 256, "m": 8, "config": "b", "us": 0.99}]
    return {"meta": {"gpu": "synthetic"}, "rows": rows, "heuristic_kept": kept}


def check(cond, what, failures):
    if not cond:
        failures.append(what)


def main(scripts):
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tune = os.path.join(tmp, "tune.json.gz")
        with gzip.open(tune, "wt") as f:
            json.dump(tune_rows(), f)
        out = os.path.join(tmp, "b.json")
        r = run(os.path.join(scripts, "bucket_study.py"), tune, "--buckets", "1,4,8", "--json", out)
        check(r.returncode == 0, "bucket_study.py failed: " + r.stderr, failures)
        if r.returncode == 0:
            s = json.load(open(out))["sets"][0]
            rows = {(x["n"], x["m"]): x for x in s["rows"] if x["m"] != x["bucket"]}
            # N=100: M = 2, 3 are served by M = 4's stored "a"; M = 5 by M = 8's "a", which M = 5 did not measure.
            # N=200: M = 3 by M = 4's "a", against the heuristic's kept pick; M = 5 by M = 8's marker.
            expected = [(100, 2), (100, 3), (200, 3)]
            check(sorted(rows) == expected, f"between-bucket points {sorted(rows)}, expected {expected}", failures)
            check(abs(rows.get((100, 2), {}).get("loss", 0) - (1.5 / 1.2 - 1)) < 1e-9, "loss at M = 2", failures)
            check(abs(rows.get((100, 3), {}).get("loss", 0) - (1.8 / 1.2 - 1)) < 1e-9, "loss at M = 3", failures)
            check(rows.get((100, 3), {}).get("slower_than_cublaslt") is True, "M = 3 is slower than cuBLASLt", failures)
            kept = rows.get((200, 3), {})
            check(kept.get("per_m_config") == "b" and abs(kept.get("loss", 0) - (1.32 / 1.1 - 1)) < 1e-9,
                  f"N=200 M=3 against the kept pick: {kept}", failures)
            check([(x["n"], x["m"]) for x in s["missing"]] == [(100, 5)], f"missing {s['missing']}, expected M = 5",
                  failures)
            check([(x["n"], x["m"], x["bucket"]) for x in s["heuristic"]] == [(200, 5, 8)],
                  f"heuristic {s['heuristic']}, expected N=200 M=5 from M=8", failures)
            check(s["summary"]["over_2pct"] == 3, "over_2pct", failures)

        def table(entries, gpu="NVIDIA H200"):
            return {"meta": {"gpu": gpu, "sms": 132}, "entries": [
                {"dtype": "bf16", "n": n, "k": 256, "m": m, "config": c, "us": 1.0, "cublaslt_us": 2.0}
                for n, m, c in entries]}
        base, other, alien = (os.path.join(tmp, f) for f in ("base.json", "other.json", "alien.json"))
        json.dump(table([(100, 1, "old"), (100, 8, "old"), (200, 1, "old")]), open(base, "w"))
        json.dump(table([(100, 8, "new"), (200, 1, "heuristic"), (300, 1, "new")]), open(other, "w"))
        json.dump(table([(100, 1, "x")], gpu="other"), open(alien, "w"))
        take = os.path.join(scripts, "table_take_m.py")
        swapped = os.path.join(tmp, "swapped.json")
        r = run(take, base, "--from", other, "--m", "1", "--out", swapped)
        got = {(e["n"], e["m"]): e["config"] for e in json.load(open(swapped))["entries"]} if r.returncode == 0 else {}
        check(got == {(100, 8): "old", (200, 1): "heuristic", (300, 1): "new"}, f"--m 1 swap gave {got}", failures)
        r = run(take, base, "--from", other)
        got = {(e["n"], e["m"]): e["config"] for e in json.load(open(base))["entries"]} if r.returncode == 0 else {}
        check(got == {(100, 1): "old", (100, 8): "new", (200, 1): "heuristic", (300, 1): "new"},
              f"merge gave {got}", failures)
        r = run(take, base, "--from", alien)
        check(r.returncode != 0 and "gpu differs" in (r.stdout + r.stderr), "another device's table refused",
              failures)

        # table_drop_unjudged: an entry of another family where the dump's pick is structural is dropped; the
        # structural family's own entries and points the heuristic scores are kept; a dump of another device or
        # without the table's points is refused.
        def dump(points, gpu="NVIDIA H200"):
            return {"device": {"name": gpu, "sms": 132}, "points": [
                {"dtype": "bf16", "n": n, "k": 256, "m": m, "pick": pick, "reason": reason}
                for n, m, pick, reason in points]}
        structural = "heuristic: tma structural pick tma_m8_x: ..."
        json.dump(table([(100, 1, "cublaslt"), (100, 2, "tma_m8_y"), (100, 4, "heuristic"), (100, 32, "cublaslt"),
                         (200, 1, "bulk_m8_z"), (300, 1, "heuristic")]), open(base, "w"))
        dumped, alien_dump, short_dump = (os.path.join(tmp, f) for f in ("d.json", "ad.json", "sd.json"))
        points = [(100, 1, "tma_m8_x", structural), (100, 2, "tma_m8_x", structural), (100, 4, "tma_m8_x", structural),
                  (100, 32, "cublaslt", "heuristic: cuBLASLt predicted ..."), (200, 1, "bulk_m8_z", "heuristic: ...")]
        # (300, 1) is a marker the dump leaves out.
        json.dump(dump(points), open(dumped, "w"))
        json.dump(dump(points, gpu="other"), open(alien_dump, "w"))
        json.dump(dump(points[1:]), open(short_dump, "w"))
        drop = os.path.join(scripts, "table_drop_unjudged.py")
        pruned = os.path.join(tmp, "pruned.json")
        r = run(drop, base, "--dump", dumped, "--out", pruned)
        got = {(e["n"], e["m"]): e["config"] for e in json.load(open(pruned))["entries"]} if r.returncode == 0 else {}
        check(got == {(100, 2): "tma_m8_y", (100, 4): "heuristic", (100, 32): "cublaslt", (200, 1): "bulk_m8_z",
                      (300, 1): "heuristic"}, f"table_drop_unjudged kept {got}", failures)
        check("dropped 1 cublaslt entries where the heuristic's structural pick is tma" in r.stdout,
              f"table_drop_unjudged said {r.stdout!r}", failures)
        r = run(drop, base, "--dump", dumped, "--out", pruned, "--all-families")
        got = {(e["n"], e["m"]): e["config"] for e in json.load(open(pruned))["entries"]} if r.returncode == 0 else {}
        check(got == {(100, 4): "heuristic", (100, 32): "cublaslt", (200, 1): "bulk_m8_z", (300, 1): "heuristic"},
              f"--all-families kept {got}", failures)
        for bad, why in ((alien_dump, "the dump is for other"), (short_dump, "not in the dump")):
            r = run(drop, base, "--dump", bad, "--out", pruned)
            check(r.returncode == 2 and why in r.stderr, f"table_drop_unjudged on a bad dump: {r.stderr!r}", failures)
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
