#!/usr/bin/env bash
# Session 25, call 6: kernels.json at d5d0797 had f_b 1536 x 128 at M = 1 / 16 12-15% and q_b 2304 x 1536 3-5% slower
# than at 9c59a3a (one run each): the 3D copy against copies per box (SKINNYGEMM_TMA_COPY=2d) on the small shapes, in
# alternating rounds. From the repo root on the GPU machine, OUT set.
# (SKINNYGEMM_TMA_COPY was removed after call 6: check out 2fb1f5e to rerun this A/B.)
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
for round in 3d-a 2d-a 3d-b 2d-b 3d-c 2d-c; do
  if [ "${round%-*}" = 2d ]; then export SKINNYGEMM_TMA_COPY=2d; else unset SKINNYGEMM_TMA_COPY; fi
  timeout -k 5 60 $cli bench --backend cuda --shapes 1536x128,2304x1536,896x7168,7168x768 --m 1,2,4,8,16 \
    --json "$OUT/small-$round.json" > /dev/null 2>&1 || echo "$round failed"
done
unset SKINNYGEMM_TMA_COPY
python3 - "$OUT" <<'PY'
import json, sys
runs = {}
for r in ["3d-a", "2d-a", "3d-b", "2d-b", "3d-c", "2d-c"]:
    try:
        runs[r] = {(x["n"], x["k"], x["m"]): x["us"] for x in json.load(open("%s/small-%s.json" % (sys.argv[1], r)))["rows"]}
    except (OSError, ValueError, KeyError):
        runs[r] = {}
for key in sorted(runs["3d-a"]):
    d3 = [runs[r].get(key, float("nan")) for r in runs if r.startswith("3d")]
    d2 = [runs[r].get(key, float("nan")) for r in runs if r.startswith("2d")]
    print("%5dx%-5d m=%2d 3d %s  2d %s  mean diff %+.3f" % (key + (" ".join("%.2f" % v for v in d3),
          " ".join("%.2f" % v for v in d2), sum(d3) / 3 - sum(d2) / 3)))
PY
(cd "$OUT" && tar czf small-files.tgz small-*.json && rm -f small-*.json)
echo "== done after $(trial_elapsed)"
