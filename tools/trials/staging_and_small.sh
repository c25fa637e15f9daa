#!/usr/bin/env bash
# Session 33, call 2. (1) Bit 256 (y staged on every layout, as before TmaParams::y_rows16) against the shipped kernel on
# the misaligned held-out shapes whose heuristic pick is the 32-row one-part lead split, beside the same ring as x1
# (forced), alternately, two rounds. (2) The small-N shapes where the table picks the register family (144 / 224 x 7168
# at M = 5-32): the table's pick with baselines, then every listed tma and bulk config of the same token tile, so that
# the register family can be retired only where another family is measured at least as fast.
# From the repo root on the GPU machine, OUT set (SKIP_BUILD=1 with a carried build); OUT gets one tarball per part.
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
w=$(mktemp -d)
bench() {  # $1 ablation bits, $2 file stem, rest: bench arguments
  local bits=$1 stem=$2; shift 2
  SKINNYGEMM_STEP_ABLATE=$bits timeout -k 5 "${BENCH_SECONDS:-120}" $cli bench --csv "$w/$stem.csv" "$@" > "$w/$stem.txt" 2>&1 ||
    echo "$stem: bench failed or cut"
}
if [ "${PART_STAGING:-1}" = 1 ]; then
  for r in 1 2; do
    for bits in 0 256; do bench $bits "sel-$bits-$r" --no-baselines --shapes 5003x1024,9001x1024,51866x1280 --m 1,2,8,16; done
    for shape_ring in 5003x1024:s6 9001x1024:s4 51866x1280:s4; do
      shape=${shape_ring%:*} ring=${shape_ring#*:}
      bench 0 "x1-$shape-m8-$r" --no-baselines --shapes "$shape" --m 1,2,8 --config "tma_m8_r32_b2_${ring}_x1"
      bench 0 "x1-$shape-m16-$r" --no-baselines --shapes "$shape" --m 16 --config "tma_m16_r32_b2_${ring}_x1"
    done
  done
  for f in "$w"/sel-*.csv "$w"/x1-*.csv; do echo "$(basename "$f" .csv): $(awk -F, 'NR > 1 {printf "%s/%s %s %s  ", $4, $6, $7, $9}' "$f")"; done
  tar -czf "$OUT/staging.tgz" -C "$w" . && rm -rf "$w"/* && echo "== staging after $(trial_elapsed)"
fi
if [ "${PART_SMALL:-1}" = 1 ]; then
  for shape in ${SMALL_SHAPES:-144x7168 224x7168}; do
    bench 0 "pick-$shape" --shapes "$shape" --m 5,8,12,16,24,32
    for tm in 5:m8 8:m8 12:m16 16:m16 24:m32 32:m32; do
      m=${tm%:*} tile=${tm#*:}
      BENCH_SECONDS=90 bench 0 "tma-$shape-$m" --no-baselines --shapes "$shape" --m "$m" --sweep "tma_${tile}_*"
      bench 0 "bulk-$shape-$m" --no-baselines --shapes "$shape" --m "$m" --sweep "bulk_*"
    done
    echo "== $shape after $(trial_elapsed): picks $(awk -F, 'NR > 1 {printf "%s %s %s  ", $6, $7, $9}' "$w/pick-$shape.csv")"
    for f in "$w"/tma-"$shape"-*.csv "$w"/bulk-"$shape"-*.csv; do
      echo "  $(basename "$f" .csv): $(sort -t, -k9 -g <(tail -n +2 "$f") | head -2 | awk -F, '{printf "%s %s  ", $7, $9}')"
    done
  done
  tar -czf "$OUT/small.tgz" -C "$w" . && rm -rf "$w"
fi
echo "done after $(trial_elapsed)"
