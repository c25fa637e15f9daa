#!/usr/bin/env bash
# Session 41: the H100's fused step through its shipped table (tables/nvidia-h100-80gb-hbm3.json, the 8-row streams on
# 6016 and 6288 x 7168 at M <= 8, written from bench rows by scripts/table_from_bench.py in session 40) against no
# table, each M of STEP_M in processes of its own, ABAB; then the H100's step.json (cuBLASLt's two steps, the chain
# floor). It replaces h100_table.sh, whose `tune --candidates tma_m8_r8_b16_s4_rs` named a lab-only instance that no
# list holds: the tuner measured cuBLASLt alone and stored it (call 4 of docs/benchmarks/h100/session41; such a glob
# is an error since). From the repo root on an H100, OUT set, the build carried (SKIP_BUILD=1). Writes OUT/step.json
# and OUT/h100.tgz (the step outputs).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
w=$(mktemp -d)
with=$(trial_data_dir h100-data tables/nvidia-h100-80gb-hbm3.json) no=$(trial_data_dir no-table-data)
for m in $(echo "${STEP_M:-1,2,4,8}" | tr , ' '); do  # each M in processes of its own (docs/kernels.md "Session 40")
  for r in 1 2; do
    for d in "$no" "$with"; do
      SKINNYGEMM_DATA_DIR=$d $cli step --model kimi_k3 --tp 8 --m "$m" --pdl on --no-sinks --variants skinny_fused \
        > "$w/step-$(basename "$d")-m$m-$r.txt" 2>&1
      echo "$(basename "$d") $(grep -E '^skinny_fused' "$w/step-$(basename "$d")-m$m-$r.txt" | awk '{printf "%s:%s ", $2, $5}')"
    done
  done
done
echo "== steps after $(trial_elapsed)"
SKINNYGEMM_DATA_DIR=$with $cli step --model kimi_k3 --tp 8 --m 1,2,4,8,16,32,64 --pdl on --no-sinks --chain-floor \
  --variants cublaslt,cublaslt_torch,cublaslt_fused,skinny,skinny_fused --json "$OUT/step.json" > "$w/step.txt" 2>&1 ||
  echo "step.json failed"
grep -E "^(cublaslt|skinny)" "$w/step.txt" | cut -c1-130
tar -czf "$OUT/h100.tgz" -C "$w" . && rm -rf "$w"
echo "== done after $(trial_elapsed)"
