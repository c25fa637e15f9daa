#!/usr/bin/env bash
# Session 32: a build made here, carried to the GPU machine, so that a call spends no device time on the build
# (120-150 s of a 600 s call there). The binaries hold this checkout's absolute paths (RUNPATH, the tests' CLI path,
# CTest's files), so the GPU machine gets a link from the same path to its copy of the tree.
#   here:  ninja -C build/gpu skinnygemm_cli skinnygemm_gpu_tests && tools/trials/prebuilt.sh pack
#   there (carry build/carry):  tools/trials/prebuilt.sh unpack && SKIP_BUILD=1 SKINNYGEMM_REVISION=... scripts/judge
# A second library for an A/B of a kernel change (tools/trials/lib_ab.sh; the pack is A):
#   here:  tools/trials/prebuilt.sh pack-b <B's libskinnygemm.so.0.2>    -> build/carry/b.txz (0.8 MB)
#   there: unpack puts it at build/ab/b/libskinnygemm.so.0.2
# The pack is the library, the CLI, the GPU test binary and CTest's files, stripped and xz-compressed (2.0 MB; gzip gave
# 5.8 MB, and the tree, 60 MB in session 50, shares the call's 64 MiB with the carry).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PACK="$ROOT/build/carry/gpu"
B_PACK="$ROOT/build/carry/b.txz"
# xz both ways: `xz -9` here (the library's cubins compress 20x), Python's tarfile there (the GPU machine's tar may
# lack xz; python3 runs wherever the lab does).
xz_pack() { tar -cf - -C "$1" "$2" | xz -9 -T2 > "$3"; }      # dir, entry, archive
xz_unpack() { python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" "$2"; }  # archive, dir
case "${1:-}" in
  pack)
    built="$ROOT/build/gpu"
    rm -rf "$PACK" "$PACK.tgz" "$PACK.txz" && mkdir -p "$PACK/tests" "$PACK/lab"
    # The library once, under its soname (a link travels as a link: the call would carry the 16 MB file three times).
    soname="$(objdump -p "$built/libskinnygemm.so" | awk '/SONAME/ {print $2}')"  # libskinnygemm.so.<major>.<minor>
    cp -a "$built"/skinnygemm "$built"/CTestTestfile.cmake "$PACK/" && cp -L "$built/$soname" "$PACK/"
    [ -f "$built"/lab/CTestTestfile.cmake ] && cp -a "$built"/lab/CTestTestfile.cmake "$PACK/lab/"
    cp -a "$built"/tests/CTestTestfile.cmake "$built"/tests/skinnygemm_gpu_tests "$built"/tests/*_include.cmake \
      "$built"/tests/skinnygemm_gpu_tests*_tests.cmake "$PACK/tests/"
    # Symbols the binaries do not need at run time (session 33: 23.1 -> 21.3 MB, the tree having grown to 45 MB).
    strip --strip-unneeded "$PACK/$soname" "$PACK/skinnygemm" "$PACK/tests/skinnygemm_gpu_tests"
    echo "$ROOT" > "$PACK/built-at"
    rev="$(git -C "$ROOT" rev-parse --short HEAD)"
    if [ -n "$(git -C "$ROOT" status --porcelain -- src include lab cli tests CMakeLists.txt cmake)" ]; then
      echo "prebuilt: the sources differ from HEAD; the pack is of the working tree" >&2
      rev="$rev-dirty"
    fi
    echo "$rev" > "$PACK/revision"
    # One xz file (session 50: 21 MB -> 2.0 MB, where gzip gave 5.8).
    xz_pack "$(dirname "$PACK")" gpu "$PACK.txz" && rm -rf "$PACK"
    du -sh "$PACK.txz"
    ;;
  pack-b)
    lib="${2:?usage: $0 pack-b <libskinnygemm.so.0.2 of B>}"
    tmp="$(mktemp -d)" && mkdir -p "$tmp/ab/b" && cp -L "$lib" "$tmp/ab/b/libskinnygemm.so.0.2"
    strip --strip-unneeded "$tmp/ab/b/libskinnygemm.so.0.2"
    mkdir -p "$ROOT/build/carry" && xz_pack "$tmp" ab "$B_PACK" && rm -rf "$tmp"
    du -sh "$B_PACK"
    ;;
  unpack)
    [ -f "$B_PACK" ] && xz_unpack "$B_PACK" "$ROOT/build"
    [ -f "$PACK.txz" ] && xz_unpack "$PACK.txz" "$(dirname "$PACK")"
    [ -f "$PACK/built-at" ] || { echo "prebuilt: no $PACK (carry build/carry)" >&2; exit 1; }
    built_at="$(cat "$PACK/built-at")"
    if [ "$(cd "$built_at" 2>/dev/null && pwd -P)" != "$(pwd -P)" ]; then
      [ -e "$built_at" ] && { echo "prebuilt: $built_at exists and is not this tree" >&2; exit 1; }
      mkdir -p "$(dirname "$built_at")" && ln -s "$ROOT" "$built_at"
    fi
    mkdir -p "$ROOT/build/gpu" && cp -a "$PACK/." "$ROOT/build/gpu/"
    echo "prebuilt: $(cat "$PACK/revision") built at $built_at, unpacked into $ROOT/build/gpu"
    # The CLI names its revision in every JSON's meta from $SKINNYGEMM_REVISION, else from git, and the device copy's
    # git names the session's base commit with "-dirty" (session 47: a step.json said 195b8d2-dirty for the pack of
    # f743a5d).
    [ -n "${SKINNYGEMM_REVISION:-}" ] || echo "prebuilt: set SKINNYGEMM_REVISION=$(cat "$PACK/revision") for the" \
      "CLI's JSON (trial_lib.sh sets it, scripts/judge requires it)"
    ;;
  *) echo "usage: $0 pack|pack-b <lib>|unpack" >&2; exit 2 ;;
esac
