#!/usr/bin/env python3
"""ctest Scripts.FusedMd: scripts/fused_md.py on small *synthetic* result documents (made-up numbers, written to a
temporary folder, never committed as results): the acceptance lines count right on a GPU-shaped document, a CPU
document says that no GPU was used, and a file without fused rows is refused with a message.

    python3 tests/scripts/test_fused_md.py scripts/fused_md.py
"""
import json
import os
import subprocess
import sys
import tempfile


def row(name, segments, n, m, us, separate_us, gpu=True):
    r = {"kind": "fused", "name": name, "dtype": "bf16", "n": n, "k": 7168, "m": m, "rung": "fused kernel",
         "reason": "synthetic", "configs": ["tma_synthetic"], "us": us, "spread": 0.01, "separate_us": separate_us,
         "ratio": round(us / separate_us, 4), "contiguous_us": us - 0.5, "check_ratio": 0.1, "checked": 100,
         "segments": [{"name": s, "n": sn, "us": separate_us / 2, "config": "tma_synthetic"} for s, sn in segments]}
    if gpu:
        r.update({"stream_read_us": us * 0.9, "efficiency": 0.9, "cublaslt_us": us * 1.3, "cublaslt_best_us": us * 1.2})
    return r


def document(gpu):
    mla = [("mla.fused_qkv_a", 2112), ("mla.g_proj", 1536)]
    kda = [("kda.qkvg", 6144), ("kda.fab", 140)]
    rows = [row("mla.qkv_a_g", mla, 3648, 1, 11.0, 13.0, gpu),     # 0.846: passes both targets
            row("mla.qkv_a_g", mla, 3648, 16, 13.0, 13.5, gpu),    # 0.963, 13.0 us: misses both
            row("mla.qkv_a_g", mla, 3648, 32, 20.0, 30.0, gpu),    # M > 16: not a 12.7 us row
            row("kda.qkvg_fab", kda, 6288, 1, 18.0, 20.0, gpu),    # 0.9
            row("kda.qkvg_fab", kda, 6288, 8, 23.0, 35.0, gpu),    # separate 35 us vs 2 x 11 alone: an interaction
            {"kind": "gemm", "n": 1, "k": 1, "m": 1, "us": 1.0}]   # another kind: ignored
    rows[3]["segments"][1]["pad_to"] = 8
    for s in rows[4]["segments"]:
        s["us"] = 11.0
    return {"meta": {"gpu": "SYNTHETIC" if gpu else "cpu", "sms": 132, "l2_mib": 60, "cuda": "13.0" if gpu else "",
                     "cublaslt": "13" if gpu else "", "revision": "test", "command": "synthetic", "date": "2026-01-01"},
            "stream_read_tbps": 4.5 if gpu else 0.0, "rows": rows}


def render(script, tmp, doc, name):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return subprocess.run([sys.executable, script, path], capture_output=True, text=True)


def main(script):
    with tempfile.TemporaryDirectory() as tmp:
        r = render(script, tmp, document(True), "fused.json")
        assert r.returncode == 0, r.stderr
        md = r.stdout
        assert "fused ≤ 0.95 × separate (same run): **4 of 5 rows**" in md, md
        assert "mla.qkv_a_g: 2 of 3; above 0.95 at M=16 (0.963)" in md, md
        assert "kda.qkvg_fab: 2 of 2" in md, md
        assert "- kda.qkvg_fab M=8: 35.00 µs back to back vs 22.00 µs alone (1.59x)" in md, md
        assert "mla.qkv_a_g M=1:" not in md.split("## Interactions")[1], md
        assert "fused 3648×7168 at M ≤ 16 ≤ 12.7 µs: **1 of 2 rows** (slowest 13.00 µs at M=16" in md, md
        assert "kda.fab 140→144" in md, md
        assert "limit µs" in md and "cuBLASLt µs" in md, md
        assert "no GPU was used" not in md, md

        r = render(script, tmp, document(False), "fused_cpu.json")
        assert r.returncode == 0, r.stderr
        assert "CPU backend: no GPU was used" in r.stdout and "limit µs" not in r.stdout, r.stdout

        empty = document(True)
        empty["rows"] = [x for x in empty["rows"] if x["kind"] != "fused"]
        r = render(script, tmp, empty, "empty.json")
        assert r.returncode != 0 and "no rows of kind \"fused\"" in r.stderr, (r.returncode, r.stderr)
        print("fused_md.py: OK")


if __name__ == "__main__":
    main(sys.argv[1])
