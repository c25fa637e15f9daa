#!/usr/bin/env bash
# Session 40: row-stream step trials from a trial file (calls 3-9 of docs/benchmarks/h100/session40): ABAB TABLES of TRIALS_JSON
# (tools/trials/step_trial_tables.py's EXTRA format) through the fused step at STEP_M, the timelines of TRACE (names, at
# M = 1 and 8), PER_M=1 each M of STEP_M in processes of its own, LT=1 cuBLASLt's two steps, BARE_TRIALS (tables of only their own entries) beside, and ALONE items "NxK:config" timed alone at ALONE_M without baselines (config "pick": selection's).
# OUT set, the build carried (SKIP_BUILD=1). Writes OUT/trials.tgz (step outputs, timelines, alone JSONs).
#   TRIALS_JSON=tools/trials/row_stream_b.json TABLES="s0 B0 B1 s0 B0 B1" STEP_M=1,8 TRACE="s0 B0" \
#     ALONE="6016x7168:pick 6016x7168:tma_m8_r8_b16_s4_rs" ALONE_M=1,8 tools/trials/row_stream_trials.sh
set -uo pipefail
source tools/trials/trial_lib.sh
: "${TRIALS_JSON:?set TRIALS_JSON}" "${TABLES:?set TABLES}"
trial_build
w=$OUT/w && mkdir -p "$w"
(export OUT=$w EXTRA_TRIALS=$TRIALS_JSON VARIANTS=skinny_fused
 STEP_M=${STEP_M:-1,8}
 if [ -n "${PER_M:-}" ]; then  # each M in processes of its own (an earlier M's launches in the same process moved a
   for m in ${STEP_M//,/ }; do   # later M's step by 67-74 us in call 5: docs/kernels.md "Session 40")
     tools/trials/step_trials.sh "$TABLES" "$m"
   done
 else
   tools/trials/step_trials.sh "$TABLES" "${STEP_M:-1,8}"
 fi
 if [ -n "${TRACE:-}" ]; then tools/trials/step_timelines.sh "$TRACE" > "$w/timelines.txt" 2>&1; head -16 "$w/timelines.txt"; fi)
if [ -n "${LT:-}" ]; then  # cuBLASLt's two steps at STEP_M, for the x cuBLASLt line
  $cli step --model kimi_k3 --tp 8 --m "${STEP_M:-1,8}" --pdl on --no-sinks --variants cublaslt,cublaslt_torch \
    > "$w/step-cublaslt.txt" 2>&1 || echo "cuBLASLt step failed"
  grep -E "^cublaslt" "$w/step-cublaslt.txt"
fi
echo "== steps after $(trial_elapsed)"
s0=$(trial_s0_dir)  # "pick" is the H200 table's (retargeted on another 132-SM GPU), as s0 in the steps
for item in ${ALONE:-}; do
  shape=${item%%:*} c=${item#*:}
  args=() && [ "$c" != pick ] && args=(--config "$c")
  for m in $(echo "${ALONE_M:-1,8}" | tr , ' '); do
    case "$c" in tma_m8_*) [ "$m" -gt 8 ] && continue ;; esac
    SKINNYGEMM_DATA_DIR=$s0 $cli bench --no-baselines --shapes "$shape" --m "$m" ${args[@]+"${args[@]}"} --json "$w/alone-$shape-$c-m$m.json" \
      > /dev/null 2>&1 || echo "bench $shape $c m$m failed"
  done
done
python3 - "$w" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/alone-*.json")):
    for r in json.load(open(f))["rows"]:
        print("alone %5dx%-5d m=%2d %-28s %7.2f" % (r["n"], r["k"], r["m"], r["config"], r["us"]))
PY
tar -czf "$OUT/trials.tgz" -C "$w" . && rm -rf "$w"
echo "== done after $(trial_elapsed)"
