#!/usr/bin/env bash
# Session 25, call 1: one 3D copy per stage of w and of x (a [K / 64][rows][64] view, kBoxes boxes in one copy)
# against a 2D copy per box (SKINNYGEMM_TMA_COPY=2d, lab knob), in one binary. GpuTma.* with the 3D copies; then, in
# alternating rounds, selection's picks on the step's TMA shapes at M = 1 / 8 / 16, the 16-row one-CTA-per-tile
# rings on the seeds' shapes (session 17's suspect for their 1.7x: four copies per 6 KB stage), and the fused step.
# From the repo root on the GPU machine, OUT set:  tools/trials/box3d.sh
# (SKINNYGEMM_TMA_COPY was removed after call 6: check out 2fb1f5e to rerun this A/B.)
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
trial_gtest_tma 150
echo "== GpuTma done after $(trial_elapsed)"
copy() { if [ "$1" = 2d ]; then export SKINNYGEMM_TMA_COPY=2d; else unset SKINNYGEMM_TMA_COPY; fi; }
shapes=2112x7168,1536x7168,3648x7168,6288x7168,6016x7168,7168x3584,7168x1536,7168x14336
for round in 3d-a 2d-a 3d-b 2d-b; do
  copy "${round%-*}"
  timeout -k 5 120 $cli bench --backend cuda --shapes $shapes --m 1,8,16 --json "$OUT/sel-$round.json" > /dev/null 2>&1 ||
    echo "selection $round failed"
  echo "-- selection, $round"; tools/trials/bench_rows.py "$OUT/sel-$round.json"
done
for round in 3d-a 2d-a 3d-b 2d-b; do
  copy "${round%-*}"
  for c in tma_m8_r16_b2_s16_x1 tma_m8_r16_b2_s24_x1 tma_m8_r32_b2_s8_x1; do
    timeout -k 5 60 $cli bench --backend cuda --shapes 2112x7168,1536x7168 --m 1,8 --config $c \
      --json "$OUT/narrow-$round-$c.json" > /dev/null 2>&1 || echo "$c $round failed"
  done
  echo "-- narrow, $round"; for c in tma_m8_r16_b2_s16_x1 tma_m8_r16_b2_s24_x1 tma_m8_r32_b2_s8_x1; do
    tools/trials/bench_rows.py "$OUT/narrow-$round-$c.json"; done
done
echo "== benches done after $(trial_elapsed)"
for round in 3d 2d 3d 2d; do
  copy $round
  timeout -k 5 60 $cli step --model kimi_k3 --tp 8 --m 1,8,16 --pdl on --no-sinks --variants skinny_fused \
    > "$OUT/step-$round.txt" 2>&1 || echo "step $round failed"
  echo "step $round $(grep -E "^ *skinny_fused " "$OUT/step-$round.txt" | awk '{printf "%s:%s ", $2, $5}')"
done
unset SKINNYGEMM_TMA_COPY
echo "== done after $(trial_elapsed)"
# The tool brings back a few files: the JSONs and step outputs in one archive.
(cd "$OUT" && tar czf box3d-files.tgz sel-*.json narrow-*.json step-*.txt && rm -f sel-*.json narrow-*.json step-*.txt)
