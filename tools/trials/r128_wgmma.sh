#!/usr/bin/env bash
# Session 23, call 4: 128-row tiles on wgmma (two m64 wgmma per K step; x read once per 128 weight rows). From the repo
# root on the GPU machine, OUT set:
#   tools/trials/r128_wgmma.sh
# 1. build; 2. GpuTma.* (every listed config bitwise on small integers, the 128-row ones now on wgmma; random inputs
# against FP64); 3. every listed 128- and 64-row config at 32 / 64 tokens on 6288 x 7168 and 7168 x 3584 beside the
# selected pick (cuBLASLt), best five of each printed (call 2's mma.sync 128-row numbers: 30.06 / 40.74 us on
# 6288 x 7168 at M = 32 / 64).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
trial_gtest_tma 150
for run in 6288x7168:32 6288x7168:64 7168x3584:32 7168x3584:64; do
  IFS=: read -r shape m <<< "$run"
  timeout -k 5 60 $cli bench --backend cuda --shapes $shape --m $m --sweep "tma_m${m}_r[16][24]*" --samples 3 \
    --replays 10 --json "$OUT/sweep-$shape-m$m.json" > /dev/null 2>&1 || echo "$run cut or failed"
  tools/trials/bench_rows.py "$OUT/sweep-$shape-m$m.json" --best 5 --group _r128_ --group _r64_
done
echo "== done after $(trial_elapsed)"
