#!/usr/bin/env python3
"""ctest Scripts.HeuristicCv: scripts/heuristic_cv.py's port of the C++ GPU heuristic (src/runtime/select.cpp,
src/runtime/cost_model.cpp) picks what tests/data/heuristic_picks.json says at every point; the C++ test
HeuristicModel.PicksWhatTheFittedPortPicks checks the library against the same file. If the constants change on
one side only, one of the two fails. Skipped, visibly, without numpy/scipy.

    python3 tests/scripts/test_heuristic_cv.py scripts/heuristic_cv.py tests/data/heuristic_picks.json
"""
import importlib.util
import json
import os
import sys

DEBIAN_PYTHON = "/usr/bin/python3"  # where scripts/lib/setup.sh installs python3-numpy and python3-scipy


def main(script, fixture):
    for module in ("numpy", "scipy"):
        if importlib.util.find_spec(module) is None:
            if sys.executable != DEBIAN_PYTHON and os.path.exists(DEBIAN_PYTHON):
                os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)  # the first python3 on PATH may lack them
            print(f"SKIPPED: {module} is not importable by {sys.executable}")
            return 0
    spec = importlib.util.spec_from_file_location("heuristic_cv", script)
    cv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cv)
    rows = json.load(open(fixture))["points"]
    wrong = [(r["n"], r["k"], r["m"], r["pick"], cv.pick_current(r["n"], r["k"], r["m"])) for r in rows
             if cv.pick_current(r["n"], r["k"], r["m"]) != r["pick"]]
    for w in wrong[:10]:
        print("FAIL: %dx%d M=%d: the fixture says %s, the port %s" % w)
    print(f"port agrees at {len(rows) - len(wrong)} of {len(rows)} points")
    return 1 if wrong or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
