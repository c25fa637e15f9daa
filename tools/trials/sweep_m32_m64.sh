#!/usr/bin/env bash
# Session 22: why the TMA family loses at M = 32 / 64. Hypothesis: the 32- and 64-token instances were built for two
# CTAs per SM (__launch_bounds__ min 2: 156 registers at 64 tokens), so a grid of two CTAs per SM left no room for the
# next kernel's CTAs and a chain of them could not overlap. With min 3 for the 64-row tiles (128 registers, no spills,
# ptxas -v): GpuTma.*, the first-cut configs (`--config tma`) at M = 32 / 64 on eight Kimi-K3 shapes (against call 1's
# wgmma column, docs/kernels.md "Session 22"), then every listed 64-row config at 32 / 64 tokens on 2112 x 7168 and
# 6288 x 7168 beside the selected pick and cuBLASLt. From the repo root on the GPU machine, OUT set:
#   tools/trials/sweep_m32_m64.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
trial_gtest_tma 120
timeout -k 5 90 $cli bench --backend cuda --shapes \
  2112x7168,1536x7168,3648x7168,6288x7168,6016x7168,7168x3584,7168x1536,7168x768,2304x1536,7168x14336 --m 32,64 --config tma \
  --json "$OUT/bench-tma-m32-m64.json" > "$OUT/bench-tma-m32-m64.txt" 2>&1 || echo "first-cut bench cut or failed"
tools/trials/bench_rows.py "$OUT/bench-tma-m32-m64.json"
echo "== first cut done after $(trial_elapsed)"
for run in 6288x7168:32:tma_m32_r64* 7168x3584:32:tma_m32_r64* 6288x7168:64:tma_m64_r64* \
    7168x3584:64:tma_m64_r64* 3648x7168:32:tma_m32_r64* 2112x7168:32:tma_m32_r64* 7168x1536:32:tma_m32_r64* \
    2112x7168:64:tma_m64_r64*; do
  IFS=: read -r shape m glob <<< "$run"
  left=$(( trial_start + ${SWEEP_SECONDS:-480} - $(date +%s) ))
  [ "$left" -gt 40 ] || { echo "no time for $run"; break; }
  timeout -k 5 $left $cli bench --backend cuda --shapes $shape --m $m --sweep "$glob" --samples 3 --replays 10 \
    --json "$OUT/sweep-$shape-m$m.json" > "$OUT/sweep-$shape-m$m.txt" 2>&1 || echo "$run cut or failed"
  tools/trials/bench_rows.py "$OUT/sweep-$shape-m$m.json" --best 8
  echo "== $run done after $(trial_elapsed)"
done
