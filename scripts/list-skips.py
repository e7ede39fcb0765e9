#!/usr/bin/env python3
"""Prints every skipped test of ctest's JUnit reports, with its reason.

  python3 scripts/list-skips.py build/ctest-junit.xml build-fuzz/ctest-junit.xml ...

The reason is what the test said: a shell test's "NAME: SKIP: why" line
(tests/skip_policy.sh), or the message after GoogleTest's "Skipped" line
(tests/fakes/skip_policy.h). A report that is missing is named, not fatal:
its phase did not run.
"""
import os
import sys
import xml.etree.ElementTree as ET


def reason(output):
    lines = [line.strip() for line in (output or "").splitlines()]
    for line in lines:
        if ": SKIP: " in line:
            return line.split(": SKIP: ", 1)[1]
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines):
            return lines[i + 1] or "(no reason given)"
    said = [line for line in lines if line]
    return said[-1] if said else "(no output)"


def main(paths):
    skipped = 0
    for path in paths:
        try:
            cases = ET.parse(path).getroot().iter("testcase")
        except (OSError, ET.ParseError) as e:
            print(f"{path}: no report ({e.__class__.__name__})")
            continue
        for case in cases:
            if case.find("skipped") is None:
                continue
            skipped += 1
            name = case.get("name", "?").split("  # ")[0]
            phase = os.path.basename(os.path.dirname(os.path.abspath(path)))
            print(f"  {phase}: {name}: {reason(case.findtext('system-out'))}")
    print(f"{skipped} test(s) skipped")


if __name__ == "__main__":
    main(sys.argv[1:])
