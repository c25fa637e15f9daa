#!/usr/bin/env bash
# Session 23, call 4: 128-row tiles on wgmma (two m64 wgmma per K step; x read once per 128 weight rows). From the repo
# root on the GPU machine, OUT set:
#   tools/trials/r128_wgmma.sh
# 1. build; 2. GpuTma.* (every listed config bitwise on small integers, the 128-row ones now on wgmma; random inputs
# against FP64); 3. every listed 128- and 64-row config at 32 / 64 tokens on 6288 x 7168 and 7168 x 3584 beside the
# selected pick (cuBLASLt), best five of each printed (call 2's mma.sync 128-row numbers: 30.06 / 40.74 us on
# 6288 x 7168 at M = 32 / 64).
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
start=$(date +%s)
OUT2=$(mktemp -d); OUT="$OUT2" scripts/gpu-check build > /dev/null || { echo build failed; tail -30 "$OUT2/build.log"; exit 1; }
echo "built after $(( $(date +%s) - start ))s"
cli=build/gpu/skinnygemm
timeout -k 5 150 build/gpu/tests/skinnygemm_gpu_tests --gtest_filter='GpuTma.*' > "$OUT/gtest-tma.log" 2>&1 ||
  echo "GpuTma FAILED or cut"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/gtest-tma.log" | head -10
for run in 6288x7168:32 6288x7168:64 7168x3584:32 7168x3584:64; do
  IFS=: read -r shape m <<< "$run"
  timeout -k 5 60 $cli bench --backend cuda --shapes $shape --m $m --sweep "tma_m${m}_r[16][24]*" --samples 3 \
    --replays 10 --json "$OUT/sweep-$shape-m$m.json" > /dev/null 2>&1 || echo "$run cut or failed"
  python3 - "$OUT/sweep-$shape-m$m.json" <<'PY'
import json, sys
try: rows = json.load(open(sys.argv[1]))["rows"]
except Exception as e: print("no json", e); sys.exit(0)
base = [r for r in rows if r.get("cublaslt_us")]
sw = sorted((r for r in rows if not r.get("cublaslt_us")), key=lambda r: r["us"])
for r in base: print(r["n"], r["k"], "m=%d" % r["m"], "selected", r["config"], r["us"], "cuBLASLt", r["cublaslt_us"], "chain", r["chain_us"])
for rows_ in ("_r128_", "_r64_"):
    b = [r for r in sw if rows_ in r["config"]][:5]
    print("  best", rows_, " ".join("%s=%.2f" % (r["config"].split(rows_)[1], r["us"]) for r in b))
PY
done
echo "== done after $(( $(date +%s) - start ))s"
