#!/usr/bin/env bash
# The whole step under lab knobs of the TMA family (environment variables read by its launcher; docs/kernels.md
# "Session 14"), from the repo root on the GPU machine after a build, OUT set:
#   tools/trials/knob_trials.sh "- SKINNYGEMM_STEP_ABLATE_X=1 -" 1,8,16 [variants] [data folder]
# Each item is "-" (the shipped kernel) or VAR=value[,VAR=value...]. Prints one line per item and variant with the
# step's µs per M, and keeps each step's output in OUT/knobs-N.txt (N: the item's position).
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
variants="${3:-skinny_fused}"
data="${4:-.}"
n=0
for item in $1; do
  n=$((n + 1))
  log="$OUT/knobs-$n.txt"
  assignments=()
  [ "$item" != - ] && IFS=, read -r -a assignments <<< "$item"
  env "${assignments[@]}" SKINNYGEMM_DATA_DIR="$data" build/gpu/skinnygemm step --model kimi_k3 --tp 8 --m "$2" \
    --pdl on --no-sinks --variants "$variants" > "$log" 2>&1 || { echo "$item: step failed"; tail -5 "$log"; continue; }
  for v in ${variants//,/ }; do
    echo "$item${4:+ ($4)} $v $(grep -E "^ *$v " "$log" | awk '{printf "%s:%s ", $2, $5}')"
  done
done
exit 0
