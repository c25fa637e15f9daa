#!/usr/bin/env python3
"""Reads `skinnygemm step --trace-tma FILE` and says, per case and per (shape, config), where each TMA launch's
time goes next to its neighbours (docs/kernels.md "Session 11": 16- and 32-row tiles win alone and lose 6.6-11.5 us
per launch in the step). Per launch, from its CTAs' entry, end of griddepcontrol.wait and exit (us from the
replay's first entry):
  early   the dependency's end (the earliest end of a CTA's wait: CTAs that waited all return then) minus the
          first CTA's entry: how long its CTAs could prefill
  late    the share of CTAs that entered after the dependency ended (they missed the prefill: no room while the
          previous kernel ran)
  after   the last exit minus the dependency's end: the launch's time once it could read x
  ends    the last exit minus the first: how unevenly its CTAs finish (the next kernel's room opens with them)
  gap     the dependency's end minus the previous traced launch's last exit (an untraced launch between them,
          cuBLASLt or another family, makes it larger)
  span    its last exit minus the previous traced launch's: what the launch adds to the step
  SMs     how many SMs its CTAs ran on (where the previous kernel left room when they entered: 6288 x 7168's 198 CTAs
          sat on 106 of 132 SMs, those two to an SM streamed 13-15% slower; docs/kernels.md "Session 13")
and, where the timeline has when each CTA's first stage landed and its last was multiplied (first_stage_us,
multiplied_us), per CTA medians of
  xland   its first stage landed minus the dependency's end: the x round trip after the wait
  stream  its last stage multiplied minus its first landed: the stages it still streamed and multiplied after it
  drain   its exit minus its last multiply: the split reduction and the stores
Medians over a group's launches; `--json OUT` writes the same per group.

    scripts/trace_summary.py trace.json[.gz] [--json summary.json] [--top 12]
"""
import argparse
import gzip
import json
import statistics
import sys


def launch_stats(launch, previous_exit):
    entries, waits, exits = launch["entry_us"], launch["waited_us"], launch["exit_us"]
    unwritten = sum(1 for t in entries + waits + exits if t < 0)
    if unwritten or not entries:
        raise ValueError("launch %sx%s %s: %d of its CTAs' times were not written" % (
            launch["n"], launch["k"], launch["config"], unwritten))
    ready = min(waits)
    staged = {}
    if launch.get("first_stage_us") and launch.get("multiplied_us"):
        first, last = launch["first_stage_us"], launch["multiplied_us"]
        if any(t < 0 for t in first + last):
            raise ValueError("launch %sx%s %s: a CTA's stage times were not written" % (
                launch["n"], launch["k"], launch["config"]))
        staged = {"xland": statistics.median(f - ready for f in first),
                  "stream": statistics.median(l - f for f, l in zip(first, last)),
                  "drain": statistics.median(x - l for x, l in zip(exits, last))}
    return {
        **staged,
        "early": ready - min(entries),
        "late": sum(1 for t in entries if t > ready) / len(entries),
        "after": max(exits) - ready,
        "ends": max(exits) - min(exits),
        "gap": None if previous_exit is None else ready - previous_exit,
        "span": None if previous_exit is None else max(exits) - previous_exit,
        "last_exit": max(exits),
        "sms": len(set(launch["sm"])) if launch.get("sm") else None,
    }


def load(path):
    """A --trace-tma file, gzipped (FILE.gz) or not."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def summarize(doc):
    out = []
    for case in doc["cases"]:
        groups = {}
        previous_exit = None
        for launch in case["launches"]:
            s = launch_stats(launch, previous_exit)
            previous_exit = s["last_exit"]
            key = (launch["n"], launch["k"], launch["config"])
            groups.setdefault(key, []).append(s)
        rows = []
        for (n, k, config), stats in groups.items():
            row = {"n": n, "k": k, "config": config, "launches": len(stats)}
            for field in ("early", "late", "after", "ends"):
                row[field] = statistics.median(s[field] for s in stats)
            if all(s["sms"] is not None for s in stats):
                row["sms"] = statistics.median(s["sms"] for s in stats)
            for field in ("xland", "stream", "drain"):
                if all(field in s for s in stats):
                    row[field] = statistics.median(s[field] for s in stats)
            for field in ("gap", "span"):
                known = [s[field] for s in stats if s[field] is not None]
                row[field] = statistics.median(known) if known else None
            row["after_total"] = sum(s["after"] for s in stats)
            rows.append(row)
        rows.sort(key=lambda r: -r["after_total"])
        out.append({"variant": case["variant"], "m": case["m"], "us": case["us"], "replay_us": case["replay_us"],
                    "groups": rows})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--json")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    doc = load(a.trace)
    if "cases" not in doc:
        sys.exit("%s is not a --trace-tma file (no \"cases\")" % a.trace)
    try:
        summary = summarize(doc)
    except ValueError as e:
        sys.exit("%s: %s" % (a.trace, e))
    for case in summary:
        print("%s M=%d: step %.1f us, traced replay %.1f us" % (case["variant"], case["m"], case["us"],
                                                               case["replay_us"]))
        print("  %-12s %-26s %8s %5s %8s %6s %8s %8s %8s %8s %10s %7s %7s %7s" % (
            "NxK", "config", "launches", "SMs", "early", "late", "after", "ends", "gap", "span", "after sum", "xland",
            "stream", "drain"))
        for r in case["groups"][:a.top]:
            gap, span = ("-" if r[f] is None else "%.2f" % r[f] for f in ("gap", "span"))
            staged = " ".join("%7s" % ("-" if f not in r else "%.2f" % r[f]) for f in ("xland", "stream", "drain"))
            sms = "-" if "sms" not in r else "%.0f" % r["sms"]
            print("  %-12s %-26s %8d %5s %8.2f %5.0f%% %8.2f %8.2f %8s %8s %10.1f %s" % (
                "%dx%d" % (r["n"], r["k"]), r["config"], r["launches"], sms, r["early"], 100 * r["late"], r["after"],
                r["ends"], gap, span, r["after_total"], staged))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"source": a.trace, "meta": doc.get("meta", {}), "cases": summary}, f, indent=1)


if __name__ == "__main__":
    main()
