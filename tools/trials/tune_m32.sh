#!/usr/bin/env bash
# Session 23, call 2: the family at 17-32 tokens where call 1's sweep (tools/trials/sweep_m32_m64.sh) found it ahead of
# cuBLASLt (clusters that split K of few row tiles: 2112, 1536 and 3648 x 7168). From the repo root on the GPU machine,
# OUT set:
#   tools/trials/tune_m32.sh
# 1. build; 2. the first cut at M = 32 (bench --config tma; 2112 x 7168 now in one-box 4-stage clusters of eight);
# 3. the tuner over the 64-row 32-token configs and cuBLASLt at M = 17..32 on the shapes below, merged into a copy of
#    the shipped table (OUT/nvidia-h200.json; every M re-measured, a kernel stored only 3% ahead of cuBLASLt);
# 4. the step at M = 32 through the shipped table (s0) and the tuned one (t32), alternately, two rounds;
# 5. the 128-row configs at 32 and 64 tokens on 6288 x 7168 (x read half as often per weight byte), for the record.
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
timeout -k 5 60 $cli bench --backend cuda --shapes 2112x7168,1536x7168,896x7168,3584x7168 --m 32 --config tma \
  --json "$OUT/bench-first-cut-m32.json" > "$OUT/bench-first-cut-m32.txt" 2>&1 || echo "first-cut bench cut or failed"
tools/trials/bench_rows.py "$OUT/bench-first-cut-m32.json"
echo "== tune after $(trial_elapsed)"
data=build/t32-data
rm -rf "$data" && mkdir -p "$data/tables" && cp -r models policies "$data/" && cp tables/nvidia-h200.json "$data/tables/"
timeout -k 5 300 $cli tune --backend cuda --shapes 2112x7168,1536x7168,3648x7168,896x7168,3584x7168,2304x1536 \
  --m 17:32 --candidates 'tma_m32_r64*' --force --samples 3 --replays 10 --table "$data/tables/nvidia-h200.json" \
  --json "$OUT/tune-m32.json" > "$OUT/tune-m32.txt" 2>&1 || echo "tune cut or failed"
cp "$data/tables/nvidia-h200.json" "$OUT/"
python3 - "$data/tables/nvidia-h200.json" <<'PY'
import json, sys
from collections import defaultdict
picks = defaultdict(list)
for e in json.load(open(sys.argv[1]))["entries"]:
    if 17 <= e["m"] <= 32 and (e["n"], e["k"]) in {(2112, 7168), (1536, 7168), (3648, 7168), (896, 7168), (3584, 7168),
                                                    (2304, 1536)}:
        picks[(e["n"], e["k"])].append("%d:%s:%.2f/%.2f" % (e["m"], e["config"].replace("tma_m32_r64_", "") if e["config"].startswith("tma") else e["config"][:12], e["us"], e["cublaslt_us"]))
for nk, v in picks.items(): print(nk, " ".join(v))
PY
echo "== step after $(trial_elapsed)"
for round in 1 2; do
  for t in s0 t32; do
    d=.; [ "$t" = t32 ] && d="$data"
    SKINNYGEMM_DATA_DIR="$d" timeout -k 5 60 $cli step --model kimi_k3 --tp 8 --m 32 --pdl on --no-sinks \
      --variants skinny_fused,skinny > "$OUT/step-$t-$round.txt" 2>&1 || echo "step $t cut or failed"
    echo "$t round $round: $(grep -E '^ *(skinny|skinny_fused) +[0-9]' "$OUT/step-$t-$round.txt" | awk '{printf "%s %s ", $1, $5}')"
  done
done
echo "== 128-row sweep after $(trial_elapsed)"
for m in 32 64; do
  timeout -k 5 60 $cli bench --backend cuda --shapes 6288x7168 --m $m --sweep "tma_m${m}_r128*" --samples 3 --replays 10 \
    --json "$OUT/sweep-r128-m$m.json" > "$OUT/sweep-r128-m$m.txt" 2>&1 || echo "r128 sweep m=$m cut or failed"
  tools/trials/bench_rows.py "$OUT/sweep-r128-m$m.json" --best 5
done
echo "== done after $(trial_elapsed)"
