#!/usr/bin/env bash
# Builds skinnygemm_torch into a build folder and runs its pytest suite (docs/torch.md).
#
#   python/run_tests.sh [pytest args...]
#
# PYTHON: the interpreter (default: the first of python3 and /usr/bin/python3 that imports torch).
# SKINNYGEMM_TORCH_TEST_BUILD: the build folder (default python/build/torch-<python tag>); the library is built from
#   this source tree into it unless SKINNYGEMM_PREFIX names an installed prefix. SKINNYGEMM_CUDA: AUTO/ON/OFF (default
#   AUTO with a CUDA torch, OFF with a CPU-only one).
# Exits 0 with "SKIPPED: torch not importable" where no interpreter imports torch.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ -z "${PYTHON:-}" ]]; then
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import torch" >/dev/null 2>&1; then
      PYTHON="$(command -v "$candidate")"
      break
    fi
  done
fi
if [[ -z "${PYTHON:-}" ]] || ! "$PYTHON" -c "import torch" >/dev/null 2>&1; then
  echo "skinnygemm_torch: SKIPPED: torch not importable (tried ${PYTHON:-python3 and /usr/bin/python3})"
  exit 0
fi
if ! "$PYTHON" -c "import pytest" >/dev/null 2>&1; then
  echo "skinnygemm_torch: FAILED: $PYTHON imports torch but not pytest (apt-get install python3-pytest)" >&2
  exit 1
fi

tag="$("$PYTHON" -c 'import sys, torch; print(f"py{sys.version_info[0]}{sys.version_info[1]}-torch{torch.__version__.partition(chr(43))[0]}")')"
build="${SKINNYGEMM_TORCH_TEST_BUILD:-$here/build/torch-$tag}"
mkdir -p "$build"
echo "skinnygemm_torch: $PYTHON ($tag), build folder $build"

export SKINNYGEMM_TORCH_BUILD="$build/skinnygemm"
(cd "$here" && "$PYTHON" setup.py -q build --build-base "$build/setup" --build-lib "$build/pylib" \
   --build-temp "$build/tmp")

# torch links libstdc++ dynamically; a library or extension that carries its own static copy crashed torch 2.11
# at the first op call (the GPU machine's CXX did that, 2026-11-29): say so now instead of as a segfault.
if command -v readelf >/dev/null 2>&1; then
  for so in "${SKINNYGEMM_PREFIX:-$build/skinnygemm/prefix}"/lib*/libskinnygemm.so "$build"/pylib/skinnygemm_torch/_C*.so; do
    [ -e "$so" ] || continue
    if ! readelf -d "$so" | grep -q 'NEEDED.*libstdc++'; then
      echo "skinnygemm_torch: $so NEEDED: $(readelf -d "$so" | grep NEEDED | sed 's/.*\[//; s/\]//' | tr '\n' ' ')"
      echo "skinnygemm_torch: c++ = $(readlink -f "$(command -v c++)"), CXX=${CXX:-} LDFLAGS=${LDFLAGS:-}" \
           "LIBRARY_PATH=${LIBRARY_PATH:-} CXXFLAGS=${CXXFLAGS:-}"
      link_cmd="$(ninja -C "$build/skinnygemm/cmake" -t commands skinnygemm 2>/dev/null | grep -- '-shared' | head -1)"
      [ -n "$link_cmd" ] && echo "skinnygemm_torch: link: ${link_cmd:0:300} ... $(tr ' ' '\n' <<< "$link_cmd" | grep -v '\.o$' | tail -22 | tr '\n' ' ')"
      echo "skinnygemm_torch: FAILED: $so does not load libstdc++.so dynamically (its compiler linked it statically);" \
           "build with the compiler torch uses (SKINNYGEMM_TORCH_CXX, default /usr/bin/c++)" >&2
      exit 1
    fi
  done
fi

cd "$build"  # not python/: the source package there has no _C and would shadow the built one
PYTHONPATH="$build/pylib${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m pytest -p no:cacheprovider \
  "$here/tests" -q -rs "$@"
