#!/usr/bin/env bash
# Session 34, call 1. (1) The register family's 100 table points (144 / 152 / 176 / 224 x 7168 at M = 5-32) tuned
# without it: every bulk config and the tma configs that session 33 measured best there (call 2), cuBLASLt's
# algorithms as always, into a table of its own (small-table.json) and every candidate's row (small-tune.json), so
# that the family can be retired with measured entries in its place. (2) eh_proj, lm_head, kda_in (6288 x 7168) and
# qkv_a (2112 x 7168) under the weight maps without L2 promotion (session 31), by ablation of the same kernel
# (tools/probes/tma_family.cu: each shipped config whole, without its split reduction, its ring alone, beside the
# probe's chain floor): what their time over the chain floor is made of now (session 33's next item 3).
# From the repo root on the GPU machine, OUT set, the build and build/probe-tma_family carried (SKIP_BUILD=1).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
left() { echo $(( trial_start + ${TRIAL_SECONDS:-540} - $(date +%s) )); }
if [ "${PART_SMALL:-1}" = 1 ]; then
  TMA='tma_m*_r64_b2_s4_x8,tma_m*_r64_b2_s3_x8,tma_m*_r16_b2_s8_x4,tma_m*_r16_b2_s6_x4,tma_m*_r16_b2_s12_x4,tma_m*_r16_b2_s16_x4'
  timeout -k 5 "${SMALL_SECONDS:-240}" $cli tune --backend cuda --shapes 144x7168,152x7168,176x7168,224x7168 \
    --m "${SMALL_M:-5:32}" --candidates "bulk_*,$TMA" --table "$OUT/small-table.json" --json "$OUT/small-tune.json" \
    > "$OUT/small-tune.txt" 2>&1 || echo "small tune failed or cut"
  grep -E '^\[' "$OUT/small-tune.txt" | sed 's/ -> .*heuristic/ heur/' | tail -120
  tail -8 "$OUT/small-tune.txt"
  echo "== small after $(trial_elapsed)"
fi
if [ "${PART_ABLATE:-1}" = 1 ]; then
  echo "shape          M |    whole nofixup     ring    chain   stream | config"
  PROBE_SHAPES=eh_proj,kda_in,qkv_a,lm_head PROBE_M=1,16 \
  PROBE_CONFIGS=tma_m8_r64_b2_s4_c2_u1,tma_m8_r64_b2_s5_c2_d6,tma_m8_r64_b2_s3_x8,tma_m16_r64_b2_s4_c2_u1,tma_m16_r64_b2_s4_c2_d6,tma_m16_r64_b2_s3_x8 \
    timeout -k 5 "$(left)" build/probe-tma_family > "$OUT/probe-ablate.csv" 2>&1 || echo "probe cut or failed"
  grep -E '^(#|eh_proj|kda_in|qkv_a|lm_head) ' "$OUT/probe-ablate.csv"
fi
echo "== done after $(trial_elapsed)"
