"""A table file as `skinnygemm tune` writes it (one entry per line, compact JSON), for the table scripts."""
import json


def write_table(path, meta, entries):
    compact = lambda o: json.dumps(o, separators=(",", ":"))
    with open(path, "w") as f:
        f.write('{\n  "meta": ' + compact(meta) + ',\n  "entries": [\n')
        f.write(",\n".join("    " + compact(e) for e in entries))
        f.write("\n  ]\n}\n")
