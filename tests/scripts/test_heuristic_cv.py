#!/usr/bin/env python3
"""ctest Scripts.HeuristicCv: scripts/heuristic_cv.py offline, on the dump `skinnygemm heuristic` writes for the
H200's facts at a few points and a *synthetic* tune file (made-up times: the dump's predictions with a
deterministic error, written to a temporary folder, never committed as results).

- The dump's scored picks are judged at every tune point; the fitted model reproduces the dump's predictions; the
  refit's cross-validation and --constants run, the constants under the dump's names; --measured-points writes
  one row per point of its shapes.
- Refused, naming what is wrong: a dump whose constants the formulas do not reproduce, one with a constant the
  fitted model does not read, one lacking a tune point (with the `skinnygemm heuristic` command covering it), a
  file of another schema.

Skipped, visibly, without numpy/scipy.

    python3 tests/scripts/test_heuristic_cv.py build/cpu/skinnygemm scripts/heuristic_cv.py
"""
import ast
import copy
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

DEBIAN_PYTHON = "/usr/bin/python3"  # where scripts/lib/setup.sh installs python3-numpy and python3-scipy
# Shapes of the script's --measured-points table, each kernel family's and cuBLASLt's picks among them.
SHAPES = "144x7168,1536x128,2304x1536,3648x7168,7168x1536"  # sorted, as the script names them
MS = "1,4,8,16,32,64"


def tune_file(dump):
    """Every scored config and cuBLASLt at every dumped point, timed at its prediction within +-4%."""
    rows = []
    for point in dump["points"]:
        times = {c["config"]: c["us"] for c in point["candidates"]}
        times["cublaslt"] = point["best"]["cublaslt"]["us"]
        times["cublaslt_a0"] = 1.02 * times["cublaslt"]
        for i, (config, us) in enumerate(times.items()):
            rows.append(dict(n=point["n"], k=point["k"], m=point["m"], config=config,
                             us=us * (1 + 0.04 * math.sin(7 * i + point["m"] + point["n"]))))
    return {"meta": {"gpu": "synthetic"}, "rows": rows}


def main(cli, script):
    for module in ("numpy", "scipy"):
        if importlib.util.find_spec(module) is None:
            if sys.executable != DEBIAN_PYTHON and os.path.exists(DEBIAN_PYTHON):
                os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)  # the first python3 on PATH may lack them
            print(f"SKIPPED: {module} is not importable by {sys.executable}")
            return 0
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        dump_path, tune_path, inc_path = (os.path.join(tmp, f) for f in ("dump.json", "tune.json", "points.inc"))
        made = subprocess.run([cli, "heuristic", "--device", "h200", "--shapes", SHAPES, "--m", MS, "--json",
                               dump_path], capture_output=True, text=True)
        if made.returncode != 0:
            print(f"FAIL: skinnygemm heuristic exited {made.returncode}:\n{made.stdout}{made.stderr}")
            return 1
        dump = json.load(open(dump_path))
        with open(tune_path, "w") as f:
            json.dump(tune_file(dump), f)

        def cv(dump_file, *extra):
            return subprocess.run([sys.executable, script, tune_path, "--dump", dump_file, "--margins", "0.85", *extra],
                                  capture_output=True, text=True)

        r = cv(dump_path, "--constants", "--measured-points", inc_path)
        out = r.stdout + r.stderr
        check(r.returncode == 0, f"the script exited {r.returncode}:\n{out}")
        picks_line = next((line for line in r.stdout.splitlines() if line.startswith("the library's picks")), "")
        judged = ast.literal_eval(picks_line[picks_line.index("{"):]) if picks_line else {}
        check(judged.get("points") == 30 and judged.get("unmeasured") == 0, f"the library's 30 picks judged: {out}")
        check("the fitted model reproduces the library's" in out, f"no model check:\n{out}")
        check("refit, 5-fold over shapes, margin 0.85: {'points': 30" in out, f"no cross-validation:\n{out}")
        models = dump["heuristic"]["models"]
        for key, values in models.items():
            check(any(line.startswith(key + " {") and line.endswith("// " + ", ".join(values))
                      for line in r.stdout.splitlines()), f"no fitted {key} constants by name:\n{out}")
        rows = open(inc_path).read().splitlines()[1:] if os.path.exists(inc_path) else []
        check(len(rows) == 30, f"--measured-points wrote {len(rows)} rows, expected 30")
        picks = {(p["m"], p["n"], p["k"]): p["scored_pick"] for p in dump["points"]}
        check(all(f'"{picks[(p["m"], p["n"], p["k"])]}"' in "\n".join(rows) for p in dump["points"]),
              "--measured-points rows are not the dump's picks")

        def refused(changed, fragment):
            path = os.path.join(tmp, "changed.json")
            with open(path, "w") as f:
                json.dump(changed, f)
            r = cv(path)
            check(r.returncode != 0 and fragment in r.stdout + r.stderr,
                  f"not refused with '{fragment}' (exit {r.returncode}):\n{r.stdout}{r.stderr}")

        other = copy.deepcopy(dump)
        other["heuristic"]["models"]["bulk"]["gap_us"] += 1
        refused(other, "the fitted model is not the library's")
        other = copy.deepcopy(dump)
        bulk = other["heuristic"]["models"]["bulk"]
        other["heuristic"]["models"]["bulk"] = {("gap2_us" if k == "gap_us" else k): v for k, v in bulk.items()}
        refused(other, "the dump's bulk constants are")
        other = copy.deepcopy(dump)
        other["points"] = other["points"][1:]
        refused(other, f"skinnygemm heuristic --device h200 --shapes {SHAPES} --m {MS} --json")
        other = dict(dump, schema="skinnygemm-heuristic-0")
        refused(other, "schema 'skinnygemm-heuristic-0'")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
