#!/usr/bin/env python3
"""Session 39: step trial tables from a row-stream sweep (tools/trials/row_stream_step.sh). Reads the bench JSONs of
selection's picks (picks.json) and of each forced row-stream config (rs-*.json), and writes EXTRA trials for
tools/trials/step_trial_tables.py (JSON {name: [[n, k, [m, ...], config], ...]}): RS forces, per shape and measured M, the
fastest row-stream config where it beat the pick alone by at least MARGIN (3%); M = 1 stands for M = 1-4, 8 for 5-8, 16
for 9-16. RSS does the same on the seeds' shapes only (2112, 1536 and 3648 x 7168). Prints the choices.
  tools/trials/row_stream_table.py DIR OUT.json [MARGIN]"""
import glob, json, os, sys

SEEDS = {(2112, 7168), (1536, 7168), (3648, 7168)}
SPAN = {1: [1, 2, 3, 4], 8: [5, 6, 7, 8], 16: list(range(9, 17))}


def rows(path):
    try:
        return json.load(open(path))["rows"]
    except (OSError, ValueError, KeyError):
        return []


def main():
    d, out = sys.argv[1], sys.argv[2]
    margin = float(sys.argv[3]) if len(sys.argv) > 3 else 0.03
    pick = {(r["n"], r["k"], r["m"]): (r["us"], r["config"]) for r in rows(os.path.join(d, "picks.json"))}
    best = {}
    for f in sorted(glob.glob(os.path.join(d, "rs-*.json"))):
        for r in rows(f):
            key = (r["n"], r["k"], r["m"])
            if key not in best or r["us"] < best[key][0]:
                best[key] = (r["us"], r["config"])
    trials = {"RS": [], "RSS": []}
    for key in sorted(best):
        us, cfg = best[key]
        if key not in pick or key[2] not in SPAN:
            continue
        p_us, p_cfg = pick[key]
        gain = 1 - us / p_us
        take = gain >= margin
        print("%5dx%-5d m=%2d pick %-26s %7.2f  row stream %-22s %7.2f  %+5.1f%% %s" %
              (key[0], key[1], key[2], p_cfg, p_us, cfg, us, -100 * gain, "forced" if take else ""))
        if take:
            item = [key[0], key[1], SPAN[key[2]], cfg]
            trials["RS"].append(item)
            if (key[0], key[1]) in SEEDS:
                trials["RSS"].append(item)
    json.dump(trials, open(out, "w"))


main()
