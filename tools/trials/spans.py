#!/usr/bin/env python3
"""Per shape, side by side for several `step --trace-tma` timelines (each case, i.e. each M, a column): the median
span of its launches (what a launch adds to the step: scripts/trace_summary.py's "span"), the share of its CTAs
that entered after the dependency ended, its config, and its bytes at the trace's stream-read rate (ideal).
Session 12's trials (tools/trials/step_trial_tables.py, docs/kernels.md "Session 12").

    tools/trials/spans.py NAME=trace.json[.gz] ... [--json OUT]"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import trace_summary  # noqa: E402  (scripts/trace_summary.py: the per-launch arithmetic)


def by_shape(doc):
    """{"NAME/M<m>": {"us", "replay_us", "shapes": {"NxK": {config, launches, span, late, ideal, total}}}}"""
    out = {}
    bw = doc["stream_read_tbps"]
    for case in trace_summary.summarize(doc):
        shapes = {}
        for g in case["groups"]:
            if g["span"] is None:  # the step's first launch alone: no previous launch to span from
                continue
            key = "%dx%d" % (g["n"], g["k"])
            if key in shapes and shapes[key]["launches"] >= g["launches"]:
                continue  # a shape under two configs in one step: the one launched more often
            shapes[key] = {"config": g["config"], "launches": g["launches"], "span": g["span"], "late": g["late"],
                           "ideal": g["n"] * g["k"] * 2 / bw / 1e6, "total": g["span"] * g["launches"]}
        out[case["m"]] = {"us": case["us"], "replay_us": case["replay_us"], "shapes": shapes}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+", help="NAME=path")
    ap.add_argument("--json")
    a = ap.parse_args()
    res = {}
    for item in a.traces:
        name, path = item.split("=", 1)
        for m, r in by_shape(trace_summary.load(path)).items():
            res["%s/M%d" % (name, m)] = r
    names = list(res)
    first = res[names[0]]["shapes"]
    print("%-12s %5s %7s  " % ("NxK", "runs", "ideal") + "  ".join("%-30s" % n for n in names))
    for s in sorted(first, key=lambda s: -first[s]["total"]):
        row = "%-12s %5d %7.2f  " % (s, first[s]["launches"], first[s]["ideal"])
        for n in names:
            g = res[n]["shapes"].get(s)
            row += "  %-30s" % ("-" if g is None else "%6.2f %3.0f%% %s" % (g["span"], 100 * g["late"],
                                                                          g["config"].replace("tma_m8_", "")))
        print(row)
    print("step us: " + "  ".join("%s %.1f" % (n, res[n]["us"]) for n in names))
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
