#!/usr/bin/env bash
# Session 26 (the lab's SKINNYGEMM_STEP_ABLATE): what x and the split reductions cost the whole step, beside trial
# tables. The fused step at M = 1 / 8 / 16 (CHAIN=1: first with its chain floor), then each item in turn: "-" the
# shipped kernel and table, a number the timing graphs' SKINNYGEMM_STEP_ABLATE bits (1: no x copies; no split reduction
# on 2: lead splits, 4: clusters, 8: stream-K; wrong results, the eager check runs without), a name a trial table of
# tools/trials/step_trial_tables.py, NAME@A (or -@A) the same with a branch's lab knob, the environment variable named
# by KNOB, set to A, NAME:BITS a trial table with ablation bits (session 30: K16:31) (session 26: SKINNYGEMM_TMA_GATHER_AHEAD of branch bulk-gather; session 27: SKINNYGEMM_TMA_PREFILL
# of branch prefill, SKINNYGEMM_TMA_LEAD_CLUSTER of branch lead-cluster). GTEST runs those tests first, once per value of GTEST_KNOB (-: unset). From the repo root on the
# GPU machine, OUT set:
#   ITEMS="- 1 2 3 - 1 2 3" CHAIN=1 tools/trials/step_ablation.sh
#   KNOB=SKINNYGEMM_TMA_PREFILL ITEMS="- -@3 - -@3" tools/trials/step_ablation.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
if [ -n "${GTEST:-}" ]; then
  for ga in ${GTEST_KNOB:--}; do  # the tests with the branch's knob at each value given (-: unset)
    if [ "$ga" = - ]; then ga=; else export "${KNOB:?}=$ga"; fi
    timeout -k 5 "${GTEST_SECONDS:-150}" build/gpu/tests/skinnygemm_gpu_tests --gtest_filter="$GTEST" \
      > "$OUT/gtest$ga.log" 2>&1 || echo "$GTEST (knob '$ga') FAILED or cut"
    echo "knob '$ga': $(grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/gtest$ga.log" | head -10)"
    [ -n "${KNOB:-}" ] && unset "$KNOB"
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
  unset SKINNYGEMM_STEP_ABLATE
  [ -n "${KNOB:-}" ] && unset "$KNOB"
  t=$a
  if [[ "$a" == *@* ]]; then export "${KNOB:?NAME@A needs KNOB}=${a#*@}"; t=${a%@*}; fi  # the branch's lab knob
  case "$t" in
    -) ;;
    *:*)  # NAME:BITS (NAME - : the shipped table)
      [ "${t%%:*}" = - ] || { d="$data/${t%%:*}"; cp -r models policies "$d/"; }
      export SKINNYGEMM_STEP_ABLATE=${t#*:} ;;
    [0-9]*) export SKINNYGEMM_STEP_ABLATE=$t ;;
    *) d="$data/$t"; cp -r models policies "$d/" ;;
  esac
  log="$OUT/steps/$n-$a.txt"
  SKINNYGEMM_DATA_DIR="$d" timeout -k 5 60 $cli step --model kimi_k3 --tp 8 --m "${MS:-1,8,16}" --pdl on --no-sinks \
    --variants skinny_fused > "$log" 2>&1 || echo "$a: step failed"
  echo "$a: $(grep -E "^ *skinny_fused " "$log" | awk '{printf "%s:%s ", $2, $5}')"
done
unset SKINNYGEMM_STEP_ABLATE
[ -n "${KNOB:-}" ] && unset "$KNOB"
# TRACE="- -@3 K16": the timeline (a trial table's name: through that table) (`step --trace-tma`) of the fused step at TRACE_MS for each item ("-" or -@A), then
# tools/trials/spans.py of all of them side by side (OUT/spans.json), the traces in OUT/steps.tgz.
traces=()
for a in ${TRACE:-}; do
  [ -n "${KNOB:-}" ] && unset "$KNOB"
  d=.
  if [[ "$a" == *@* ]]; then export "${KNOB:?}=${a#*@}"; elif [ "$a" != - ]; then d="$data/$a"; cp -r models policies "$d/"; fi
  name=t$(echo "$a" | tr -c 'A-Za-z0-9\n' '_')
  SKINNYGEMM_DATA_DIR="$d" $cli step --model kimi_k3 --tp 8 --m "${TRACE_MS:-1,16}" --pdl on --no-sinks --variants skinny_fused \
    --trace-tma "$OUT/steps/$name.json" > "$OUT/steps/$name.txt" 2>&1 || echo "$a: trace failed"
  [ -s "$OUT/steps/$name.json" ] && gzip -f "$OUT/steps/$name.json" && traces+=("$name=$OUT/steps/$name.json.gz")
done
[ -n "${KNOB:-}" ] && unset "$KNOB"
[ ${#traces[@]} -gt 0 ] && tools/trials/spans.py "${traces[@]}" --json "$OUT/spans.json" | head -80
tar -C "$OUT" -czf "$OUT/steps.tgz" steps && rm -rf "$OUT/steps"
echo "== done after $(trial_elapsed)"
