#!/usr/bin/env bash
# Session 34: rule C (docs/tuning.md "Session 34") changed the pick at M <= 4 on twelve held-out shapes where no report
# had timed the lead split (its band: clusters of four that fill the slots with 10+ stages each): the new pick (the
# 64-row lead split on a 4-stage ring) against the old one (clusters of two on a 4-stage ring), forced, alternately,
# ROUNDS rounds. From the repo root on the GPU machine, OUT set, the build carried (SKIP_BUILD=1).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
shapes=${RULE_C_SHAPES:-3840x5120,3840x15360,4000x8192,4002x8192,4096x6144,4096x6848,4096x7168,4096x8192,4096x12288,4096x12800,4096x13696,4096x14336}
w=$(mktemp -d)
for r in $(seq 1 "${ROUNDS:-2}"); do
  for config in tma_m8_r64_b2_s4_c2_d6 tma_m8_r64_b2_s4_x2; do
    timeout -k 5 120 $cli bench --no-baselines --shapes "$shapes" --m "${RULE_C_M:-1,2,4}" --config "$config" \
      --csv "$w/$config-$r.csv" > /dev/null 2>&1 || echo "$config round $r failed or cut"
  done
  echo "== round $r after $(trial_elapsed)"
done
echo "shape,m,config,round,us" | tee "$OUT/rule-c.csv"
for f in "$w"/*.csv; do
  b=$(basename "$f" .csv); r=${b##*-}
  awk -F, -v r="$r" 'NR > 1 {printf "%sx%s,%s,%s,%s,%s\n", $4, $5, $6, $7, r, $9}' "$f"
done | sort -t, -k1,1 -k2,2n -k3,3 -k4,4n | tee -a "$OUT/rule-c.csv"
echo "== done after $(trial_elapsed)"
