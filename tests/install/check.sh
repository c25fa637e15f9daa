#!/usr/bin/env bash
# Installs the build into a fresh prefix, then configures, builds and runs tests/install as a consumer.
#   check.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work.install.log" 2>&1 || { cat "$work.install.log"; exit 1; }
cmake -S "$source/tests/install" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
"$work/consumer/consumer"
test -f "$work/prefix/share/skinnygemm/models/kimi_k3.json"
test -x "$work/prefix/bin/skinnygemm"
