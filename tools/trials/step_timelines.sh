#!/usr/bin/env bash
# The TMA timeline of the whole step (`step --trace-tma`) through the shipped table (s0) and trial tables of
# tools/trials/step_trial_tables.py (built by tools/trials/step_trials.sh under build/trial-data), at M = 1 and 8
# (MS: other Ms), from the repo root on the GPU machine, OUT set, after a build:
#   tools/trials/step_timelines.sh "s0 E0 X2"
#   MS=8,16 VARIANTS=skinny_fused tools/trials/step_timelines.sh s0   (issue 16's 16-token drain, docs/kernels.md "Session 43")
# VARIANTS (default skinny): the step variants traced, e.g. skinny_fused.
# Writes OUT/trace-NAME.json.gz per name and OUT/spans.json (tools/trials/spans.py, every name side by side), then
# prints scripts/trace_summary.py of each. Exit 1 when no timeline was written.
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
source tools/trials/trial_lib.sh
s0=$(trial_s0_dir)  # the H200's table alone; the trial tables are step_trials.sh's (retargeted there)
args=()
for s in $1; do
  d=$s0
  if [ "$s" != s0 ]; then
    d="build/trial-data/$s"
    [ -d "$d" ] || { echo "no trial table $s (tools/trials/step_trial_tables.py)"; continue; }
    [ -d "$d/models" ] || cp -r models policies "$d/"
  fi
  SKINNYGEMM_DATA_DIR="$d" build/gpu/skinnygemm step --model kimi_k3 --tp 8 --m "${MS:-1,8}" --pdl on --no-sinks \
    --variants "${VARIANTS:-skinny}" --trace-tma "$OUT/trace-$s.json" > /dev/null 2> "$OUT/trace-$s.err" || tail -5 "$OUT/trace-$s.err"
  rm -f "$OUT/trace-$s.err"
  [ -s "$OUT/trace-$s.json" ] && gzip -f "$OUT/trace-$s.json" && args+=("$s=$OUT/trace-$s.json.gz")
done
[ ${#args[@]} -gt 0 ] || { echo "no timeline was written"; exit 1; }
tools/trials/spans.py "${args[@]}" --json "$OUT/spans.json"
for a in "${args[@]}"; do scripts/trace_summary.py "${a#*=}" --top 13; done
