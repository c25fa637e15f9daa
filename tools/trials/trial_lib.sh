# Sourced by the trial scripts of tools/trials (from the repo root on the GPU machine, OUT set): the build every call
# starts with, and the GpuTma.* run most of them check first.
: "${OUT:?set OUT to the folder whose files come back}"
trial_start=$(date +%s)
cli=build/gpu/skinnygemm
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
