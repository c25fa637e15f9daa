#!/usr/bin/env bash
# Session 39: the row stream (tma_*_rs, src/kernels/tma/row_stream.cuh) in the library: its bitwise GPU test, then alone
# on every Kimi-K3 TP8 shape (selection's picks and each row-stream config, M = 1 and 8 at the 8-token tile, 16 at the
# 16-token tile, no baselines), then the fused step through trial tables that force the row stream where it won alone by
# 3% or more (tools/trials/row_stream_table.py: RS every such shape, RSS the seeds' shapes only), "s0 RS RSS s0".
# Session 40: SEED_TRIALS (default tools/trials/row_stream_seeds.json: RSS, R32 = 32-row tiles on 3648 / 2112 x 7168 and
# 16-row on 1536 x 7168 through M = 16, RS3 = 3-stage rings) join the sweep's tables; VARIANTS (default skinny_fused,skinny);
# TIMELINES (default "s0 RSS R32"): the fused step's TMA timeline through those tables at M = 1 and 8 (step_timelines.sh).
# From the repo root on the GPU machine, OUT set, the build carried (SKIP_BUILD=1, tools/trials/prebuilt.sh unpack).
set -uo pipefail
source tools/trials/trial_lib.sh
trial_build
s0=$(trial_s0_dir)
timeout -k 5 120 build/gpu/tests/skinnygemm_gpu_tests --gtest_filter='GpuTma.*:-GpuTma.RandomInputs*:GpuTma.StreamK*' \
  > "$OUT/gtest-rs.log" 2>&1 || { echo "GpuTma FAILED"; grep -E "FAILED|Failure" "$OUT/gtest-rs.log" | head; exit 1; }
grep -E "^\[  (PASSED|FAILED) " "$OUT/gtest-rs.log"
w=$OUT/rs && mkdir -p "$w"
shapes=${SHAPES:-model:kimi_k3:tp8}
SKINNYGEMM_DATA_DIR=$s0 timeout -k 5 120 $cli bench --no-baselines --shapes "$shapes" --m 1,8,16 --json "$w/picks.json" > /dev/null 2>&1 ||
  echo "picks bench failed"
for cfg in ${RS8:-r8_b16_s3 r8_b16_s4 r16_b8_s3 r16_b8_s4 r16_b8_s5 r32_b4_s4 r32_b4_s6}; do
  timeout -k 5 120 $cli bench --no-baselines --shapes "$shapes" --m 1,8 --config "tma_m8_${cfg}_rs" \
    --json "$w/rs-m8-$cfg.json" > "$w/rs-m8-$cfg.txt" 2>&1 || echo "tma_m8_${cfg}_rs failed"
done
for cfg in ${RS16:-r8_b16_s3 r16_b8_s3 r16_b8_s4 r32_b4_s4 r32_b4_s5}; do
  timeout -k 5 120 $cli bench --no-baselines --shapes "$shapes" --m 16 --config "tma_m16_${cfg}_rs" \
    --json "$w/rs-m16-$cfg.json" > "$w/rs-m16-$cfg.txt" 2>&1 || echo "tma_m16_${cfg}_rs failed"
done
echo "== alone after $(trial_elapsed)"
python3 tools/trials/row_stream_table.py "$w" "$OUT/rs-trials.json" "${MARGIN:-0.03}" | tee "$OUT/rs-alone.txt"
tar -czf "$OUT/rs.tgz" -C "$OUT" rs && rm -rf "$w"
python3 - "$OUT/rs-trials.json" "${SEED_TRIALS:-tools/trials/row_stream_seeds.json}" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t.update({k: v for k, v in json.load(open(sys.argv[2])).items() if k != "RSS" or not t.get("RSS")})
json.dump(t, open(sys.argv[1], "w"))
PY
EXTRA_TRIALS=$OUT/rs-trials.json VARIANTS=${VARIANTS:-skinny_fused,skinny} tools/trials/step_trials.sh "${TABLES:-s0 RS RSS R32 RS3 s0 RS RSS R32 RS3}" "${STEP_M:-1,8,16}"
echo "== steps after $(trial_elapsed)"
VARIANTS=skinny_fused tools/trials/step_timelines.sh "${TIMELINES:-s0 RSS R32}"
echo "== done after $(trial_elapsed)"
