#!/usr/bin/env bash
# Session 24, call 2. (1) Where the wide shapes lose against their chain floor, by ablation of the same kernel
# (tools/probes/tma_family.cu with PROBE_CONFIGS: each named config whole, without its split reduction, and its ring
# alone, beside the probe's chain floor and stream read): eh_proj and lm_head on stream-K, kda_in (6288 x 7168) on
# the lead split, qkv_a (2112 x 7168) in clusters of eight, at M = 1 / 16 / 64. (2) Over 128 MB the first cut
# takes stream-K; where the 64-row lead split fills (nearly) every two-per-SM slot it may be faster (call 1:
# 8192 x 11008 43.14 against 45.02 us at M = 1): both on five shapes whose lead-split grids fill 256-264 slots.
# From the repo root on the GPU machine, OUT set:  tools/trials/ablate_wide.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
left() { echo $(( trial_start + ${TRIAL_SECONDS:-560} - $(date +%s) )); }
for m in 1 16; do
  t=$([ $m = 1 ] && echo 8 || echo 16)
  for shape in 8448x8192 5632x12288 4224x16384 8192x8192 8192x11008; do
    for c in tma_m${t}_r64_b2_s4_c2_u1 tma_m${t}_r64_b2_s5_c2_d6; do
      [ "$(left)" -gt 200 ] || { echo "no time for $shape $c"; break 3; }
      timeout -k 5 60 $cli bench --backend cuda --shapes $shape --m $m --config $c --json "$OUT/big-$shape-m$m-$c.json" \
        > /dev/null 2>&1 || echo "$shape $c failed"
      tools/trials/bench_rows.py "$OUT/big-$shape-m$m-$c.json"
    done
  done
done
echo "== lead split against stream-K done after $(trial_elapsed)"
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Iinclude tools/probes/tma_family.cu -lcuda \
  -lcublasLt -o build/probe-tma_family > "$OUT/probe-build.log" 2>&1 || { echo "probe build failed"; tail -5 "$OUT/probe-build.log"; exit 1; }
echo "== probe built after $(trial_elapsed)"
echo "shape          M |    whole nofixup     ring    chain   stream | config"
PROBE_SHAPES=eh_proj,kda_in,qkv_a,lm_head PROBE_M=1,16,64 \
PROBE_CONFIGS=tma_m8_r64_b2_s4_c2_u1,tma_m8_r64_b2_s5_c2_d6,tma_m8_r64_b2_s5_c2_d6_h1,tma_m8_r64_b2_s3_x8,tma_m16_r64_b2_s4_c2_u1,tma_m16_r64_b2_s5_c2_d6,tma_m16_r64_b2_s5_c2_d6_h1,tma_m16_r64_b2_s3_x8,tma_m64_r64_b2_s3_c1_u1,tma_m64_r64_b1_s6_x1,tma_m64_r64_b1_s3_x8 \
  timeout -k 5 $(left) build/probe-tma_family > "$OUT/probe-ablate.csv" 2>&1 || echo "probe cut or failed"
grep -E '^(#|eh_proj|kda_in|qkv_a|lm_head) ' "$OUT/probe-ablate.csv"
echo "== done after $(trial_elapsed)"
