#!/usr/bin/env bash
# Session 32: a held-out set's run in parts, so that a run cut short is finished without timing its points twice. Each
# item of PARTS is "<names>@<M list>": <names> a '+' list of the set's projection names, or "*" for every projection
# that no other item names; each part is the set's model file cut to those names (same names, same shapes, a
# temporary data dir beside the tree's tables and policies), run as scripts/gpu-check's heldout stage runs it. Reports
# OUT/<HELDOUT_NAME>-<n>.json, merged after with scripts/heuristic_md.py --merge.
#   SET=heldout_seventeenth PARTS="odd.n5003_k1024+odd.n14083_k5120@1,2,4,8,16 *@3,5,12" HELDOUT_NEAR=2 \
#     HELDOUT_NAME=heuristic-seventeenth-rest tools/trials/heldout_parts.sh
set -uo pipefail
: "${OUT:?set OUT}" "${SET:?set SET to a model of models/}" "${PARTS:?set PARTS}"
mkdir -p "$OUT" build
source tools/trials/trial_lib.sh  # the reports' revision: the carried pack's (SKIP_BUILD=1)
cli=${CLI:-$cli}
data=build/heldout-parts
named=""
for item in $PARTS; do [ "${item%@*}" = "*" ] || named="$named+${item%@*}"; done
n=0
for item in $PARTS; do
  n=$((n + 1))
  names="${item%@*}" ms="${item#*@}"
  rm -rf "$data" && mkdir -p "$data/models" && cp -r tables policies "$data/"
  python3 - "models/$SET.json" "$data/models/$SET.json" "$names" "${named#+}" <<'PY' || exit 1
import json, sys
src, dst, names, named = sys.argv[1:]
model = json.load(open(src))
keep = set(names.split("+"))
every = {p["name"] for p in model["projections"]}
missing = (keep - {"*"}) - every
if missing:
    sys.exit(f"heldout_parts: {sorted(missing)} are not projections of {src}")
skip = set(named.split("+")) if named else set()
model["projections"] = [p for p in model["projections"]
                        if ((p["name"] not in skip) if "*" in keep else (p["name"] in keep))]
model.pop("fusions", None)
json.dump(model, open(dst, "w"), indent=1)
print(f"part: {len(model['projections'])} projections")
PY
  echo "== part $n: $names at M = $ms"
  SKINNYGEMM_DATA_DIR="$data" timeout -k 5 "${PART_SECONDS:-300}" "$cli" tune --backend cuda --shapes "model:$SET:tp1" \
    --m "$ms" --samples 3 --replays 10 --no-store --heuristic-report "$OUT/${HELDOUT_NAME:-heuristic}-$n.json" \
    ${HELDOUT_NEAR:+--near-heuristic "$HELDOUT_NEAR"} > "$OUT/${HELDOUT_NAME:-heuristic}-$n.txt" 2> "build/heldout-$n.err" ||
    { echo "part $n FAILED or cut"; tail -3 "build/heldout-$n.err"; }
  tail -4 "$OUT/${HELDOUT_NAME:-heuristic}-$n.txt"
done
