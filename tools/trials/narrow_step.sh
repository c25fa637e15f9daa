#!/usr/bin/env bash
# Session 25, call 5: GpuTma.* with the test of one 3D copy per stage against copies per box (listed two-box configs
# and the 4- and 8-box narrow stages); 3648 x 7168 on one CTA per 32-row tile alone; the fused step with it (trial N1)
# against the shipped table, alternately. From the repo root on the GPU machine, OUT set.
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
trial_gtest_tma 150
for c in r32_b4_s5_x1 r32_b8_s3_x1 r32_b4_s4_x1; do
  timeout -k 5 60 $cli bench --backend cuda --shapes 3648x7168,2112x7168 --m 1,8 --config tma_m8_$c \
    --json "$OUT/b-$c.json" > /dev/null 2>&1 || echo "$c failed"
  tools/trials/bench_rows.py "$OUT/b-$c.json"
done
VARIANTS=skinny_fused tools/trials/step_trials.sh "s0 N1 s0 N1" 1,8
echo "== done after $(trial_elapsed)"
