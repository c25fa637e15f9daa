#!/usr/bin/env bash
# Session 26 (the lab's SKINNYGEMM_STEP_ABLATE): what x and the split reductions cost the whole step, beside trial
# tables. The fused step at M = 1 / 8 / 16 (CHAIN=1: first with its chain floor), then each item in turn: "-" the
# shipped kernel and table, a number the timing graphs' SKINNYGEMM_STEP_ABLATE bits (1: no x copies; no split reduction
# on 2: lead splits, 4: clusters, 8: stream-K; wrong results, the eager check runs without), a name a trial table of
# tools/trials/step_trial_tables.py, NAME@A the same with branch bulk-gather's SKINNYGEMM_TMA_GATHER_AHEAD=A. From the
# repo root on the GPU machine, OUT set:
#   ITEMS="- 1 2 3 - 1 2 3" CHAIN=1 tools/trials/step_ablation.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
if [ -n "${GTEST:-}" ]; then
  for ga in ${GTEST_AHEAD:--}; do  # branch bulk-gather: the tests with its knob at each value given (-: off)
    [ "$ga" = - ] && ga=
    SKINNYGEMM_TMA_GATHER_AHEAD=$ga timeout -k 5 150 build/gpu/tests/skinnygemm_gpu_tests --gtest_filter="$GTEST" \
      > "$OUT/gtest$ga.log" 2>&1 || echo "$GTEST (gather ahead '$ga') FAILED or cut"
    echo "gather ahead '$ga': $(grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/gtest$ga.log" | head -10)"
  done
fi
if [ -n "${CHAIN:-}" ]; then
  timeout -k 5 120 $cli step --model kimi_k3 --tp 8 --m 1,8,16 --pdl on --no-sinks --chain-floor \
    --variants skinny_fused > "$OUT/step-chain.txt" 2>&1 || echo "chain step failed"
  grep -E "^ *skinny_fused +[0-9]|chain floor of the fused launches:" "$OUT/step-chain.txt" | cut -c1-100
fi
data=build/trial-data
rm -rf "$data" && python3 tools/trials/step_trial_tables.py "$data"
echo "== items after $(trial_elapsed)"
mkdir -p "$OUT/steps"
n=0
for a in ${ITEMS:-- 1 2 3 - 1 2 3}; do
  n=$((n + 1))
  d=.
  unset SKINNYGEMM_STEP_ABLATE SKINNYGEMM_TMA_GATHER_AHEAD
  t=$a
  if [[ "$a" == *@* ]]; then export SKINNYGEMM_TMA_GATHER_AHEAD=${a#*@}; t=${a%@*}; fi  # branch bulk-gather's knob
  case "$t" in
    -) ;;
    [0-9]*) export SKINNYGEMM_STEP_ABLATE=$a ;;
    *) d="$data/$t"; cp -r models policies "$d/" ;;
  esac
  log="$OUT/steps/$n-$a.txt"
  SKINNYGEMM_DATA_DIR="$d" timeout -k 5 60 $cli step --model kimi_k3 --tp 8 --m "${MS:-1,8,16}" --pdl on --no-sinks \
    --variants skinny_fused > "$log" 2>&1 || echo "$a: step failed"
  echo "$a: $(grep -E "^ *skinny_fused " "$log" | awk '{printf "%s:%s ", $2, $5}')"
done
unset SKINNYGEMM_STEP_ABLATE SKINNYGEMM_TMA_GATHER_AHEAD
tar -C "$OUT" -czf "$OUT/steps.tgz" steps && rm -rf "$OUT/steps"
echo "== done after $(trial_elapsed)"
