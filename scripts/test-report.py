#!/usr/bin/env python3
"""Prints every skipped test of ctest's JUnit reports, with its reason, and
then every failed one, with the lines that say why.

  python3 scripts/test-report.py build/ctest-junit.xml build-fuzz/ctest-junit.xml ...

A skip's reason is what the test said: a shell test's "NAME: SKIP: why" line
(tests/skip_policy.sh), or the message after GoogleTest's "Skipped" line
(tests/fakes/skip_policy.h). A failure's lines come last, so that a CI log
cut to its tail still says why each test failed (ctest printed the whole
output far above). A report that is missing is named, not fatal: its phase
did not run.
"""
import os
import sys
import xml.etree.ElementTree as ET

FAILURE_LINES = 8   # a failure and its values, or a FAIL line and what led to it
LINE_CHARS = 300    # one runaway line must not push the others out


def skip_reason(output):
    lines = [line.strip() for line in (output or "").splitlines()]
    for line in lines:
        if ": SKIP: " in line:
            return line.split(": SKIP: ", 1)[1]
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines):
            return lines[i + 1] or "(no reason given)"
    said = [line for line in lines if line]
    return said[-1] if said else "(no output)"


def failure_lines(output):
    """The lines that say why: from GoogleTest's first "FILE:LINE: Failure"
    on (its Value of / Actual / Expected and message), else up to a shell
    test's last FAIL line, else the last lines."""
    said = [line.rstrip() for line in (output or "").splitlines() if line.strip()]
    failure = next((i for i, line in enumerate(said) if line.endswith(": Failure")), None)
    shell_fail = next((i for i in range(len(said) - 1, -1, -1) if "FAIL" in said[i] and "FAILED" not in said[i]), None)
    if failure is not None:
        chosen = said[failure:failure + FAILURE_LINES]
    elif shell_fail is not None:
        chosen = said[max(0, shell_fail + 1 - FAILURE_LINES):shell_fail + 1]
    else:
        chosen = said[-FAILURE_LINES:]
    return [line[:LINE_CHARS] for line in chosen] or ["(no output)"]


def cases(paths):
    """(phase, name, testcase) for each report's cases; names a missing one."""
    for path in paths:
        try:
            found = list(ET.parse(path).getroot().iter("testcase"))
        except (OSError, ET.ParseError) as e:
            print(f"{path}: no report ({e.__class__.__name__})")
            continue
        phase = os.path.basename(os.path.dirname(os.path.abspath(path)))
        for case in found:
            yield phase, case.get("name", "?").split("  # ")[0], case


def main(paths):
    all_cases = list(cases(paths))
    skipped = [(p, n, c) for p, n, c in all_cases if c.find("skipped") is not None]
    failed = [(p, n, c) for p, n, c in all_cases
              if c.find("failure") is not None or c.find("error") is not None]
    for phase, name, case in skipped:
        print(f"  {phase}: {name}: {skip_reason(case.findtext('system-out'))}")
    print(f"{len(skipped)} test(s) skipped")
    if failed:
        print(f"== failed tests ({len(failed)}), each with why:")
        for phase, name, case in failed:
            print(f"  {phase}: {name}:")
            for line in failure_lines(case.findtext("system-out")):
                print(f"    {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
