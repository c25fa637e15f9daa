#!/usr/bin/env bash
# Session 22: why the TMA family loses at M = 32 / 64. Hypothesis: the 32- and 64-token instances were built for two
# CTAs per SM (__launch_bounds__ min 2: 156 registers at 64 tokens), so a grid of two CTAs per SM left no room for the
# next kernel's CTAs and a chain of them could not overlap. With min 3 for the 64-row tiles (128 registers, no spills,
# ptxas -v): GpuTma.*, the first-cut configs (`--config tma`) at M = 32 / 64 on eight Kimi-K3 shapes (against call 1's
# wgmma column, docs/kernels.md "Session 22"), then every listed 64-row config at 32 / 64 tokens on 2112 x 7168 and
# 6288 x 7168 beside the selected pick and cuBLASLt. From the repo root on the GPU machine, OUT set:
#   tools/trials/sweep_m32_m64.sh
set -uo pipefail
start=$(date +%s)
OUT2=$(mktemp -d); OUT="$OUT2" scripts/gpu-check build > /dev/null || { echo build failed; exit 1; }
echo "built after $(( $(date +%s) - start ))s"
cli=build/gpu/skinnygemm
timeout -k 5 120 build/gpu/tests/skinnygemm_gpu_tests --gtest_filter='GpuTma.*' > "$OUT/gtest-tma.log" 2>&1 ||
  echo "GpuTma FAILED or cut"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/gtest-tma.log" | head -10
timeout -k 5 90 $cli bench --backend cuda --shapes \
  2112x7168,1536x7168,3648x7168,6288x7168,6016x7168,7168x3584,7168x1536,7168x768,2304x1536,7168x14336 --m 32,64 --config tma \
  --json "$OUT/bench-tma-m32-m64.json" > "$OUT/bench-tma-m32-m64.txt" 2>&1 || echo "first-cut bench cut or failed"
python3 - "$OUT/bench-tma-m32-m64.json" <<'PY'
import json, sys
try: rows = json.load(open(sys.argv[1]))["rows"]
except Exception as e: print("no json", e); sys.exit(0)
for r in rows:
    print("first cut %5dx%-5d m=%2d %-26s %6.2f  chain %6.2f  cuBLASLt %6.2f" % (r["n"], r["k"], r["m"], r["config"], r["us"],
          r["chain_us"], min(r["cublaslt_us"], r["cublaslt_torch_us"])))
PY
echo "== first cut done after $(( $(date +%s) - start ))s"
for run in 6288x7168:32:tma_m32_r64* 7168x3584:32:tma_m32_r64* 6288x7168:64:tma_m64_r64* \
    7168x3584:64:tma_m64_r64* 3648x7168:32:tma_m32_r64* 2112x7168:32:tma_m32_r64* 7168x1536:32:tma_m32_r64* \
    2112x7168:64:tma_m64_r64*; do
  IFS=: read -r shape m glob <<< "$run"
  left=$(( start + ${SWEEP_SECONDS:-480} - $(date +%s) ))
  [ "$left" -gt 40 ] || { echo "no time for $run"; break; }
  timeout -k 5 $left $cli bench --backend cuda --shapes $shape --m $m --sweep "$glob" --samples 3 --replays 10 \
    --json "$OUT/sweep-$shape-m$m.json" > "$OUT/sweep-$shape-m$m.txt" 2>&1 || echo "$run cut or failed"
  python3 - "$OUT/sweep-$shape-m$m.json" <<'PY'
import json, sys
try: rows = json.load(open(sys.argv[1]))["rows"]
except Exception as e: print("no json", e); sys.exit(0)
base = [r for r in rows if r.get("cublaslt_us")]
sw = sorted((r for r in rows if not r.get("cublaslt_us")), key=lambda r: r["us"])
for r in base: print("selected", r["n"], r["k"], r["m"], r["config"], r["us"], "cuBLASLt", r["cublaslt_us"], "torch", r["cublaslt_torch_us"], "chain", r["chain_us"])
print(len(sw), "swept; best 8:")
for r in sw[:8]: print("  ", r["config"], r["us"])
PY
  echo "== $run done after $(( $(date +%s) - start ))s"
done
