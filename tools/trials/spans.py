#!/usr/bin/env python3
"""Per shape, the median span of its launches in each `step --trace-tma` timeline given (the previous traced launch's
last exit to this one's last exit: what the launch adds to the step), its config, and the loss against its bytes at
the trace's stream-read rate. Session 12's joint trials (tools/trials/step_trial_tables.py L*).

    tools/trials/spans.py NAME=trace.json[.gz] ... [--json OUT]"""
import argparse, gzip, json, statistics


def load(path):
    doc = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    return [(case["m"], spans(case, doc["stream_read_tbps"])) for case in doc["cases"]]


def spans(case, bw):
    groups, prev = {}, None
    for launch in case["launches"]:
        last = max(launch["exit_us"])
        if prev is not None:
            key = "%dx%d" % (launch["n"], launch["k"])
            g = groups.setdefault(key, {"config": launch["config"], "spans": [], "late": [],
                                        "ideal": launch["n"] * launch["k"] * 2 / bw / 1e6})
            g["spans"].append(last - prev)
            ready = min(launch["waited_us"])
            g["late"].append(sum(1 for t in launch["entry_us"] if t > ready) / len(launch["entry_us"]))
        prev = last
    out = {}
    for key, g in groups.items():
        out[key] = {"config": g["config"], "launches": len(g["spans"]), "span": statistics.median(g["spans"]),
                    "ideal": g["ideal"], "late": statistics.median(g["late"]), "total": sum(g["spans"])}
    return {"us": case["us"], "replay_us": case["replay_us"], "shapes": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+", help="NAME=path")
    ap.add_argument("--json")
    a = ap.parse_args()
    res = {}
    for item in a.traces:
        name, path = item.split("=", 1)
        for m, r in load(path):
            res["%s/M%d" % (name, m)] = r
    names = list(res)
    shapes = sorted(res[names[0]]["shapes"], key=lambda s: -res[names[0]]["shapes"][s]["total"])
    print("%-12s %5s %7s  " % ("NxK", "runs", "ideal") + "  ".join("%-30s" % n for n in names))
    for s in shapes:
        row = "%-12s %5d %7.2f  " % (s, res[names[0]]["shapes"][s]["launches"], res[names[0]]["shapes"][s]["ideal"])
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
