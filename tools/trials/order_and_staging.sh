#!/usr/bin/env bash
# Session 33, call 1: two lab bits against the shipped kernel in one binary (SKINNYGEMM_STEP_ABLATE, bench and step).
#   256: y staged on every layout (before session 33's TmaParams::y_rows16): the misaligned held-out shapes, whose
#        heuristic pick is the 32-row one-part lead split, against the same ring as x1 (forced);
#   64 / 128: the lead split's reducers first / last in CTA order: its Kimi-K3 shapes alone, then the fused step.
# From the repo root on the GPU machine, OUT set (SKIP_BUILD=1 with a carried build):
#   SKIP_BUILD=1 ITEMS="- 64 128 256 - 64 128 256" tools/trials/order_and_staging.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
timeout -k 5 "${GTEST_SECONDS:-110}" build/gpu/tests/skinnygemm_gpu_tests \
  --gtest_filter='GpuTma.*:-GpuTma.RandomInputsAcrossThresholdsAndTails' > "$OUT/gtest-tma.log" 2>&1 || echo "GpuTma FAILED or cut"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/gtest-tma.log" | head -10
echo "== tests after $(trial_elapsed)"
bench() {  # $1 bits, $2 file stem, rest: bench arguments
  local bits=$1 stem=$2; shift 2
  SKINNYGEMM_STEP_ABLATE=$bits timeout -k 5 120 $cli bench --no-baselines --csv "$OUT/$stem.csv" "$@" > "$OUT/$stem.txt" 2>&1 ||
    echo "$stem: bench failed"
}
for r in 1 2; do
  for bits in 0 256; do bench $bits "misaligned-$bits-$r" --shapes 5003x1024,9001x1024,51866x1280 --m 1,2,8,16; done
done
for shape_ring in 5003x1024:s6 9001x1024:s4 51866x1280:s4; do
  shape=${shape_ring%:*} ring=${shape_ring#*:}
  bench 0 "x1-$shape-m8" --shapes "$shape" --m 1,2,8 --config "tma_m8_r32_b2_${ring}_x1"
  bench 0 "x1-$shape-m16" --shapes "$shape" --m 16 --config "tma_m16_r32_b2_${ring}_x1"
done
echo "== misaligned after $(trial_elapsed)"
for bits in 0 64 128; do bench $bits "lead-$bits" --shapes 6288x7168,6016x7168,7168x3584,7168x1536 --m 1,8,16; done
echo "== lead alone after $(trial_elapsed)"
mkdir -p "$OUT/steps"
n=0
for a in ${ITEMS:-- 64 128 - 64 128}; do
  n=$((n + 1))
  if [ "$a" = - ]; then unset SKINNYGEMM_STEP_ABLATE; else export SKINNYGEMM_STEP_ABLATE=$a; fi
  log="$OUT/steps/$n-$a.txt"
  timeout -k 5 60 $cli step --model kimi_k3 --tp 8 --m "${MS:-1,8,16}" --pdl on --no-sinks --variants skinny_fused \
    > "$log" 2>&1 || echo "$a: step failed"
  echo "$a: $(grep -E "^ *skinny_fused " "$log" | awk '{printf "%s:%s ", $2, $5}')"
done
unset SKINNYGEMM_STEP_ABLATE
echo "done after $(trial_elapsed)"
