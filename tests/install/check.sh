#!/usr/bin/env bash
# Installs the build into a fresh prefix, then configures, builds and runs tests/install as a consumer; then
# copies the prefix elsewhere, deletes the original, and runs the installed CLI from the copy with a cleared
# environment (only PATH): it must start (its run path finds libskinnygemm) and read the copy's
# share/skinnygemm, not the build tree, the source tree or the configure-time prefix (issue 19).
#   check.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work.install.log" 2>&1 || { cat "$work.install.log"; exit 1; }
cmake -S "$source/tests/install" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
"$work/consumer/consumer"
test -f "$work/prefix/share/skinnygemm/models/kimi_k3.json"

fail() { echo "FAILED: $*" >&2; exit 1; }
moved="$work/moved/elsewhere"
mkdir -p "$moved"
cp -a "$work/prefix/." "$moved/"
rm -rf "$work/prefix" "$work/consumer"
data="$(cd "$moved/share/skinnygemm" && pwd -P)"
# Only PATH, and no system folder that could hold another skinnygemm before the copy's bin/.
run() { env -i PATH="$moved/bin:/usr/bin:/bin" skinnygemm "$@"; }
[ "$(env -i PATH="$moved/bin:/usr/bin:/bin" bash -c 'command -v skinnygemm')" = "$moved/bin/skinnygemm" ] ||
  fail "PATH does not find the copied CLI first"

info="$(run info 2>&1)" || fail "installed 'skinnygemm info' exited $?: $info"
echo "$info"
grep -qF "data folder $data" <<< "$info" || fail "info does not name the installed data folder $data"
grep -q "^models: .*kimi_k3" <<< "$info" || fail "info finds no models in the installed data folder"

shapes="$(run shapes --model kimi_k3 --tp 8 2>&1)" || fail "installed 'skinnygemm shapes' exited $?: $shapes"
echo "$shapes" | head -5
grep -qF "read from $data/models/kimi_k3.json" <<< "$shapes" || fail "shapes did not read $data/models/kimi_k3.json"
grep -q "766 GEMM launches" <<< "$shapes" || fail "shapes printed no step totals"

# The override still wins over the located folder.
override="$(env -i PATH="$moved/bin:/usr/bin:/bin" SKINNYGEMM_DATA_DIR="$work/nowhere" skinnygemm info 2>&1)" || fail "info with SKINNYGEMM_DATA_DIR exited $?"
grep -qF "data folder $work/nowhere" <<< "$override" || fail "SKINNYGEMM_DATA_DIR was not used: $override"

# With the copy's data moved away, nothing else may stand in for it (the build tree's or source tree's data
# that a configure-time path would reach): info names the copy's folder and finds no models, shapes fails
# naming the file it looked for.
mv "$moved/share/skinnygemm" "$moved/share/skinnygemm.away"
gone="$(run info 2>&1)" || fail "info without data exited $?: $gone"
grep -qF "data folder $data" <<< "$gone" || fail "without its data, info names another folder: $gone"
grep -q "^models: *none found" <<< "$gone" || fail "without its data, info still found models: $gone"
if missing="$(run shapes --model kimi_k3 --tp 8 2>&1)"; then fail "shapes ran without the data: $missing"; fi
grep -qF "$data/models/kimi_k3.json" <<< "$missing" || fail "shapes does not name the missing file: $missing"
mv "$moved/share/skinnygemm.away" "$moved/share/skinnygemm"
echo "installed CLI: ok from $moved"
