#!/usr/bin/env bash
# Session 26, branch step-ablation: what x and the split reduction cost the whole step. The fused step at M = 1 / 8 / 16
# with its chain floor, then alternately the shipped kernel (-) and its timing graphs under SKINNYGEMM_STEP_ABLATE
# (1: no x copies; 2: no split reduction, every part stores y; 3: both; wrong results, the eager check runs without).
# From the repo root on the GPU machine, OUT set.
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
timeout -k 5 90 build/gpu/tests/skinnygemm_gpu_tests --gtest_filter='GpuTma.OneCopy*' > "$OUT/gtest-onecopy.log" 2>&1 ||
  echo "GpuTma.OneCopy* FAILED or cut"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|^\[       OK \]" "$OUT/gtest-onecopy.log" | head -10
timeout -k 5 120 $cli step --model kimi_k3 --tp 8 --m 1,8,16 --pdl on --no-sinks --chain-floor \
  --variants skinny_fused > "$OUT/step-chain.txt" 2>&1 || echo "chain step failed"
grep -E "^ *skinny_fused +[0-9]|chain floor" "$OUT/step-chain.txt" | cut -c1-140
echo "== ablations after $(trial_elapsed)"
n=0
for a in ${ABLATIONS:-- 1 2 3 - 1 2 3}; do
  n=$((n + 1))
  log="$OUT/step-a$n.txt"
  if [ "$a" = - ]; then unset SKINNYGEMM_STEP_ABLATE; else export SKINNYGEMM_STEP_ABLATE=$a; fi
  timeout -k 5 60 $cli step --model kimi_k3 --tp 8 --m 1,8,16 --pdl on --no-sinks --variants skinny_fused > "$log" 2>&1 ||
    echo "$a: step failed"
  echo "ablate $a: $(grep -E "^ *skinny_fused " "$log" | awk '{printf "%s:%s ", $2, $5}')"
done
unset SKINNYGEMM_STEP_ABLATE
echo "== done after $(trial_elapsed)"
