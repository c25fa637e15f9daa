#!/usr/bin/env bash
# Session 39: the row stream probe (tools/probes/row_stream.cu: one CTA per 8 or 16 weight rows over the whole K, no
# split, x once per CTA or per stage) against the chain floor of the same bytes in one process, then `bench` of the same
# shapes (selection's picks with chain_us and the cuBLASLt baselines) in the same call. From the repo root on the GPU
# machine, OUT set, the build carried (SKIP_BUILD=1, tools/trials/prebuilt.sh unpack).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Iinclude tools/probes/row_stream.cu -lcuda \
  -o /tmp/row_stream || { echo "probe build failed"; exit 1; }
timeout -k 5 "${PROBE_SECONDS:-120}" /tmp/row_stream "${ROUNDS:-2}" > "$OUT/row-stream.txt" 2>&1
echo "probe rc=$? after $(trial_elapsed)"
grep -E "^# " "$OUT/row-stream.txt" | head -120
grep -c ",FAIL" "$OUT/row-stream.txt"
timeout -k 5 "${BENCH_SECONDS:-150}" $cli bench --shapes "${SHAPES:-2112x7168,1536x7168,3648x7168,3072x1536,4096x512}" \
  --m "${BENCH_M:-1,2,4,8,16}" --json "$OUT/row-stream-bench.json" > "$OUT/row-stream-bench.txt" 2>&1 ||
  echo "bench failed or cut"
python3 tools/trials/bench_rows.py "$OUT/row-stream-bench.json" | head -40
echo "== done after $(trial_elapsed)"
