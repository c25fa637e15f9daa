#!/usr/bin/env python3
"""Prints why each skipped ctest test was skipped, grouped by reason, from ctest's LastTest.log.

ctest's console shows a skipped test only as "***Skipped" (even with --output-on-failure); the reason (the
GTEST_SKIP() message, or the SKIPPED line a script printed) is only in Testing/Temporary/LastTest.log.
scripts/test runs this after ctest, so that "no CUDA device" or "built without NCCL" is on the console.

    python3 scripts/skip_reasons.py BUILD_DIR/Testing/Temporary/LastTest.log
"""
import re
import sys

SKIPPED = "Skip regular expression found in output"


def reason_of(output):
    """The skip message in one test's output: gtest's line after "file:line: Skipped", else a SKIPPED line."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if re.search(r":\d+: Skipped$", line):
            message = []
            for follow in lines[i + 1:]:
                if follow.startswith("[  SKIPPED ]"):
                    break
                message.append(follow.strip())
            return " ".join(m for m in message if m) or "(GTEST_SKIP() without a message)"
    for line in lines:
        if "SKIPPED" in line and not line.startswith("[  SKIPPED ]"):
            return line.strip()
    return "(no reason printed)"


def skipped_tests(log):
    """(test name, reason) of every skipped test in a LastTest.log text, in log order."""
    out = []
    for block in re.split(r"\n(?=\d+/\d+ Testing: )", log):
        name = re.match(r"\d+/\d+ Testing: (.+)", block.strip())
        if not name:
            continue
        output = re.search(r"Output:\n-+\n(.*?)<end of output>", block, re.S)
        if SKIPPED in block or "\nTest Skipped" in block:
            out.append((name.group(1).strip(), reason_of(output.group(1) if output else "")))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: skip_reasons.py LastTest.log")
    try:
        with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
            log = f.read()
    except OSError as e:
        sys.exit(f"skip_reasons.py: cannot read {sys.argv[1]}: {e.strerror}")
    by_reason = {}
    for name, reason in skipped_tests(log):
        by_reason.setdefault(reason, []).append(name)
    if not by_reason:
        print("skipped tests: none")
        return
    print("skipped tests, by reason:")
    for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(names[:3]) + (f", ... ({len(names) - 3} more)" if len(names) > 3 else "")
        print(f"  {len(names)} skipped: {reason} [{shown}]")


if __name__ == "__main__":
    main()
