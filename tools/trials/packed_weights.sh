#!/usr/bin/env bash
# Session 30: what the row-strided weight copy costs. The lab's ablation bit 16 (SKINNYGEMM_STEP_ABLATE=16, timing
# only, wrong results) has every TMA launch read w as if it were packed tile-contiguous: each stage one 2D copy of
# rows x boxes consecutive 128-byte lines, i.e. one contiguous 16 KB run (the chain floor's copy) instead of a 3D box of
# `rows` 256-byte pieces 2 x K bytes apart. Same shared-memory image, same MMAs, same x, same split reduction.
#   1. selection's picks on the step's TMA shapes at M = 1 / 8 / 16 alone: the shipped copy with its baselines (the
#      chain floor in the same row), then ABAB without baselines: shipped, packed, shipped, packed;
#   2. the fused step at MS (default 1,8,16) with its chain floor, then ITEMS (default "- 16 - 16").
# From the repo root on the GPU machine, OUT set:  tools/trials/packed_weights.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
trial_gtest_tma 150
shapes=${SHAPES:-2112x7168,1536x7168,3648x7168,6288x7168,6016x7168,7168x3584,7168x1536,7168x768,7168x14336,20480x7168}
ms=${MS:-1,8,16}
mkdir -p "$OUT/alone"
unset SKINNYGEMM_STEP_ABLATE
timeout -k 5 200 $cli bench --backend cuda --shapes "$shapes" --m "$ms" --json "$OUT/alone/base.json" > /dev/null 2>&1 ||
  echo "bench with baselines failed"
n=0
for a in - 16 - 16; do
  n=$((n + 1))
  if [ "$a" = - ]; then unset SKINNYGEMM_STEP_ABLATE; else export SKINNYGEMM_STEP_ABLATE=$a; fi
  timeout -k 5 100 $cli bench --backend cuda --shapes "$shapes" --m "$ms" --no-baselines \
    --json "$OUT/alone/$n-$a.json" > /dev/null 2>&1 || echo "bench $a failed"
done
unset SKINNYGEMM_STEP_ABLATE
echo "== alone after $(trial_elapsed)"
python3 - "$OUT/alone" <<'EOF'
import json, sys, os
d = sys.argv[1]
def rows(f):
    try: return {(r["n"], r["k"], r["m"]): r for r in json.load(open(os.path.join(d, f)))["rows"]}
    except Exception as e: print("no rows in", f, e); return {}
base = rows("base.json")
runs = [rows(f) for f in ("1--.json", "2-16.json", "3--.json", "4-16.json")]
print("%-11s %3s %-28s %7s %7s %7s %7s %7s %7s %7s" % ("shape", "m", "config", "chain", "with_bl", "base_a", "pack_a",
                                                       "base_b", "pack_b", "gain"))
for key in sorted(base):
    r = base[key]
    t = [x.get(key, {}).get("us", float("nan")) for x in runs]
    gain = (t[0] + t[2]) / 2 - (t[1] + t[3]) / 2
    print("%5dx%-5d %3d %-28s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %+7.2f" % (key[0], key[1], key[2], r["config"][:28],
          r.get("chain_us", float("nan")), r["us"], t[0], t[1], t[2], t[3], gain))
EOF
mkdir -p "$OUT/steps"
timeout -k 5 150 $cli step --model kimi_k3 --tp 8 --m "$ms" --pdl on --no-sinks --chain-floor \
  --variants skinny_fused > "$OUT/steps/chain.txt" 2>&1 || echo "chain step failed"
grep -E "^ *skinny_fused +[0-9]|chain floor of the fused launches:" "$OUT/steps/chain.txt" | cut -c1-100
n=0
for a in ${ITEMS:-- 16 - 16}; do
  n=$((n + 1))
  if [ "$a" = - ]; then unset SKINNYGEMM_STEP_ABLATE; else export SKINNYGEMM_STEP_ABLATE=$a; fi
  log="$OUT/steps/$n-$a.txt"
  timeout -k 5 60 $cli step --model kimi_k3 --tp 8 --m "$ms" --pdl on --no-sinks --variants skinny_fused > "$log" 2>&1 ||
    echo "$a: step failed"
  echo "$a: $(grep -E "^ *skinny_fused " "$log" | awk '{printf "%s:%s ", $2, $5}')"
done
unset SKINNYGEMM_STEP_ABLATE
tar -C "$OUT" -czf "$OUT/packed.tgz" alone steps && rm -rf "$OUT/alone" "$OUT/steps"
echo "== done after $(trial_elapsed)"
