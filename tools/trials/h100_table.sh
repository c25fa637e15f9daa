#!/usr/bin/env bash
# Session 40: the H100's table, written by `skinnygemm tune` on the H100 itself: 6016 and 6288 x 7168 (the fused step's
# KDA in_proj and MoE front, 161 launches) on 8-row streams at M = 1-8, which took 143-235 us off the H100's fused step
# against the heuristic and against the H200's table (docs/kernels.md "Session 40"); then the step through that table
# against no table, each M in processes of its own, ABAB; then the H100's step.json (cuBLASLt's two steps, the chain
# floor). From the repo root on an H100, OUT set, the build carried (SKIP_BUILD=1). Writes OUT/<device>.json (the
# table), OUT/step.json and OUT/h100.tgz (tune rows and logs, the step outputs). Not run in session 40 (its start was
# refused); the shipped H100 table was written from call 6's bench rows instead (scripts/table_from_bench.py). Run as is
# it would judge tune's table against none: with the shipped file in tables/, compare against that too.
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
w=$(mktemp -d)
t=$OUT/nvidia-h100-80gb-hbm3.json
shapes=6016x7168,6288x7168
$cli tune --shapes $shapes --m 1:5 --candidates tma_m8_r8_b16_s4_rs --table "$t" --json "$w/tune-m1-5.json" \
  > "$w/tune-m1-5.txt" 2>&1 || { echo "tune M = 1-5 failed"; tail -5 "$w/tune-m1-5.txt"; }
$cli tune --shapes $shapes --m 6:8 --candidates tma_m8_r8_b16_s3_rs --table "$t" --json "$w/tune-m6-8.json" \
  > "$w/tune-m6-8.txt" 2>&1 || { echo "tune M = 6-8 failed"; tail -5 "$w/tune-m6-8.txt"; }
grep -c '"config"' "$t"; grep -o '"config": *"[^"]*"' "$t" | sort | uniq -c
echo "== tuned after $(trial_elapsed)"
with=$(trial_data_dir h100-data "$t") no=$(trial_data_dir no-table-data)
for m in $(echo "${STEP_M:-1,2,4,6,8}" | tr , ' '); do  # each M in processes of its own
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
