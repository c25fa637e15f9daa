#!/usr/bin/env bash
# The installed runtime is only the runtime: installs the build into a fresh prefix and fails when the shared
# library exports a symbol of the lab (benchmarks, tuner, step, MLA layer) or of NCCL, or when a lab library or
# header was installed.
#   exports.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
lib=$(find "$work/prefix" -name 'libskinnygemm.so' | head -1)
[[ -n $lib ]] || { echo "no libskinnygemm.so under $work/prefix"; exit 1; }
if find "$work/prefix" -name '*skinnygemm_lab*' | grep -q .; then
  echo "the lab library was installed:"; find "$work/prefix" -name '*skinnygemm_lab*'; exit 1
fi
if find "$work/prefix/include" -path '*lab*' | grep -q .; then
  echo "lab headers were installed"; exit 1
fi
nm -D --defined-only -C "$lib" > "$work/exports.txt"
count=$(wc -l < "$work/exports.txt")
(( count > 0 )) || { echo "nm -D found no exported symbol in $lib"; exit 1; }
# Our own namespace: no lab word in any exported name. NCCL under any name.
lab=$(grep 'skinnygemm::' "$work/exports.txt" | grep -iE 'bench|step|mla|tune|nccl' || true)
nccl=$(grep -i 'nccl' "$work/exports.txt" || true)
if [[ -n $lab || -n $nccl ]]; then
  echo "$lib exports lab or NCCL symbols:"
  printf '%s\n' "$lab" "$nccl" | sed '/^$/d' | head -40
  exit 1
fi
echo "$lib: $count exported symbols, none of the lab (bench/step/mla/tune) or NCCL"
