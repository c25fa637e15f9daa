#!/usr/bin/env bash
# Session 33: stream-K on tiles narrow enough that no CTA's range lies inside one row tile. With 64-row tiles on
# 7168 x 14336 a tile (112 stages) spans three CTAs (47.5 stages each on 264), so the middle CTA's share is ready only at
# the end and the tile's owner waits an L2 round trip for it after its own last multiply. With 16-row tiles (448 tiles)
# on two CTAs per SM, or 32-row tiles on one, every tile spans at most two CTAs and the other one's share was published
# at the start of its range. Forced configs (4- and 8-box stages are named lab candidates), GpuTma.* of the build first.
# From the repo root on the GPU machine, OUT set (SKIP_BUILD=1 with a carried build):
#   SKIP_BUILD=1 tools/trials/narrow_streamk.sh
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
[ "${GTEST:-1}" = 1 ] && trial_gtest_tma "${GTEST_SECONDS:-150}"
w=$(mktemp -d)
for shape_ms in ${NARROW_SHAPES:-7168x14336:1,2,8 20480x7168:1,2 6288x7168:1,2 2112x7168:1,2}; do
  shape=${shape_ms%:*} ms=${shape_ms#*:}
  for cfg in ${NARROW_CONFIGS:-r64_b2_s4_c2_u1 r16_b8_s4_c2_u1 r16_b8_s3_c2_u1 r16_b4_s6_c2_u1 r32_b4_s4_c2_u1 r32_b4_s5_c1_u1 r32_b4_s6_c1_u1 r32_b8_s3_c1_u1}; do
    base=--no-baselines
    [ "$cfg" = r64_b2_s4_c2_u1 ] && base=
    timeout -k 5 60 $cli bench $base --shapes "$shape" --m "$ms" --config "tma_m8_$cfg" --csv "$w/$shape-$cfg.csv" \
      > "$w/$shape-$cfg.txt" 2>&1 || echo "$shape $cfg: bench failed"
    echo "$shape $cfg: $(awk -F, 'NR > 1 {printf "m%s %s%s  ", $6, $9, ($14 != "" ? " (lt " $14 " torch " $19 " chain " $20 ")" : "")}' "$w/$shape-$cfg.csv" 2>/dev/null)"
  done
done
tar -czf "$OUT/narrow.tgz" -C "$w" . && rm -rf "$w"
echo "done after $(trial_elapsed)"
