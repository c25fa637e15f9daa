#!/usr/bin/env bash
# Session 25, call 2: the 16- and 32-row tiles with 4 and 8 boxes per stage, one 3D copy of each (call 1: the 3D copy
# took the 16-row one-CTA-per-tile ring from 13.6-14.7 to 11.0-11.5 us on 2112 and 1536 x 7168, so a copy costs
# ~24 ns of the stream; 8 boxes make the copies per byte four times fewer again). On the seeds' shapes at M = 1 / 8
# (token tile 8) and 16, beside selection's pick, cuBLASLt and the chain floor of the same rows.
# From the repo root on the GPU machine, OUT set:  tools/trials/narrow_boxes.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
shapes=2112x7168,1536x7168,3648x7168
timeout -k 5 60 $cli bench --backend cuda --shapes $shapes --m 1,8,16 --json "$OUT/sel.json" > /dev/null 2>&1 ||
  echo "selection failed"
echo "-- selection"; tools/trials/bench_rows.py "$OUT/sel.json"
for c in r16_b8_s4_x1 r16_b4_s8_x1 r16_b8_s3_x1 r16_b8_s4_x2 r32_b4_s4_x2 r32_b8_s3_x2 r16_b8_s4_c2_u1 r32_b4_s5_c2_d6; do
  for t in 8 16; do
    ms=$([ $t = 8 ] && echo 1,8 || echo 16)
    timeout -k 5 60 $cli bench --backend cuda --shapes $shapes --m $ms --config tma_m${t}_$c \
      --json "$OUT/n-$c-$t.json" > "$OUT/n.txt" 2>&1 || { echo "tma_m${t}_$c failed:"; grep -iE "error|fail" "$OUT/n.txt" | head -3; }
    tools/trials/bench_rows.py "$OUT/n-$c-$t.json"
  done
done
rm -f "$OUT/n.txt"
echo "== done after $(trial_elapsed)"
(cd "$OUT" && tar czf narrow-files.tgz sel.json n-*.json && rm -f sel.json n-*.json)
