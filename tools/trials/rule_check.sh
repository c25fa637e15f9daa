#!/usr/bin/env bash
# Session 30: set sixteen's run measured only candidates near the heuristic's pick, so where the long-K rule (4e746d5,
# tma_family.cpp's long_k_wide_goes_to_cublaslt; reverted in 30425e2 after this ran) sent a shape to cuBLASLt no TMA
# config was timed. This times the family's configs the
# first cut chooses between on such shapes (stream-K, the lead split, 128-row stream-K) beside selection's pick with its
# baselines, at M = 1 / 8 / 16: set sixteen's three shapes the rule took, and 16384 x 13312 (Llama-3.1-405B TP4 down,
# over 384 MiB but 256 tiles, under two per SM: kept by the family, 3.2-4.4% behind cuBLASLt at M = 1-5).
# From the repo root on the GPU machine, OUT set:  tools/trials/rule_check.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
shapes=${SHAPES:-18432x12288,25600x8192,32064x8192,16384x13312}
timeout -k 5 150 $cli bench --backend cuda --shapes "$shapes" --m 1,8,16 --json "$OUT/selection.json" > /dev/null 2>&1 ||
  echo "selection bench failed"
tools/trials/bench_rows.py "$OUT/selection.json"
for c in r64_b2_s4_c2_u1 r64_b2_s5_c2_d6 r64_b2_s4_c2_d6 r128_b1_s4_c2_u1; do
  for t in 8 16; do
    ms=1,8; [ $t = 16 ] && ms=16
    timeout -k 5 60 $cli bench --backend cuda --shapes "$shapes" --m $ms --config "tma_m${t}_$c" --no-baselines \
      --json "$OUT/f-$t-$c.json" > /dev/null 2>&1 || echo "tma_m${t}_$c failed"
  done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "f-*.json"))):
    for r in json.load(open(f))["rows"]:
        rows.setdefault((r["n"], r["k"], r["m"]), []).append((r["us"], r["config"]))
for key in sorted(rows):
    print("%5dx%-5d m=%2d  " % key + "  ".join("%s %.2f" % (c.replace("tma_", ""), us) for us, c in sorted(rows[key])))
PY
tar -C "$OUT" -czf "$OUT/rule-check.tgz" selection.json $(cd "$OUT" && ls f-*.json) && rm -f "$OUT"/f-*.json
echo "== done after $(trial_elapsed)"
