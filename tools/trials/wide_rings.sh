#!/usr/bin/env bash
# Session 24: do the wide shapes' stream-K rings hold too few bytes in flight? The bench's chain probe is best with
# 2 CTAs x 96 KB per SM from 22 MB up; the stream-K configs the first cut gives lm_head 20480 x 7168 and eh_proj
# 7168 x 14336 (tma_m8_r64_b2_s4_c2_u1) hold 2 x 64 KB of weights and run 1.12-1.13x their chain floor alone
# (kernels.json at 9c59a3a). Forced configs with 80 / 96 KB of weights per CTA (rings of 5 and 6 stages, 97 and 113
# KB with x), then every listed config on f_b 1536 x 128 and [f_a|b] 144 x 7168 at M <= 4 (issue 16's <= 1.5 us line).
# From the repo root on the GPU machine, OUT set:  tools/trials/wide_rings.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
left() { echo $(( trial_start + ${TRIAL_SECONDS:-560} - $(date +%s) )); }
for m in 1 16; do
  t=$([ $m = 1 ] && echo 8 || echo 16)
  configs="tma_m${t}_r64_b2_s4_c2_u1 tma_m${t}_r64_b2_s5_c2_u1 tma_m${t}_r64_b1_s8_c2_u1 tma_m${t}_r64_b1_s10_c2_u1
           tma_m${t}_r128_b1_s4_c2_u1 tma_m${t}_r128_b1_s6_c2_u1 tma_m${t}_r64_b2_s5_c2_d6"
  [ $m = 1 ] && configs="$configs tma_m8_r64_b2_s6_c2_u1 tma_m8_r64_b1_s12_c2_u1"
  for c in $configs; do
    [ "$(left)" -gt 60 ] || { echo "no time for $c"; break 2; }
    timeout -k 5 60 $cli bench --backend cuda --shapes 7168x14336,20480x7168,8192x11008 --m $m --config $c \
      --json "$OUT/wide-m$m-$c.json" > "$OUT/wide-m$m-$c.txt" 2>&1 || { echo "$c failed"; tail -3 "$OUT/wide-m$m-$c.txt"; }
    tools/trials/bench_rows.py "$OUT/wide-m$m-$c.json"
  done
  echo "== M=$m done after $(trial_elapsed)"
done
for shape in 1536x128 144x7168; do
  for glob in 'tma_m8*' 'bulk_m8*'; do
    [ "$(left)" -gt 40 ] || { echo "no time for $shape $glob"; break 2; }
    name=$shape-${glob%%\*}
    timeout -k 5 60 $cli bench --backend cuda --shapes $shape --m 1,2,4 --sweep "$glob" --samples 3 --replays 10 \
      --json "$OUT/small-$name.json" > "$OUT/small-$name.txt" 2>&1 || echo "$shape $glob cut or failed"
    for m in 1 2 4; do
      python3 - "$OUT/small-$name.json" $m <<'EOF'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["m"] == int(sys.argv[2])]
sel = [r for r in rows if r.get("cublaslt_us")]
swept = sorted((r for r in rows if not r.get("cublaslt_us")), key=lambda r: r["us"])[:5]
print(sys.argv[1].split("/")[-1], "m=" + sys.argv[2], " ".join("%s=%.2f" % (r["config"], r["us"]) for r in sel),
      "| best:", " ".join("%s=%.2f" % (r["config"], r["us"]) for r in swept))
EOF
    done
  done
done
echo "== done after $(trial_elapsed)"
