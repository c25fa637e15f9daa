#!/usr/bin/env bash
# Session 24, call 4: every GPU test (ctest -L gpu), then stream-K with the polled owner gather against the released
# counter (SKINNYGEMM_TMA_STREAMK_COUNTER=1, trial knob) on the stream-K shapes at M = 1 / 16, and the first cut's new
# lead split over 128 MB (bench's own selection). From the repo root on the GPU machine, OUT set.
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
timeout -k 5 300 ctest --test-dir build/gpu -L gpu --output-on-failure --timeout 280 -j 4 > "$OUT/ctest-gpu.log" 2>&1 ||
  echo "GPU ctest failed or cut"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Total Test time" "$OUT/ctest-gpu.log" | tail -12
echo "== ctest done after $(trial_elapsed)"
shapes=7168x14336,20480x7168,5632x12288,4224x16384
for m in 1 16; do
  t=$([ $m = 1 ] && echo 8 || echo 16)
  for name in polled counter; do
    if [ $name = counter ]; then export SKINNYGEMM_TMA_STREAMK_COUNTER=1; else unset SKINNYGEMM_TMA_STREAMK_COUNTER; fi
    timeout -k 5 60 $cli bench --backend cuda --shapes $shapes --m $m --config tma_m${t}_r64_b2_s4_c2_u1 \
      --json "$OUT/ab-$name-m$m.json" > /dev/null 2>&1 || echo "$name m=$m failed"
    echo "-- $name"; tools/trials/bench_rows.py "$OUT/ab-$name-m$m.json"
  done
done
unset SKINNYGEMM_TMA_STREAMK_COUNTER
timeout -k 5 60 $cli bench --backend cuda --shapes 8448x8192,8192x8192,8192x11008 --m 1,4,16 --json "$OUT/select-big.json" \
  > /dev/null 2>&1 || echo "selection bench failed"
echo "-- selection"; tools/trials/bench_rows.py "$OUT/select-big.json"
echo "== done after $(trial_elapsed)"
