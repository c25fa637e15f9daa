#!/usr/bin/env bash
# Session 40, call 3: what survived the H100's fused step in call 2 (tools/trials/row_stream_split.py's per-shape trials),
# together (tools/trials/row_stream_h1.json): H1 = 6016 x 7168 on 8-row tiles at M = 1-4 (-105 us alone in the step) and
# 6288 x 7168 on the 16-token 16-row stream at M = 5-16 (-45 / -82 us); Q8 = 6016 x 7168 on 8-row tiles of 3 stages at
# M = 5-8; Q6 = 6288 x 7168 on the 8-token 16-row stream at M = 5-8. ABAB "s0 H1 Q8 Q6" at M = 1, 8, 16 (skinny_fused),
# the timelines of s0 and H1, and both shapes alone under each config. OUT set, the build carried (SKIP_BUILD=1).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
w=$OUT/w && mkdir -p "$w"
(export OUT=$w EXTRA_TRIALS=tools/trials/row_stream_h1.json VARIANTS=skinny_fused
 tools/trials/step_trials.sh "${TABLES:-s0 H1 Q8 Q6 s0 H1 Q8 Q6}" "${STEP_M:-1,8,16}"
 tools/trials/step_timelines.sh "s0 H1" > "$w/timelines.txt" 2>&1; head -16 "$w/timelines.txt")
echo "== steps after $(trial_elapsed)"
for c in pick tma_m8_r8_b16_s4_rs tma_m8_r8_b16_s3_rs tma_m8_r16_b8_s3_rs tma_m16_r16_b8_s3_rs; do
  for m in 1 8 16; do
    case "$c" in tma_m8_*) [ "$m" = 16 ] && continue ;; tma_m16_*) [ "$m" = 1 ] && continue ;; esac
    args=() && [ "$c" != pick ] && args=(--config "$c")
    $cli bench --no-baselines --shapes 6016x7168,6288x7168 --m "$m" ${args[@]+"${args[@]}"} --json "$w/alone-$c-m$m.json" \
      > /dev/null 2>&1 || echo "bench $c m$m failed"
  done
done
python3 - "$w" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/alone-*.json")):
    for r in json.load(open(f))["rows"]:
        print("alone %5dx%d m=%2d %-28s %7.2f" % (r["n"], r["k"], r["m"], r["config"], r["us"]))
PY
tar -czf "$OUT/h1.tgz" -C "$w" . && rm -rf "$w"
echo "== done after $(trial_elapsed)"
