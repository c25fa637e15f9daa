#!/usr/bin/env bash
# The whole step under the TMA family's lab knobs (docs/kernels.md "Session 14"), from the repo root on the GPU
# machine after a build, OUT set:
#   tools/trials/knob_trials.sh "0:0 2:0 2:1 4:1:0 0:0" 1,8,16 [variants]
# Each item is L2_AHEAD:EVICT_FIRST[:TRIGGER] (SKINNYGEMM_TMA_L2_AHEAD, SKINNYGEMM_TMA_EVICT_FIRST,
# SKINNYGEMM_TMA_TRIGGER; no TRIGGER: dependents launched at the start); "0:0" is the shipped kernel. Prints one line
# per item and variant with the step's µs per M, and keeps each step's output in OUT/knobs-ITEM.txt (the last run of
# an item repeated).
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
variants="${3:-skinny_fused}"
for item in $1; do
  IFS=: read -r l2 evict trigger <<< "$item"
  log="$OUT/knobs-${item//:/-}.txt"
  env SKINNYGEMM_TMA_L2_AHEAD="$l2" SKINNYGEMM_TMA_EVICT_FIRST="$evict" ${trigger:+SKINNYGEMM_TMA_TRIGGER="$trigger"} \
    build/gpu/skinnygemm step --model kimi_k3 --tp 8 --m "$2" --pdl on --no-sinks --variants "$variants" > "$log" 2>&1 ||
    { echo "$item: step failed"; tail -5 "$log"; continue; }
  for v in ${variants//,/ }; do
    echo "$item $v $(grep -E "^ *$v " "$log" | awk '{printf "%s:%s ", $2, $5}')"
  done
done
exit 0
