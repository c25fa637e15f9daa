# Sourced by the trial scripts of tools/trials (from the repo root on the GPU machine, OUT set): the build every call
# starts with, and the GpuTma.* run most of them check first.
: "${OUT:?set OUT to the folder whose files come back}"
trial_start=$(date +%s)
cli=build/gpu/skinnygemm
# The reports' revision: the carried pack's (tools/trials/prebuilt.sh). The GPU machine's copy of the tree reports the
# git state it was copied with (session 33's set nineteen said 29a38df-dirty for a pack of d6706fb; session 41's H100
# step.json 36a5aea-dirty for a pack of 4ffd090). Only a pack unpacked for this call (SKIP_BUILD=1): a warm machine
# keeps an older pack's file in build/gpu.
[ -z "${SKINNYGEMM_REVISION:-}" ] && [ "${SKIP_BUILD:-0}" = 1 ] && [ -f build/gpu/revision ] &&
  export SKINNYGEMM_REVISION="$(cat build/gpu/revision)"
trial_elapsed() { echo "$(( $(date +%s) - trial_start ))s"; }
# scripts/gpu-check's build, its log kept out of $OUT (the tool's file count is limited); its tail on a failure. SKIP_BUILD=1:
# none (a build carried here, tools/trials/prebuilt.sh).
trial_build() {
  local log_dir
  if [ "${SKIP_BUILD:-0}" = 1 ]; then echo "no build: SKIP_BUILD=1 (tools/trials/prebuilt.sh unpack)"; return; fi
  log_dir=$(mktemp -d)
  OUT="$log_dir" scripts/gpu-check build > /dev/null || { echo "build failed"; tail -30 "$log_dir/build.log"; exit 1; }
  echo "built after $(trial_elapsed)"
}
trial_gtest_tma() {  # $1: seconds allowed
  timeout -k 5 "$1" build/gpu/tests/skinnygemm_gpu_tests --gtest_filter='GpuTma.*' > "$OUT/gtest-tma.log" 2>&1 ||
    echo "GpuTma FAILED or cut"
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/gtest-tma.log" | head -10
}
# Configs timed alone with the lab's ablation bits, alternately over rounds (sessions 36-38): $1 the CSV under OUT to
# write (shape,m,config,bits,round,us), $2 the items "NxK:<config without tma_m<tile>_>" (each at the 8-token tile for
# M = 1, 8 and the 16-token tile for M = 16), $3 the SKINNYGEMM_STEP_ABLATE values; ROUNDS rounds (default 2).
trial_configs_by_bits() {
  local csv=$1 items=$2 bit_list=$3 w r item shape cfg bits tile m f b rest
  w=$(mktemp -d)
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for item in $items; do
      shape=${item%%:*} cfg=${item#*:}
      for bits in $bit_list; do
        for tile in 8 16; do
          m=$([ "$tile" = 8 ] && echo 1,8 || echo 16)
          SKINNYGEMM_STEP_ABLATE=$bits timeout -k 5 60 $cli bench --no-baselines --shapes "$shape" --m "$m" \
            --config "tma_m${tile}_$cfg" --csv "$w/$shape-$cfg-$tile-b$bits-$r.csv" > /dev/null 2>&1 ||
            echo "$shape $cfg m$tile bits $bits round $r failed"
        done
      done
    done
    echo "== round $r after $(trial_elapsed)"
  done
  echo "shape,m,config,bits,round,us" > "$OUT/$csv"
  for f in "$w"/*.csv; do
    b=$(basename "$f" .csv); r=${b##*-}; rest=${b%-*}; bits=${rest##*-b}
    awk -F, -v s="$bits" -v r="$r" 'NR > 1 {printf "%sx%s,%s,%s,%s,%s,%s\n", $4, $5, $6, $7, s, r, $9}' "$f"
  done | sort -t, -k1,1 -k3,3 -k2,2n -k4,4n -k5,5n >> "$OUT/$csv"
}
# Session 40: the device tool may lend an H100 (132 SMs, as the H200) where an H200 was asked for. A table matches the
# device by name and SM count, so on an H100 the H200's table would not apply (and since 8b1f35e the H100's own table
# would). trial_s0_dir makes build/s0-data, a data folder whose only table is a copy of the H200's, and on any GPU but the
# H200 rewrites the copy's meta.gpu to the device's name (trial_retarget_tables: trial tables likewise), saying so on
# stderr: s0 and the trials then force the H200's picks there, and the timings are that GPU's. The shipped files are
# never rewritten. A GPU of another SM count (an H100 PCIe: 114) still matches no copy: s0 is the heuristic there.
trial_retarget_tables() {
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
  if [ -z "$gpu" ] || [ "$gpu" = "NVIDIA H200" ] || [ $# -eq 0 ]; then return 0; fi
  echo "NOTE: $gpu, not an H200: copies of the H200's table retargeted to it ($# files)" >&2
  python3 - "$gpu" "$@" <<'PY'
import json, sys
for path in sys.argv[2:]:
    t = json.load(open(path))
    t["meta"]["gpu"] = sys.argv[1]
    json.dump(t, open(path, "w"))
PY
}
# A data folder build/NAME: the tree's models and policies, and as tables only the files named (none: the heuristic alone).
trial_data_dir() {
  local d=build/$1
  shift
  rm -rf "$d" && mkdir -p "$d/tables" && cp -r models policies "$d/" && { [ $# -eq 0 ] || cp "$@" "$d/tables/"; }
  echo "$d"
}
trial_s0_dir() {
  local d
  d=$(trial_data_dir s0-data tables/nvidia-h200.json)
  trial_retarget_tables "$d/tables/nvidia-h200.json"
  echo "$d"
}
