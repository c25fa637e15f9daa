#!/usr/bin/env python3
"""ctest Scripts.MlaMd: scripts/mla_md.py on a small *synthetic* result document (made-up numbers, written to a
temporary folder, never committed as results): the Markdown and the PNG appear, the acceptance lines count right,
and without matplotlib the script stops with a message saying how to install it.

    python3 tests/scripts/test_mla_md.py scripts/mla_md.py
"""
import json
import os
import subprocess
import sys
import tempfile


def synthetic():
    rows = []
    times = {  # (m, context): µs per variant
        (1, 512): {"cublaslt": 60.0, "skinny_separate": 52.0, "skinny_fused": 50.0, "skinny_side_gate": 51.0},
        (1, 8192): {"cublaslt": 70.0, "skinny_separate": 61.0, "skinny_fused": 60.5, "skinny_side_gate": 58.0},
        (64, 512): {"cublaslt": 90.0, "skinny_separate": 95.0, "skinny_fused": 99.0, "skinny_side_gate": 97.0},
    }
    for (m, c), by_variant in times.items():
        for v, us in by_variant.items():
            rows.append({"kind": "mla_layer", "name": "kimi_k3.mla.tp8", "variant": v, "m": m, "context": c, "us": us,
                         "attention_us": 5.0, "attention_tbps": 2.5, "efficiency": 0.8})
    rows.append({"kind": "mla_layer", "name": "kimi_k3.mla.tp8", "variant": "skinny_fused", "m": 64, "context": 8192,
                 "error": "synthetic failure"})
    choice = {"1:512": "skinny_fused", "1:8192": "skinny_side_gate", "64:512": "skinny_separate"}
    return {"meta": {"gpu": "SYNTHETIC", "sms": 132, "l2_mib": 60, "cuda": "13.0", "cublaslt": "13", "revision": "test",
                     "command": "synthetic", "date": "2026-01-01"},
            "stream_read_tbps": 4.5, "layer": {"name": "kimi_k3.mla.tp8", "heads": 12}, "rows": rows,
            "policy_choice": choice, "skipped": [{"m": 64, "context": 131072, "reason": "synthetic skip"}]}


def has_matplotlib(python):
    return subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode == 0


def main(script):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mla_layer.json")
        with open(path, "w") as f:
            json.dump(synthetic(), f)
        # Without matplotlib: a clear message, a failing status, nothing written.
        blocked = ("import runpy, sys; sys.modules['matplotlib'] = None; sys.argv = sys.argv[1:]; "
                   "runpy.run_path(sys.argv[0], run_name='__main__')")
        r = subprocess.run([sys.executable, "-c", blocked, script, path], capture_output=True, text=True)
        assert r.returncode != 0 and "matplotlib is needed" in r.stderr, (r.returncode, r.stderr)
        assert not os.path.exists(os.path.join(tmp, "mla_layer.md"))
        python = next((p for p in [sys.executable, "/usr/bin/python3"] if os.path.exists(p) and has_matplotlib(p)), None)
        if python is None:
            print("SKIPPED: matplotlib not importable (the missing-matplotlib message was checked)")
            return
        out = os.path.join(tmp, "out")
        r = subprocess.run([python, script, path, "--out-dir", out], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        md = open(os.path.join(out, "mla_layer.md")).read()
        assert os.path.getsize(os.path.join(out, "mla_layer_gain.png")) > 1000
        assert "within 2% of the best variant measured at 2 of 3 points" in md, md
        assert "slower than cuBLASLt: 1 of 3" in md, md
        assert "synthetic failure" in md and "synthetic skip" in md, md
        print("mla_md.py: OK")


if __name__ == "__main__":
    main(sys.argv[1])
