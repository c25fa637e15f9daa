#!/usr/bin/env bash
# Session 22: every listed 64-row tma config at the 32- and 64-token tiles (wgmma) on 2112 x 7168 and 6288 x 7168, with
# the selected pick and cuBLASLt beside them, so that it shows whether the family now beats cuBLASLt at M = 32 / 64
# (issue 18 waits on that). From the repo root on the GPU machine, OUT set: tools/trials/sweep_m32_m64.sh
set -uo pipefail
start=$(date +%s)
OUT2=$(mktemp -d); OUT="$OUT2" scripts/gpu-check build > /dev/null || { echo build failed; exit 1; }
echo "built after $(( $(date +%s) - start ))s"
cli=build/gpu/skinnygemm
for run in 2112x7168:32:tma_m32_r64* 2112x7168:64:tma_m64_r64* 6288x7168:32:tma_m32_r64*; do
  IFS=: read -r shape m glob <<< "$run"
  left=$(( start + 250 - $(date +%s) ))
  [ "$left" -gt 40 ] || { echo "no time for $run"; break; }
  timeout -k 5 $left $cli bench --backend cuda --shapes $shape --m $m --sweep "$glob" --samples 3 --replays 10 \
    --json "$OUT/sweep-$shape-m$m.json" > "$OUT/sweep-$shape-m$m.txt" 2>&1 || echo "$run cut or failed"
  python3 - "$OUT/sweep-$shape-m$m.json" <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print("no json", e); sys.exit(0)
rows = d["rows"]
base = [r for r in rows if r.get("cublaslt_us")]
sw = sorted((r for r in rows if r.get("kind") != "bench" or not r.get("cublaslt_us")), key=lambda r: r["us"])
for r in base: print("selected", r["n"], r["k"], r["m"], r["config"], r["us"], "cublaslt", r["cublaslt_us"], "torch", r["cublaslt_torch_us"], "chain", r["chain_us"])
print(len(sw), "swept; best 6:")
for r in sw[:6]: print("  ", r["config"], r["us"])
PY
  echo "== $run done after $(( $(date +%s) - start ))s"
done
