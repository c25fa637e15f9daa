#!/usr/bin/env bash
# Session 36 (written without a GPU, for the next call). (1) tools/probes/cluster_placement.cu: the GPC map and where
# the seeds' cluster grids land (CTAs per SM, per GPC, late CTAs): does the clusters of eight's ring run 0.7 us behind
# stream-K's on 2112 x 7168 (session 34, part 1) because some SMs take a third CTA? (2) The seeds' shapes on cluster
# grids of other sizes, whole and without the cluster reduction (SKINNYGEMM_STEP_ABLATE=4: only rank 0 stores y, wrong
# by design), ROUNDS rounds alternately, so that part 1's counts can be set against the times. (3) Session 37: the
# peer kernel's decomposition (one CTA per 16-row tile over the whole K, no reduction: 132 CTAs on 2112 x 7168) on a
# 6-stage ring of 8-box stages (144 KB at the 8-token tile, 192 KB at 16: one CTA per SM, as the peer's 192 KB ring;
# session 25 measured 4 stages at 9.38 us and 3 at 9.50 on 2112 x 7168 M = 1, the peer 8.31): does ring depth close
# the gap to the peer? (bits 4 does not apply to it: both rows are whole.)
# From the repo root on the GPU machine, OUT set, the build carried (SKIP_BUILD=1, tools/trials/prebuilt.sh unpack).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. -Isrc -Iinclude tools/probes/cluster_placement.cu -lcuda \
  -o build/probe-cluster_placement || { echo "probe build failed"; exit 1; }
timeout -k 5 60 build/probe-cluster_placement > "$OUT/placement.csv" 2>&1 || echo "placement probe failed or cut"
cat "$OUT/placement.csv"
echo "== placement after $(trial_elapsed)"
trial_configs_by_bits cluster-grids.csv "${ITEMS:-2112x7168:r64_b2_s3_x8 2112x7168:r64_b2_s4_x4 2112x7168:r32_b2_s8_x2 \
  2112x7168:r32_b2_s6_x4 1536x7168:r64_b2_s4_x8 1536x7168:r64_b2_s4_x4 3648x7168:r64_b2_s4_x4 3648x7168:r64_b2_s4_x2 \
  2112x7168:r16_b8_s6_x1 1536x7168:r16_b8_s6_x1}" "0 4"
cat "$OUT/cluster-grids.csv"
echo "== done after $(trial_elapsed)"
