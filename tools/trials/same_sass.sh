#!/usr/bin/env bash
# Whether a change to the TMA family's device code changes what the GPU runs: compiles the two dtype files
# (src/kernels/tma/tma_{bf16,fp16}.cu, every instance) of a git revision and of the working tree to sm_90a cubins and
# compares each kernel's machine code (its .text section, byte for byte) and ptxas's registers, stack and spills. No GPU.
#   tools/trials/same_sass.sh [REV]     (REV: default HEAD; about 3 minutes on 2 cores)
# Exit status 0: every kernel's code is byte-identical (a change that needs no measurement); 1: some differ (the kernel
# changed: measure it, docs/kernels.md); 2: a build failed.
# Why (session 43): moving the split reductions' drains of tma_gemm.cuh into __forceinline__ functions gave PTX that
# differs only in its virtual registers' numbering, and ptxas then allocated differently: registers +-2 on most
# instances, 136 -> 150 on the 32-row 32-token one, an 8-byte stack on the 128-row 32-token ones, 0.3-0.6% of the code
# moved. Equal source semantics are not equal machine code.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
REV="${1:-HEAD}"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
WORK="$(mktemp -d)"
trap 'git -C "$ROOT" worktree remove --force "$WORK/base" > /dev/null 2>&1; rm -rf "$WORK"' EXIT
git -C "$ROOT" worktree add --detach "$WORK/base" "$REV" > /dev/null 2>&1 || { echo "same_sass: no revision $REV" >&2; exit 2; }

cubins() {  # tree out: both dtypes in parallel, ptxas -v to out/ptxas_<dtype>.log
  local tree="$1" out="$2" pids=() rc=0
  mkdir -p "$out"
  for t in bf16 fp16; do
    "$NVCC" -DSKINNYGEMM_WITH_CUDA=1 -I"$tree/include" -I"$tree/src" -O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr \
      -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -cubin "$tree/src/kernels/tma/tma_$t.cu" \
      -o "$out/tma_$t.cubin" > "$out/ptxas_$t.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=2; done
  return $rc
}
cubins "$WORK/base" "$WORK/a" || { echo "same_sass: $REV does not build" >&2; cat "$WORK"/a/ptxas_*.log | tail -20; exit 2; }
cubins "$ROOT" "$WORK/b" || { echo "same_sass: the working tree does not build" >&2; cat "$WORK"/b/ptxas_*.log | tail -20; exit 2; }
python3 - "$WORK/a" "$WORK/b" "$REV" <<'PY'
import re, struct, sys
def sections(path):  # ELF64 section name -> bytes
    b = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3A)
    hdr = [struct.unpack_from('<IIQQQQ', b, shoff + i * shentsize) for i in range(shnum)]
    stro = hdr[shstrndx][4]
    return {b[stro + h[0]:b.index(b'\0', stro + h[0])].decode(): b[h[4]:h[4] + h[5]] for h in hdr if h[1] != 8}
def usage(path):  # kernel -> "N registers, S stack, spills"
    out, name = {}, None
    for line in open(path):
        m = re.search(r"Function properties for (\S+)", line)
        if m: name = m.group(1)
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and name: out.setdefault(name, {})['frame'] = m.groups()
        m = re.search(r"Used (\d+) registers", line)
        if m and name: out.setdefault(name, {})['regs'] = m.group(1)
    return out
a_dir, b_dir, rev = sys.argv[1:]
changed = 0
for t in ('bf16', 'fp16'):
    a, b = sections('%s/tma_%s.cubin' % (a_dir, t)), sections('%s/tma_%s.cubin' % (b_dir, t))
    ua, ub = usage('%s/ptxas_%s.log' % (a_dir, t)), usage('%s/ptxas_%s.log' % (b_dir, t))
    texts = sorted(set(n for n in a if n.startswith('.text.')) | set(n for n in b if n.startswith('.text.')))
    diff = [n for n in texts if a.get(n) != b.get(n)]
    changed += len(diff)
    print('%s: %d kernels, %d with different code' % (t, len(texts), len(diff)))
    for n in diff:
        k = n[len('.text.'):]
        x, y = ua.get(k, {}), ub.get(k, {})
        print('  %-70s %6s -> %6s bytes; registers %s -> %s; stack/spill stores/loads %s -> %s'
              % (k[:70], len(a.get(n, b'')), len(b.get(n, b'')), x.get('regs'), y.get('regs'),
                 '/'.join(x.get('frame', ())), '/'.join(y.get('frame', ()))))
print('same machine code as %s' % rev if changed == 0 else '%d kernels changed against %s: measure before landing' % (changed, rev))
sys.exit(0 if changed == 0 else 1)
PY
