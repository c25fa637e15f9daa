#!/usr/bin/env bash
# Session 34: the library's own ablation alone (`bench` with SKINNYGEMM_STEP_ABLATE, TmaParams::ablate: bit 1 no x
# copies, 2 no lead-split reduction, 4 no cluster reduction, 8 no stream-K reduction; wrong results, timing only), on
# the heuristic's picks of the seeds' and the widest Kimi-K3 shapes at M = 1 and 16, alternately, ROUNDS rounds: what
# x and each split reduction cost the library's kernels (3D copies, the polled gathers), where call 1's probe timed its
# own copy of the kernel. From the repo root on the GPU machine, OUT set, the build carried (SKIP_BUILD=1).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
w=$(mktemp -d)
for r in $(seq 1 "${ROUNDS:-2}"); do
  for bits in ${ITEMS:-0 1 14 15}; do
    SKINNYGEMM_STEP_ABLATE=$bits timeout -k 5 90 $cli bench --no-baselines \
      --shapes "${ABLATE_SHAPES:-7168x14336,20480x7168,6288x7168,2112x7168,1536x7168,3648x7168}" --m "${ABLATE_M:-1,16}" \
      --csv "$w/b$bits-$r.csv" > /dev/null 2>&1 || echo "bits $bits round $r failed"
  done
  echo "== round $r after $(trial_elapsed)"
done
echo "shape,m,config,bits,round,us" | tee "$OUT/lib-ablate.csv"
for f in "$w"/*.csv; do
  b=$(basename "$f" .csv); bits=${b%-*}; bits=${bits#b}; r=${b##*-}
  awk -F, -v s="$bits" -v r="$r" 'NR > 1 {printf "%sx%s,%s,%s,%s,%s,%s\n", $4, $5, $6, $7, s, r, $9}' "$f"
done | sort -t, -k1,1 -k2,2n -k4,4n -k5,5n | tee -a "$OUT/lib-ablate.csv"
echo "== done after $(trial_elapsed)"
