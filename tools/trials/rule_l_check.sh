#!/usr/bin/env bash
# Session 38: rule L's unmeasured Ms (docs/tuning.md "Session 38"). On four shapes of its band (three lead-split parts
# per 64-row tile, K <= 3456) at M = 9-16: the heuristic's pick (cuBLASLt under the rule) with the bench's baselines,
# and the first cut's lead split forced, ROUNDS rounds alternately. From the repo root on the GPU machine, OUT set, the
# build carried (SKIP_BUILD=1, tools/trials/prebuilt.sh unpack).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
w=$(mktemp -d)
for r in $(seq 1 "${ROUNDS:-2}"); do
  for item in 4320x3200:tma_m16_r64_b2_s5_c2_d6 4800x3200:tma_m16_r64_b2_s5_c2_d6 4864x2560:tma_m16_r64_b2_s4_c2_d6 \
      5120x1728:tma_m16_r64_b2_s4_c2_d6; do
    shape=${item%%:*} cfg=${item#*:}
    timeout -k 5 60 $cli bench --shapes "$shape" --m 9:16 --csv "$w/$shape-pick-$r.csv" > /dev/null 2>&1 ||
      echo "$shape pick round $r failed"
    timeout -k 5 60 $cli bench --no-baselines --shapes "$shape" --m 9:16 --config "$cfg" --csv "$w/$shape-split-$r.csv" \
      > /dev/null 2>&1 || echo "$shape split round $r failed"
  done
done
head -1 "$(ls "$w"/*-pick-1.csv | head -1)" | sed 's/^/file,/' > "$OUT/rule-l.csv"
for f in "$w"/*.csv; do tail -n +2 "$f" | sed "s|^|$(basename "$f" .csv),|"; done >> "$OUT/rule-l.csv"
echo "== done after $(trial_elapsed)"
