#!/usr/bin/env bash
# Session 41: which earlier M moves a later M's step in one process (docs/kernels.md "Session 40", part 3: M = 16 ran
# 70-74 us faster after M = 1-8 through the row-stream tables than after the same Ms through s0, and +2 / -11 apart in
# processes of their own). Each table of TABLES (names under build/trial-data, made by tools/trials/step_trials.sh, or
# s0) runs the fused step at each M list of LISTS (default "16 1,16 8,16 16,16") in processes of their own, ROUNDS
# rounds (default 2), the lists' order rotated per round. From the repo root on the GPU machine, OUT set, after
# tools/trials/row_stream_trials.sh or step_trials.sh made the trial tables. Prints "table list round M:us ..." and
# writes OUT/carry_over.txt.
set -uo pipefail
source tools/trials/trial_lib.sh
s0=$(trial_s0_dir)
lists=(${LISTS:-16 1,16 8,16 16,16})
for r in $(seq 1 "${ROUNDS:-2}"); do
  for i in "${!lists[@]}"; do
    l=${lists[$(( (i + r - 1) % ${#lists[@]} ))]}
    for t in ${TABLES:-s0}; do
      d=$s0 && [ "$t" != s0 ] && d=build/trial-data/$t
      [ -d "$d/tables" ] || { echo "no table folder $d"; continue; }
      [ -d "$d/models" ] || cp -r models policies "$d/"
      line=$(SKINNYGEMM_DATA_DIR=$d $cli step --model kimi_k3 --tp 8 --m "$l" --pdl on --no-sinks \
        --variants skinny_fused 2>/dev/null | grep -E '^skinny_fused' | awk '{printf "%s:%s ", $2, $5}')
      echo "$t $l $r $line" | tee -a "$OUT/carry_over.txt"
    done
  done
done
