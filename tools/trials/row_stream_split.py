#!/usr/bin/env python3
"""Session 40: per-shape step trials from a row-stream trial file (tools/trials/row_stream_table.py's output): each
shape of its RS trial alone, as trial "P<N>x<K>" (every M that RS forces on that shape), so that the step shows which
shape's row stream survives it. Writes the trials to OUT (JSON {name: [[n, k, [m, ...], config], ...]}) and prints the
names, space-separated, for tools/trials/step_trials.sh.
  tools/trials/row_stream_split.py IN.json OUT.json"""
import json
import sys

src = json.load(open(sys.argv[1]))
out = {}
for n, k, ms, cfg in src["RS"]:
    out.setdefault("P%dx%d" % (n, k), []).append([n, k, ms, cfg])
json.dump(out, open(sys.argv[2], "w"))
print(" ".join(out))
