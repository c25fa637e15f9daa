#!/usr/bin/env bash
# Session 40: the library on a GPU its shipped table was not tuned for (the device tool lends H100s where the table is
# the H200's): the whole fused step and the kernels alone through selection's heuristic alone (no table: what a user
# of that GPU gets), against cuBLASLt's two configurations and the chain floor, and the step through the H200's table
# retargeted to this GPU (trial_s0_dir) beside it. From the repo root on the GPU machine, OUT set, the build
# carried (SKIP_BUILD=1). Writes OUT/unseen.tgz (step-table.json / .txt, step-no-table.json / .txt, kernels-no-table.json
# / .txt) and prints the steps' rows. STEP_M (default 1,2,4,8,16,32,64), BENCH_M (default 1,2,4,8,16).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
w=$(mktemp -d)
nt=$(trial_data_dir no-table-data)
s0=$(trial_s0_dir)
SKINNYGEMM_DATA_DIR=$s0 $cli step --model kimi_k3 --tp 8 --m "${STEP_M:-1,2,4,8,16,32,64}" --pdl on --no-sinks --chain-floor \
  --variants cublaslt,cublaslt_torch,skinny_fused --json "$w/step-table.json" > "$w/step-table.txt" 2>&1 || echo "step (table) failed"
SKINNYGEMM_DATA_DIR=$nt $cli step --model kimi_k3 --tp 8 --m "${STEP_M:-1,2,4,8,16,32,64}" --pdl on --no-sinks \
  --variants skinny_fused --json "$w/step-no-table.json" > "$w/step-no-table.txt" 2>&1 || echo "step (no table) failed"
grep -E "^(cublaslt|skinny)" "$w/step-table.txt" "$w/step-no-table.txt" | cut -c1-200
echo "== steps after $(trial_elapsed)"
SKINNYGEMM_DATA_DIR=$nt timeout -k 5 240 $cli bench --shapes model:kimi_k3:tp8 --m "${BENCH_M:-1,2,4,8,16}" \
  --json "$w/kernels-no-table.json" > "$w/kernels-no-table.txt" 2>&1 || echo "bench (no table) failed or cut"
echo "== bench after $(trial_elapsed)"
tar -czf "$OUT/unseen.tgz" -C "$w" . && rm -rf "$w"
