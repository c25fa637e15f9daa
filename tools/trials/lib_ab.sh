#!/usr/bin/env bash
# Session 31: two builds of the library in one call, selected by LD_LIBRARY_PATH (the CLI's and the GPU tests' RUNPATH
# gives way to it). Each item of ITEMS ("a" or "b") runs the fused step at MS, then, where SHAPES is set, `bench` of
# those shapes at BENCH_M without baselines; GpuTma.* (or GTEST_FILTER) of B first, GTEST_SECONDS at most.
# Both read this tree's data (SKINNYGEMM_DATA_DIR: tables, models), so A/B a library change, not a table change; A's
# library must export what B's CLI and lab call (a change to the library's internal interface breaks the pairing).
# Two ways to bring the libraries:
# - Both built here (session 50; no build there): A is the pack (tools/trials/prebuilt.sh pack, on A's checkout), B a
#   library built from B's checkout, `tools/trials/prebuilt.sh pack-b <B's build>/libskinnygemm.so.0.2`; there, with
#   build/carry carried:  SKIP_BUILD=1 ITEMS="a b a b" MS=1,8,16 tools/trials/lib_ab.sh
# - B built there (120-150 s of the call): the tree is B; A's library built here from the revision before it,
#   `mkdir -p build/ab/a && cp -L $A_BUILD/libskinnygemm.so.0.2 build/ab/a/`, carried as build/ab/a.
set -uo pipefail
[ "${SKIP_BUILD:-0}" = 1 ] && { tools/trials/prebuilt.sh unpack || exit 1; }  # before trial_lib.sh reads the revision
source tools/trials/trial_lib.sh
if [ "${SKIP_BUILD:-0}" = 1 ]; then
  [ -f build/ab/b/libskinnygemm.so.0.2 ] || { echo "no build/ab/b (prebuilt.sh pack-b here, carry build/carry)"; exit 1; }
  mkdir -p build/ab/a && cp -L build/gpu/libskinnygemm.so.0.2 build/ab/a/
else
  [ -f build/ab/a/libskinnygemm.so.0.2 ] || { echo "no build/ab/a/libskinnygemm.so.0.2 (carry it)"; exit 1; }
  trial_build
  mkdir -p build/ab/b && cp -L build/gpu/libskinnygemm.so.0.2 build/ab/b/
fi
mkdir -p "$OUT/ab"
LD_LIBRARY_PATH="$PWD/build/ab/b" ldd "$cli" | grep -q "$PWD/build/ab/b/" || { echo "B's library does not load in place of A's"; exit 1; }
LD_LIBRARY_PATH="$PWD/build/ab/b" timeout -k 5 "${GTEST_SECONDS:-150}" build/gpu/tests/skinnygemm_gpu_tests \
  --gtest_filter="${GTEST_FILTER:-GpuTma.*}" --gtest_brief=1 > "$OUT/gtest-b.log" 2>&1 || echo "B's GPU tests FAILED or cut"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/gtest-b.log" | head -10
n=0
for item in ${ITEMS:-b a b a}; do
  n=$((n + 1))
  lib="$PWD/build/ab/$item"
  SKINNYGEMM_DATA_DIR=$PWD LD_LIBRARY_PATH="$lib" timeout -k 5 90 $cli step --model kimi_k3 --tp 8 --m "${MS:-1,8,16}" --pdl on --no-sinks \
    --variants skinny_fused > "$OUT/ab/$n-$item-step.txt" 2>&1 || echo "$item: step failed"
  echo "$item step: $(grep -E "^ *skinny_fused " "$OUT/ab/$n-$item-step.txt" | awk '{printf "%s:%s ", $2, $5}')"
  if [ -n "${SHAPES:-}" ]; then
    SKINNYGEMM_DATA_DIR=$PWD LD_LIBRARY_PATH="$lib" timeout -k 5 90 $cli bench --shapes "$SHAPES" --m "${BENCH_M:-2,8,16}" --no-baselines \
      --csv "$OUT/ab/$n-$item-bench.csv" > "$OUT/ab/$n-$item-bench.txt" 2>&1 || echo "$item: bench failed"
  fi
done
tar -czf "$OUT/ab.tgz" -C "$OUT" ab && rm -rf "$OUT/ab"
echo "done after $(trial_elapsed)"
