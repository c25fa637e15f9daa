#!/usr/bin/env python3
"""ctest Scripts.SkipReasons: scripts/skip_reasons.py on a synthetic ctest LastTest.log (a gtest skip, a script's
SKIPPED line, a passed test): the reasons are printed grouped, the passed test is not listed.

    python3 tests/scripts/test_skip_reasons.py scripts/skip_reasons.py
"""
import os
import subprocess
import sys
import tempfile


def block(index, name, output, reason):
    return (f"{index}/4 Testing: {name}\n{index}/4 Test: {name}\nCommand: \"x\"\nDirectory: /tmp\n"
            f"\"{name}\" start time: Dec 01 08:00 UTC\nOutput:\n" + "-" * 58 + f"\n{output}<end of output>\n"
            "Test time =   0.01 sec\n" + "-" * 58 + f"\n{reason}\n\"{name}\" end time: Dec 01 08:00 UTC\n" +
            "-" * 58 + "\n\n")


def gtest_skip(name, message):
    return (f"[ RUN      ] {name}\n/src/tests/gpu/gpu_util.h:19: Skipped\n{message}\n"
            f"[  SKIPPED ] {name} (0 ms)\n")


SKIP = "Test Pass Reason:\nSkip regular expression found in output. Regex=[\\[  SKIPPED \\]]"
LOG = ("Start testing: Dec 01 08:00 UTC\n" + "-" * 58 + "\n" +
       block(1, "Gpu.One", gtest_skip("Gpu.One", "no CUDA device: GPU tests need an H200"), SKIP) +
       block(2, "Gpu.Two", gtest_skip("Gpu.Two", "no CUDA device: GPU tests need an H200"), SKIP) +
       block(3, "Python.TorchOps", "skinnygemm_torch: SKIPPED: torch not importable\n", SKIP) +
       block(4, "Cli.Passes", "[  PASSED  ] 1 test.\n", "Test Passed.") + "End testing: Dec 01 08:00 UTC\n")


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "LastTest.log")
        with open(path, "w") as f:
            f.write(LOG)
        out = subprocess.run([sys.executable, script, path], capture_output=True, text=True, check=True).stdout
        missing = subprocess.run([sys.executable, script, os.path.join(tmp, "none.log")], capture_output=True,
                                 text=True)
    failures = []
    if "2 skipped: no CUDA device: GPU tests need an H200 [Gpu.One, Gpu.Two]" not in out:
        failures.append("the two gtest skips are not grouped under their reason")
    if "1 skipped: skinnygemm_torch: SKIPPED: torch not importable [Python.TorchOps]" not in out:
        failures.append("the script's SKIPPED line is not the reason")
    if "Cli.Passes" in out:
        failures.append("a passed test is listed as skipped")
    if missing.returncode == 0 or "none.log" not in missing.stderr:
        failures.append("a missing log is not an error naming it: " + missing.stderr)
    if failures:
        print(out)
        sys.exit("FAILED: " + "; ".join(failures))
    print(out + "ok")


if __name__ == "__main__":
    main()
