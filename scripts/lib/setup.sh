# shellcheck shell=bash
# Shared setup for scripts/test and scripts/kimi-bench (sourced, not run): install the Debian packages that
# are missing, configure with the dev preset (CUDA wherever nvcc exists) and build.
#
# Environment knobs:
#   SKINNYGEMM_BUILD_DIR  build folder (default: build/dev, the dev preset's folder)
#   SKINNYGEMM_CUDA       AUTO | ON | OFF, passed to CMake (default: the preset's AUTO)
#   SKINNYGEMM_JOBS       parallel build jobs (default: nproc)

SKINNYGEMM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SKINNYGEMM_BUILD_DIR="${SKINNYGEMM_BUILD_DIR:-$SKINNYGEMM_ROOT/build/dev}"

sg_log() { printf '== %s\n' "$*" >&2; }

# Whether what a package provides is already usable (however it got there: apt, pip, conda, a module).
sg_have() {
  case "$1" in
    cmake) command -v cmake >/dev/null ;;
    ninja-build) command -v ninja >/dev/null ;;
    g++) command -v g++ >/dev/null ;;
    nlohmann-json3-dev) sg_header nlohmann/json.hpp ;;
    libcli11-dev) sg_header CLI/CLI.hpp ;;
    libgtest-dev) sg_header gtest/gtest.h ;;
    # scripts/heuristic_cv.py (ctest Scripts.HeuristicCv): Debian's own interpreter, whatever python3 is first on PATH
    python3-numpy) /usr/bin/python3 -c "import numpy" >/dev/null 2>&1 ;;
    python3-scipy) /usr/bin/python3 -c "import scipy.optimize" >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}
sg_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/local/include/$1" ]; }

sg_install_packages() {
  local pkg missing=()
  for pkg in cmake ninja-build g++ nlohmann-json3-dev libcli11-dev libgtest-dev python3-numpy python3-scipy; do
    sg_have "$pkg" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  sg_log "missing: ${missing[*]}; installing with apt-get"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then sudo=(sudo); else sg_log "not root and no sudo: cannot install"; fi
  fi
  # A failed install is not fatal here: the packages may live where the probes above do not look, and
  # CMake's find_package names whatever is really missing.
  if ! command -v apt-get >/dev/null ||
     ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
     ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    sg_log "WARNING: could not install ${missing[*]}; continuing, CMake will report what is really missing"
  fi
}

# CMake arguments for CUDA: nvcc on PATH is found by the AUTO preset itself; the toolkit's usual place
# (/usr/local/cuda/bin) often is not on PATH, so it is named explicitly.
sg_cuda_args() {
  SG_CMAKE_ARGS=()
  [ -n "${SKINNYGEMM_CUDA:-}" ] && SG_CMAKE_ARGS+=("-DSKINNYGEMM_CUDA=$SKINNYGEMM_CUDA")
  if [ "${SKINNYGEMM_CUDA:-AUTO}" != OFF ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    SG_CMAKE_ARGS+=("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc")
  fi
  return 0
}

sg_configure_and_build() {
  sg_cuda_args
  sg_log "configure: cmake --preset dev -B $SKINNYGEMM_BUILD_DIR ${SG_CMAKE_ARGS[*]}"
  (cd "$SKINNYGEMM_ROOT" && cmake --preset dev -B "$SKINNYGEMM_BUILD_DIR" "${SG_CMAKE_ARGS[@]}") || return 1
  local jobs="${SKINNYGEMM_JOBS:-$(nproc)}"
  sg_log "build: cmake --build $SKINNYGEMM_BUILD_DIR -j$jobs"
  cmake --build "$SKINNYGEMM_BUILD_DIR" -j"$jobs"
}

sg_setup() {
  sg_install_packages && sg_configure_and_build
}
