#!/usr/bin/env python3
"""Drop the table entries that never faced the heuristic's own pick (issue 18: the table is a refinement).

An entry was stored because it beat the candidates of its tuning run. Where the heuristic now takes a family's
structural pick (the dump's reason says "structural pick") and the entry names another family, the entry was
judged without that pick among its candidates (the shipped H200 table's reg, bulk and cuBLASLt entries at M <= 16
predate the TMA family), so it is dropped and the heuristic runs there; every other entry is kept. The dump is
`skinnygemm heuristic --device <preset> --shapes <the table's NxK> --m <its Ms> --json DUMP` for the table's device.

    scripts/table_drop_unjudged.py tables/nvidia-h200.json --dump dump.json [--out FILE] [--all-families]

--all-families also drops the structural family's own entries there: entries chosen against an older version of
its rules (the H200 table's step-searched TMA entries of 717be70 lost the whole step to today's structural pick
at every M <= 16 at 516a0f1: docs/step.md, session 9).

Heuristic markers (`"config": "heuristic"`, written by `tune --refine` where the heuristic's pick was measured best)
name no family and defer to the heuristic whatever it picks now: they are always kept and need not be in the dump.

Exit 0 with a count per family of what was dropped; 2 on bad input (another device, a dump without the points).
"""
import argparse
import collections
import json
import sys

from table_file import write_table


HEURISTIC_MARKER = "heuristic"  # kHeuristicEntryName in include/skinnygemm/table.h


def family(config):
    return config.split("_", 1)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--dump", required=True, help="`skinnygemm heuristic --json` over the table's points")
    ap.add_argument("--out", help="where to write (default: overwrite TABLE)")
    ap.add_argument("--all-families", action="store_true",
                    help="drop the structural family's own entries at those points too")
    args = ap.parse_args()
    table, dump = json.load(open(args.table)), json.load(open(args.dump))
    if dump["device"]["name"] != table["meta"]["gpu"] or dump["device"]["sms"] != table["meta"]["sms"]:
        print(f"table_drop_unjudged.py: the dump is for {dump['device']['name']} with {dump['device']['sms']} SMs, "
              f"the table for {table['meta']['gpu']} with {table['meta']['sms']}", file=sys.stderr)
        return 2
    picks = {(p["dtype"], p["n"], p["k"], p["m"]): p for p in dump["points"]}
    key = lambda e: (e["dtype"], e["n"], e["k"], e["m"])
    judged = [e for e in table["entries"] if e["config"] != HEURISTIC_MARKER]
    missing = [k for k in map(key, judged) if k not in picks]
    if missing:
        print(f"table_drop_unjudged.py: {len(missing)} of the table's points are not in the dump (first: "
              f"{missing[0]}); dump the table's shapes at its Ms", file=sys.stderr)
        return 2
    kept, dropped = [], collections.Counter()
    for e in table["entries"]:
        if e["config"] == HEURISTIC_MARKER:
            kept.append(e)
            continue
        pick = picks[key(e)]
        if "structural pick" in pick["reason"] and (args.all_families or family(e["config"]) != family(pick["pick"])):
            dropped[(family(e["config"]), family(pick["pick"]))] += 1
        else:
            kept.append(e)
    table["entries"] = kept
    out = args.out or args.table
    write_table(out, table["meta"], kept)
    for (was, now), n in sorted(dropped.items()):
        print(f"dropped {n} {was} entries where the heuristic's structural pick is {now}")
    print(f"kept {len(kept)} of {len(kept) + sum(dropped.values())} entries -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
