#!/usr/bin/env bash
# The step through copies of the shipped table that force configs (docs/kernels.md "Session 11"), from the repo root
# on the GPU machine, OUT set:
#   tools/trials/step_trials.sh "s0 n1 n2 s0" 1,8         which neighbour's PDL edge the step leans on (6288 x 7168's
#                                                         successor n1 or predecessor n2 forced to cuBLASLt)
#   tools/trials/step_trials.sh "s0 L1 L2 L3 L4 s0" 1,8   joint tables: every TMA shape one config of at most one
#                                                         CTA per SM (scripts/judge-16b, removed in session 30; they all lost, session 12)
#   tools/trials/step_trials.sh "s0 F4 F6 s0" 1,8,16      7168 x 768's ring: the first cut's 5 stages against 4 and 6
#   PDL=off tools/trials/step_trials.sh "s0" 1            the same with PDL off on every launch (variants _nopdl)
#   VARIANTS=skinny_fused,skinny tools/trials/step_trials.sh "s0 D3 s0" 1,8,16   other step variants (default skinny)
# s0 is the shipped table; every other name a copy of it from tools/trials/step_trial_tables.py. Prints per table and
# variant the step's time per M (M:us) and keeps each step's output in $OUT/step-NAME[-pdlPDL].txt.
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
[ $# -ge 2 ] || { echo "usage: tools/trials/step_trials.sh \"TABLES\" M_LIST"; exit 2; }
variants="${VARIANTS:-skinny}"
source tools/trials/trial_lib.sh
trial_build  # SKIP_BUILD=1: the build carried (tools/trials/prebuilt.sh unpack)
data=build/trial-data
rm -rf "$data" && python3 tools/trials/step_trial_tables.py "$data"
s0=$(trial_s0_dir)  # the H200's table alone (retargeted on another 132-SM GPU: trial_lib.sh)
for s in $1; do
  d=$s0
  if [ "$s" != s0 ]; then
    d="$data/$s"; cp -r models policies "$d/"
    trial_retarget_tables "$d/tables/nvidia-h200.json"
  fi
  log="$OUT/step-$s${PDL:+-pdl$PDL}.txt"
  SKINNYGEMM_DATA_DIR="$d" $cli step --model kimi_k3 --tp 8 --m "$2" --pdl "${PDL:-on}" --no-sinks \
    --variants "$variants" > "$log" 2>&1
  for v in ${variants//,/ }; do
    echo "$s${PDL:+ (PDL $PDL)} $v $(grep -E "^ *$v(_nopdl)? " "$log" | awk '{printf "%s:%s ", $2, $5}')"
  done
done
exit 0
