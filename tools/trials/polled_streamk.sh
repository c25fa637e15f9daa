#!/usr/bin/env bash
# Session 24, call 3: stream-K's owner gathers the other CTAs' shares of its last tile as polled words (no released
# counter at any tile end). GpuTma.*; then the stream-K configs with it and with the released counter
# (SKINNYGEMM_TMA_STREAMK_COUNTER=1, a trial knob) on six shapes at M = 1 / 16, beside the lead split; then the fused
# step through the shipped table and trial K2 (stream-K on 6288 and 6016 x 7168), alternately.
# From the repo root on the GPU machine, OUT set:  tools/trials/polled_streamk.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
trial_gtest_tma 150
shapes=7168x14336,20480x7168,6288x7168,6016x7168,2112x7168,8192x11008,8448x8192
for m in 1 16; do
  t=$([ $m = 1 ] && echo 8 || echo 16)
  for run in "polled:tma_m${t}_r64_b2_s4_c2_u1:" "counter:tma_m${t}_r64_b2_s4_c2_u1:1" "lead:tma_m${t}_r64_b2_s5_c2_d6:"; do
    IFS=: read -r name c knob <<< "$run"
    SKINNYGEMM_TMA_STREAMK_COUNTER=$knob timeout -k 5 90 $cli bench --backend cuda --shapes $shapes --m $m --config $c \
      --json "$OUT/bench-$name-m$m.json" > "$OUT/bench-$name-m$m.txt" 2>&1 || echo "$name m=$m failed"
    echo "-- $name"; tools/trials/bench_rows.py "$OUT/bench-$name-m$m.json"
  done
done
echo "== benches done after $(trial_elapsed)"
VARIANTS=skinny_fused tools/trials/step_trials.sh "s0 K2 s0 K2" 1,8,16
echo "== done after $(trial_elapsed)"
