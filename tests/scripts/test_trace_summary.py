#!/usr/bin/env python3
"""ctest Scripts.TraceSummary: scripts/trace_summary.py on a small *synthetic* --trace-tma file (made-up times,
written to a temporary folder, never committed as results): the per-launch early / late / after / ends / gap
arithmetic, medians per (shape, config), and a clear failure on a file that is not a trace.

    python3 tests/scripts/test_trace_summary.py scripts/trace_summary.py
"""
import json
import os
import subprocess
import sys
import tempfile


def launch(n, k, config, entries, waits, exits):
    return {"n": n, "k": k, "m": 1, "config": config, "ctas": len(entries), "entry_us": entries,
            "waited_us": waits, "exit_us": exits, "sm": list(range(len(entries)))}


def main():
    script = sys.argv[1]
    doc = {"meta": {"gpu": "synthetic"}, "cases": [{"variant": "skinny", "m": 1, "us": 50.0, "replay_us": 50.5,
        "launches": [
            # A: CTAs enter at 0 and 1, the dependency ends at 2 (both waits), exits 10 and 12.
            launch(100, 64, "a", [0.0, 1.0], [2.0, 2.0], [10.0, 12.0]),
            # B: one CTA entered early (5) and waited until 12.5, one late (13, its wait ends at once, 13.5); both on
            # one SM.
            dict(launch(200, 64, "b", [5.0, 13.0], [12.5, 13.5], [20.0, 24.0]), sm=[7, 7]),
            # A again: early 1, after 6, ends 1, gap 26 - 24 = 2.
            launch(100, 64, "a", [25.0, 25.0], [26.0, 26.0], [31.0, 32.0]),
            # C, with the stage times: first stages land 1 and 2 after the dependency (40), last ones are multiplied
            # 3 and 4 later, exits 0.5 and 1.5 after those: xland 1.5, stream 3.5, drain 1.0 (medians over the CTAs).
            dict(launch(300, 64, "c", [35.0, 35.0], [40.0, 40.0], [44.5, 47.5]),
                 first_stage_us=[41.0, 42.0], multiplied_us=[44.0, 46.0]),
        ]}]}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        with open(trace, "w") as f:
            json.dump(doc, f)
        out = os.path.join(tmp, "summary.json")
        r = subprocess.run([sys.executable, script, trace, "--json", out], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "skinny M=1" in r.stdout, r.stdout
        cases = json.load(open(out))["cases"]
        groups = {g["config"]: g for g in cases[0]["groups"]}
        a, b = groups["a"], groups["b"]
        assert a["launches"] == 2 and b["launches"] == 1
        # a: launch 1 early 2, after 10, ends 2; launch 3 early 1, after 6, ends 1 -> medians 1.5, 8, 1.5
        assert abs(a["early"] - 1.5) < 1e-9 and abs(a["after"] - 8.0) < 1e-9 and abs(a["ends"] - 1.5) < 1e-9, a
        assert abs(a["gap"] - 2.0) < 1e-9 and a["late"] == 0, a  # only launch 3 has a previous launch
        assert abs(a["span"] - 8.0) < 1e-9 and abs(groups["b"]["span"] - 12.0) < 1e-9, a  # 32 - 24, 24 - 12
        assert abs(a["after_total"] - 16.0) < 1e-9, a
        # b: the dependency ends at the earliest wait, 12.5: early 12.5 - 5 = 7.5, late 1 of 2 (entered at 13),
        # after 24 - 12.5 = 11.5, ends 4, gap 12.5 - 12 = 0.5
        assert abs(b["early"] - 7.5) < 1e-9 and b["late"] == 0.5 and abs(b["after"] - 11.5) < 1e-9, b
        assert abs(b["ends"] - 4.0) < 1e-9 and abs(b["gap"] - 0.5) < 1e-9, b
        assert a["sms"] == 2 and b["sms"] == 1, (a, b)  # distinct SM ids of a launch's CTAs
        assert [g["config"] for g in cases[0]["groups"]] == ["a", "b", "c"]  # by summed "after" (16, 11.5, 7.5)
        c = groups["c"]
        assert abs(c["xland"] - 1.5) < 1e-9 and abs(c["stream"] - 3.5) < 1e-9 and abs(c["drain"] - 1.0) < 1e-9, c
        assert "xland" not in a, a  # no stage times: no stage columns
        # A CTA that wrote nothing (-1) is an error naming the launch; a step file is not a trace.
        doc["cases"][0]["launches"][1]["exit_us"][0] = -1.0  # one CTA of two
        with open(trace, "w") as f:
            json.dump(doc, f)
        r = subprocess.run([sys.executable, script, trace], capture_output=True, text=True)
        assert r.returncode != 0 and "200x64 b: 1 of its CTAs' times" in r.stderr, (r.returncode, r.stderr)
        with open(trace, "w") as f:
            json.dump({"meta": {}, "rows": []}, f)
        r = subprocess.run([sys.executable, script, trace], capture_output=True, text=True)
        assert r.returncode != 0 and "not a --trace-tma file" in r.stderr, r.stderr
    print("trace_summary: ok")


if __name__ == "__main__":
    main()
