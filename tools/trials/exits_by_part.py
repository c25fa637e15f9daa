#!/usr/bin/env python3
"""Per-CTA exits of the lead split's launches in a step timeline (`skinnygemm step --trace-tma FILE`; docs/kernels.md
"Session 15"): for each lead-split shape, the CTAs' exit after the dependency's end (the earliest end of a CTA's
griddepcontrol.wait) by part (the reducer, part 0, or another part) and by how many of the launch's CTAs ran on the same
SM, and which CTAs are the last five to exit in each launch. Where the timeline has the stage stamps (multiplied_us),
per part also the medians of the last multiply after the dependency's end and of the drain (exit minus last multiply),
and of how long before the reducer's last multiply its tile's other parts had all exited; where it has gathered_us
(session 19), when the reducer's gather of the other parts' sums was done after its last multiply (docs/kernels.md
"Session 19": at M = 16 the reducer waits for it), and of the gathers done more than 1 us after it, the share whose
other parts exited after that multiply, i.e. the reducer waited for a slower other part, and how much earlier each
launch would end if no reducer waited (each reducer's exit taken as its last multiply plus the launch's 25th-percentile
reducer drain, the other parts' exits kept; docs/kernels.md "Session 27").
The parts: tma_grid.py (tma_shape.h's lead_split_grid_for).

    tools/trials/exits_by_part.py trace.json[.gz] [--case N|all] [--shapes 4480x7168,6288x7168]
"""
import argparse
import os
import statistics
import sys
from collections import Counter, defaultdict

from tma_grid import lead_parts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import trace_summary  # noqa: E402  (scripts/trace_summary.py: load)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--case", default="0", help="which case of the file (variant, M), or all")
    ap.add_argument("--shapes", default="", help="NxK items (default: every lead-split shape launched 2+ times)")
    args = ap.parse_args()
    cases = trace_summary.load(args.trace)["cases"]
    for case in cases if args.case == "all" else [cases[int(args.case)]]:
        by_part(case, args.shapes)


def median(v):
    return statistics.median(v) if v else float("nan")


def by_part(case, shapes):
    print("%s M=%d" % (case["variant"], case["m"]))
    by_shape = defaultdict(list)
    for launch in case["launches"]:
        by_shape[(launch["n"], launch["k"], launch["config"])].append(launch)
    wanted = {tuple(map(int, s.split("x"))) for s in shapes.split(",") if s}
    for (n, k, config), launches in by_shape.items():
        split = lead_parts(n, k, config)
        if not split or split[0] < 2 or (wanted and (n, k) not in wanted) or (not wanted and len(launches) < 2):
            continue
        parts, part0, stages = split
        exits, last, stamps = defaultdict(list), Counter(), defaultdict(list)
        late = Counter()  # gathers > 1 us after the last multiply: all, and those whose other parts exited after it
        no_wait = []  # per launch: its last exit minus the last exit had no reducer waited
        for launch in launches:
            ready = min(launch["waited_us"])
            on_sm = Counter(launch["sm"])
            key = lambda i: ("reducer" if i % parts == 0 else "part", on_sm[launch["sm"][i]])
            for i, t in enumerate(launch["exit_us"]):
                exits[key(i)].append(t - ready)
            mult, gathered = launch.get("multiplied_us"), launch.get("gathered_us")
            for i in range(len(launch["exit_us"]) if mult else 0):
                role = key(i)[0]
                stamps[role + " multiply"].append(mult[i] - ready)
                stamps[role + " drain"].append(launch["exit_us"][i] - mult[i])
                if role == "reducer" and parts > 1:
                    stamps["others exited before it"].append(mult[i] - max(launch["exit_us"][i + 1:i + parts]))
                    if gathered and gathered[i] >= 0:
                        stamps["gathered after it"].append(gathered[i] - mult[i])
                        if gathered[i] - mult[i] > 1:
                            late["all"] += 1
                            late["others later"] += max(launch["exit_us"][i + 1:i + parts]) > mult[i]
            if mult:
                ex = launch["exit_us"]
                drains = sorted(ex[i] - mult[i] for i in range(0, len(ex), parts))
                typical = drains[len(drains) // 4]
                ends = [mult[i] + typical if i % parts == 0 else ex[i] for i in range(len(ex))]
                no_wait.append(max(ex) - max(ends))
            for i in sorted(range(len(launch["exit_us"])), key=lambda i: -launch["exit_us"][i])[:5]:
                last[key(i)[0]] += 1
        print("%dx%d %s: %d launches, %d parts, part 0 %d of %d stages" % (n, k, config, len(launches), parts, part0, stages))
        for (role, ctas_on_sm), v in sorted(exits.items()):
            v.sort()
            print("  %-7s %d on its SM: %6d CTAs, exit after the dependency: median %.2f us, p90 %.2f, max %.2f" % (
                role, ctas_on_sm, len(v), statistics.median(v), v[int(0.9 * (len(v) - 1))], v[-1]))
        print("  the last five exits of each launch: %s" % dict(last))
        if no_wait:
            print("  had no reducer waited, the launch would end earlier by a median %.2f us (%.0f us over its %d "
                  "launches)" % (median(no_wait), sum(no_wait), len(no_wait)))
        if late["all"]:
            print("  gathers done > 1 us after the last multiply: %d of %d reducers, %d of them after a slower other "
                  "part" % (late["all"], len(stamps["gathered after it"]), late["others later"]))
        if stamps:
            print("  medians (us; multiply after the dependency, drain = exit - last multiply, the reducer's last "
                  "multiply against its others' exits and its gather): " +
                  ", ".join("%s %.2f" % (name, median(v)) for name, v in sorted(stamps.items())))


if __name__ == "__main__":
    main()
