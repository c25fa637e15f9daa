#!/usr/bin/env python3
"""How fast the weights arrive during each launch's tail, estimated from a step timeline (`skinnygemm step --trace-tma
FILE`; docs/kernels.md "Session 15", Next (2)). The timeline has, per CTA, its entry, the end of its griddepcontrol.wait,
when its first stage landed, when its last stage was multiplied and its exit. Each CTA's weight bytes (its stages x
rows x boxes x 128 B, from the config and tma_shape.h's split) are spread over time: the ring's prefill (the first
min(S, stages) stages, requested at entry) over [entry, min(entry + PREFILL_US, first landed)], the rest evenly over
[first landed, last multiplied] (in steady state a CTA multiplies what arrives). Summed over every traced CTA of every
launch, that is the weight stream the TMA launches drew from DRAM over time (x, partials and untraced launches left
out). Per shape it prints the median rate over each launch's `after` window (dependency end to last exit) and over its
last quarter, as a fraction of the trace's stream-read rate, and how much of the tail's rate came from the launch's
successors (their prefill).

    tools/trials/tail_rate.py trace.json[.gz] [--case N] [--prefill-us 1.5] [--bucket-us 0.1]
"""
import argparse
import os
import statistics
import sys
from collections import defaultdict

from tma_grid import stages_per_cta

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import trace_summary  # noqa: E402  (scripts/trace_summary.py: load)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--case", type=int, default=0)
    ap.add_argument("--prefill-us", type=float, default=1.5)
    ap.add_argument("--bucket-us", type=float, default=0.1)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    data = trace_summary.load(args.trace)
    peak = data.get("stream_read_tbps", 4.7)
    case = data["cases"][args.case]
    launches = case["launches"]
    b = args.bucket_us
    end = max(max(l["exit_us"]) for l in launches)
    nb = int(end / b) + 2
    total = [0.0] * nb            # bytes per bucket, every launch
    per_launch = []               # per launch: its own bytes per bucket (sparse dict)
    skipped = set()
    for l in launches:
        split = stages_per_cta(l["n"], l["k"], l["config"], l["ctas"])
        own = defaultdict(float)
        per_launch.append(own)
        if not split or not l.get("first_stage_us"):
            skipped.add(l["config"])
            continue
        counts, stage_bytes, ring = split

        def spread(t0, t1, nbytes):
            t1 = max(t1, t0 + b)
            i0, i1 = int(t0 / b), int(t1 / b)
            share = nbytes / (i1 - i0 + 1)
            for i in range(i0, i1 + 1):
                total[i] += share
                own[i] += share

        for g, c in enumerate(counts):
            e, fl, mu = l["entry_us"][g], l["first_stage_us"][g], l["multiplied_us"][g]
            pre = min(ring, c)
            spread(e, min(e + args.prefill_us, fl), pre * stage_bytes)
            if c > pre:
                spread(fl, mu, (c - pre) * stage_bytes)
    rate = lambda nbytes: nbytes / (b * 1e-6) / 1e12  # TB/s
    by_shape = defaultdict(list)
    for idx, l in enumerate(launches):
        ready, last = min(l["waited_us"]), max(l["exit_us"])
        i0, i1 = int(ready / b), int(last / b)
        if i1 - i0 < 8:
            continue
        q = i1 - (i1 - i0) // 4
        whole = statistics.mean(rate(total[i]) for i in range(i0, i1 + 1))
        tail = statistics.mean(rate(total[i]) for i in range(q, i1 + 1))
        own_tail = statistics.mean(rate(per_launch[idx].get(i, 0.0)) for i in range(q, i1 + 1))
        by_shape[(l["n"], l["k"], l["config"])].append((whole, tail, own_tail, last - ready))
    step_bytes = sum(total)
    print("%s M=%d: %d launches, weights drawn %.1f MB over %.1f us = %.2f TB/s (%.2f of the trace's %.2f TB/s)%s" % (
        case["variant"], case["m"], len(launches), step_bytes / 1e6, end, step_bytes / end / 1e6,
        step_bytes / end / 1e6 / peak, peak, "; skipped configs: " + ", ".join(sorted(skipped)) if skipped else ""))
    print("  %-11s %-26s %8s %7s %9s %9s %9s" % ("NxK", "config", "launches", "after", "rate", "tail", "own tail"))
    rows = sorted(by_shape.items(), key=lambda kv: -sum(v[3] for v in kv[1]))[:args.top]
    for (n, k, config), v in rows:
        med = lambda j: statistics.median(x[j] for x in v)
        print("  %-11s %-26s %8d %7.2f %9.2f %9.2f %9.2f" % (
            "%dx%d" % (n, k), config, len(v), med(3), med(0) / peak, med(1) / peak, med(2) / peak))
    print("  (rate, tail: the estimated weight stream of every traced launch over the launch's after window and its last")
    print("   quarter, as a fraction of the stream-read rate; own tail: this launch's own share of it)")


if __name__ == "__main__":
    main()
