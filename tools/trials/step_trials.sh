#!/usr/bin/env bash
# Session 11's step trials (docs/kernels.md "Session 11"), from the repo root on the GPU machine, OUT set:
#   tools/trials/step_trials.sh "s0 t1 t2 s0" 1,2,4,8,16              (the first trial call; it also ran cublaslt)
#   tools/trials/step_trials.sh "s0 s1 s2 s3 s4 s5 s6 s0" 1,8     (the second call)
#   tools/trials/step_trials.sh "s0 u1 u2 u4 u5 u6 u7 s0" 1,8     (the third, TRIAL_BENCH=1: the bench below)
# Next (not yet run): which neighbour pays, and whether PDL is the mechanism (PDL=off: every launch without it):
#   tools/trials/step_trials.sh "s0 n1_base n1 n2_base n2 s0" 1,8 && PDL=off tools/trials/step_trials.sh "s0 u6 s0" 1,8
# s0 is the shipped table; every other name a copy of it that forces one config on one shape
# (tools/trials/step_trial_tables.py). Prints each step's time per M.
set -uo pipefail
OUT2="$(mktemp -d)"; OUT="$OUT2" scripts/gpu-check build > /dev/null 2>&1 || { echo "build failed"; exit 1; }
cli=build/gpu/skinnygemm
data=build/trial-data
rm -rf "$data" && python3 tools/trials/step_trial_tables.py "$data"
for s in $1; do
  d=.
  if [ "$s" != s0 ]; then d="$data/$s"; cp -r models policies "$d/"; fi
  log="$OUT/step-$s${PDL:+-pdl$PDL}.txt"
  SKINNYGEMM_DATA_DIR="$d" $cli step --model kimi_k3 --tp 8 --m "$2" --pdl "${PDL:-on}" --no-sinks --variants skinny > "$log" 2>&1
  echo "$s $(grep -E '^ *skinny(_nopdl)? ' "$log" | awk '{printf "%s:%s ", $2, $5}')"
done
[ "${TRIAL_BENCH:-0}" = 1 ] && $cli bench --backend cuda --shapes 6288x7168,2112x7168,7168x3584 --m 1,8 --samples 3 \
  --replays 10 --no-baselines --sweep 'tma_m8_r[16][64]_b[248]_s[346]_[cx][28]*' > "$OUT/bench.txt" 2>&1 &&
  grep -E "^- " "$OUT/bench.txt" | awk '{print $2, $3, $4, $6}'
exit 0
