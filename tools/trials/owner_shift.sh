#!/usr/bin/env bash
# (Ran once, session 34 call 2, at cb3fec8; the ablation bits 6-8 it sets were deleted after it: the shift lost.)
# Session 34: stream-K with the tile owners' ranges lengthened by SHIFT stages (the lab's ablation bits 6-8, value 64 x
# shift; tma_gemm.cuh first_unit), so that the shares an owner gathers are published before it needs them (call 1's
# ablation: the split reduction is 2.3-3.7 us of the wide shapes' time over their chain floor). First the bitwise test of
# the shifted ranges, then the stream-K configs alone at each shift, alternately, ROUNDS rounds.
# From the repo root on the GPU machine, OUT set, the build carried (SKIP_BUILD=1).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
timeout -k 5 "${GTEST_SECONDS:-150}" build/gpu/tests/skinnygemm_gpu_tests \
  --gtest_filter="${GTEST_FILTER:-GpuTma.StreamKWithLongerOwnerRangesIsBitwiseExact:GpuTma.EveryListedConfigIsBitwiseExactOnSmallIntegers:GpuTma.SameInputsGiveSameBits}" \
  > "$OUT/gtest-shift.log" 2>&1 || echo "gtest FAILED or cut"
grep -E "^\[ +(OK|FAILED|PASSED) " "$OUT/gtest-shift.log" | head -12
echo "== tests after $(trial_elapsed)"
w=$(mktemp -d)
for r in $(seq 1 "${ROUNDS:-2}"); do
  for shift in ${SHIFTS:-0 1 2 3 4}; do
    for sc in ${CASES:-7168x14336:tma_m8_r64_b2_s4_c2_u1:1,2 20480x7168:tma_m8_r64_b2_s4_c2_u1:1,2 6288x7168:tma_m8_r64_b2_s4_c2_u1:1,2 7168x14336:tma_m16_r64_b2_s4_c2_u1:16}; do
      IFS=: read -r shape config ms <<< "$sc"
      SKINNYGEMM_STEP_ABLATE=$((64 * shift)) timeout -k 5 60 $cli bench --no-baselines --shapes "$shape" --m "$ms" \
        --config "$config" --csv "$w/s$shift-$shape-$config-$r.csv" > /dev/null 2>&1 || echo "$shape $config shift $shift failed"
    done
  done
  echo "== round $r after $(trial_elapsed)"
done
echo "shape,m,config,shift,round,us"
for f in "$w"/*.csv; do
  b=$(basename "$f" .csv); shift=${b%%-*}; shift=${shift#s}; r=${b##*-}
  awk -F, -v s="$shift" -v r="$r" 'NR > 1 {printf "%sx%s,%s,%s,%s,%s,%s\n", $4, $5, $6, $7, s, r, $9}' "$f"
done | sort -t, -k1,1 -k2,2n -k4,4n -k5,5n | tee "$OUT/shift.csv"
echo "== done after $(trial_elapsed)"
