#!/usr/bin/env bash
# Sessions 46-47: one device call that is useful on whichever GPU the pool lends. A call that names `nvidia-h200` may
# be given an H100, and only `needs_h200` (reserved for work that cannot fit) forbids that. So this script checks the
# GPU and runs a held-out set on either kind:
# - on an H200, set H200_SET (one never yet timed on an H200; default thirtyfifth, written blind at fb21188);
# - on any other GPU, set OTHER_SET (default thirtyfifth; thirty to thirty-four have run on an H100, sessions 48-51).
# Session 51: before the set, the chain-attribution GPU test (its bound changed), the one-box ring's residency test
# and `check --backend cuda` on the session's new picks (CHECK_SHAPES; empty: none), each a few seconds.
# Session 47 ran the same set part from build/carry/call.sh (gitignored), with other set names.
#
# From the repo root on the GPU machine, with OUT set and the pack carried (tools/trials/prebuilt.sh pack here;
# carry build/carry):
#   tools/trials/device_call.sh                                   # or H200_SET=twentyseventh OTHER_SET=... to choose
# Each part of the set is `tools/trials/heldout_parts.sh` with the parts below. The reports land in OUT/r/h, the
# output in OUT/r/h.txt, and everything in OUT/all.tgz. Merge the three parts here with
#   scripts/heuristic_md.py <part 1> <part 2> <part 3> --merge <file>.json > <file>.md
# One set takes about 280-300 s on either GPU.
set -u
: "${OUT:?set OUT}"
tools/trials/prebuilt.sh unpack || exit 1
export SKIP_BUILD=1 SKINNYGEMM_REVISION=$(cat build/gpu/revision 2>/dev/null || echo unknown)
R=$OUT/r
mkdir -p "$R"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
t() { echo "== $(date +%T) $*"; }
pack() { (cd "$R" && tar -czf "$OUT/all.tgz" .); }
trap pack EXIT
case "$gpu" in
  *H200*) set_name=${H200_SET:-thirtyfifth} ;;
  *) set_name=${OTHER_SET:-thirtyfifth} ;;
esac
[ -f "models/heldout_$set_name.json" ] || { echo "no models/heldout_$set_name.json" >&2; exit 2; }
t gtest
gtests='GpuStep.TheChainAttributionChargesEveryOpName:GpuTma.TheOneBoxTilesDeepestRingKeepsThreeCtasPerSm'
timeout -k 5 60 build/gpu/tests/skinnygemm_gpu_tests --gtest_filter="$gtests" --gtest_brief=1 > "$R/gtest-attr.log" 2>&1
echo "gtest rc $?"
CHECK_SHAPES=${CHECK_SHAPES-9431x1032,23555x1480,3331x448,3331x512,2111x448,64x4096,63x9088,60x5000,20999x576,18432x1152}
if [ -n "$CHECK_SHAPES" ]; then
  t check
  timeout -k 5 60 build/gpu/skinnygemm check --backend cuda --shapes "$CHECK_SHAPES" --m 1,8,16,24,32,48,64 \
    > "$R/check.txt" 2>&1
  echo "check rc $?"; tail -1 "$R/check.txt"
fi
t "set-$set_name"
SET=heldout_$set_name PARTS="*@1,2,4,8,16 *@24,32,48,64 *@3,5,12" HELDOUT_NEAR=2 HELDOUT_NAME=heuristic-$set_name \
  PART_SECONDS=150 OUT=$R/h tools/trials/heldout_parts.sh > "$R/h.txt" 2>&1
echo "rc $?"
grep -E "^heuristic over|^== part" "$R/h.txt"
t end
