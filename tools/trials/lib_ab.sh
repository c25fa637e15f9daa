#!/usr/bin/env bash
# Session 31: two builds of the library in one call, without a second build there. The call builds the tree (B, the
# change); A is a libskinnygemm.so.0.2 built here from the revision before it and carried (carry: build/ab/a), selected
# by LD_LIBRARY_PATH (the CLI's RUNPATH gives way to it). Each item of ITEMS ("a" or "b") runs the fused step at MS,
# then, where SHAPES is set, `bench` of those shapes at BENCH_M without baselines. GpuTma.* of B first.
# Both read this tree's data (SKINNYGEMM_DATA_DIR: tables, models), so A/B a library change, not a table change; A's
# library must export what B's CLI and lab call (a change to the library's internal interface breaks the pairing).
# Here, before the call (A's revision checked out in a worktree at $A_TREE, configured in $A_BUILD):
#   ninja -C $A_BUILD skinnygemm && mkdir -p build/ab/a && cp -L $A_BUILD/libskinnygemm.so.0.2 build/ab/a/
# There (carry build/ab/a):
#   ITEMS="b a b a" MS=1,2,8,16 SHAPES=7168x1536,6288x7168 BENCH_M=2,8,16 tools/trials/lib_ab.sh
set -uo pipefail
source tools/trials/trial_lib.sh
[ -f build/ab/a/libskinnygemm.so.0.2 ] || { echo "no build/ab/a/libskinnygemm.so.0.2 (carry it)"; exit 1; }
trial_build
trial_gtest_tma "${GTEST_SECONDS:-150}"
mkdir -p build/ab/b "$OUT/ab"
cp -L build/gpu/libskinnygemm.so.0.2 build/ab/b/
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
