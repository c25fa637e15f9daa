#!/usr/bin/env bash
# Sessions 46-47: one device call that is useful on whichever GPU the pool lends. A call that names `nvidia-h200` may
# be given an H100, and only `needs_h200` (reserved for work that cannot fit) forbids that. So this script checks the
# GPU and runs a held-out set on either kind:
# - on an H200, set H200_SET (one never yet timed on an H200; default thirtyfourth, written blind at 1282d73);
# - on any other GPU, set OTHER_SET (default thirtyfourth; thirty to thirty-three have run on an H100, sessions 48-49).
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
  *H200*) set_name=${H200_SET:-thirtyfourth} ;;
  *) set_name=${OTHER_SET:-thirtyfourth} ;;
esac
[ -f "models/heldout_$set_name.json" ] || { echo "no models/heldout_$set_name.json" >&2; exit 2; }
t "set-$set_name"
SET=heldout_$set_name PARTS="*@1,2,4,8,16 *@24,32,48,64 *@3,5,12" HELDOUT_NEAR=2 HELDOUT_NAME=heuristic-$set_name \
  PART_SECONDS=150 OUT=$R/h tools/trials/heldout_parts.sh > "$R/h.txt" 2>&1
echo "rc $?"
grep -E "^heuristic over|^== part" "$R/h.txt"
t end
