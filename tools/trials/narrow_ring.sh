#!/usr/bin/env bash
# Session 38: the peer's decomposition (one CTA per 16-row tile over the whole K, no reduction) on larger copies and
# deeper rings, each config whole and without its x copies (SKINNYGEMM_STEP_ABLATE=1: wrong by design, timing only),
# ROUNDS rounds alternately, beside the shipped picks and one `bench` with baselines (chain_us) on the same shapes.
# Question: is the 0.7 us between r16_b8_s6_x1 (9.00 us on 2112 x 7168 at M = 1, this session's call 1) and the peer
# (8.31) the per-stage copies (session 25: ~24 ns a copy) or the ring's bytes in flight?
# From the repo root on the GPU machine, OUT set, the build carried (SKIP_BUILD=1, tools/trials/prebuilt.sh unpack).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
shapes=${SHAPES:-2112x7168,1536x7168}
timeout -k 5 120 $cli bench --shapes "$shapes" --m 1,8,16 --csv "$OUT/narrow-bench.csv" > /dev/null 2>&1 ||
  echo "bench with baselines failed or cut"
echo "== baselines after $(trial_elapsed)"
# Each config on both shapes, one bench process per shape (call 2 of session 38 ran both shapes in one process per
# config; the CSV is the same).
items=""
for cfg in ${ITEMS:-r16_b8_s6_x1 r16_b16_s3_x1 r16_b16_s4_x1 r16_b8_s4_x1 r64_b2_s3_x8}; do
  for shape in ${shapes//,/ }; do items="$items $shape:$cfg"; done
done
trial_configs_by_bits narrow-ring.csv "$items" "${BITS:-0 1}"
echo "== done after $(trial_elapsed)"
