#!/usr/bin/env python3
"""Fails when a test binary holds an ignored test that no `cargo test … --test NAME` of .ci/run runs.

The slow tests are `#[ignore]`d so that the README's `cargo test --workspace --locked` stays within
minutes; .ci/run runs each such binary in a step of its own with `-- --ignored`. Reads the output of
`cargo test --workspace --locked --tests -- --list --ignored` (cargo's `Running tests/NAME.rs …`
lines, then the binary's `name: test` lines) on stdin.
Usage: cargo test … -- --list --ignored 2>&1 | ignored_tests.py .ci/run
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_RUNNING = re.compile(r"^\s*Running (\S+)")
_TEST_BINARY = re.compile(r"^tests/(\w+)\.rs$")


def main() -> int:
    ci = Path(sys.argv[1]).read_text(encoding="utf-8")
    ignored: dict[str, int] = {}
    source = None
    for line in sys.stdin:
        running = _RUNNING.match(line)
        if running:
            source = running.group(1)
        elif line.rstrip().endswith(": test") and source is not None:
            ignored[source] = ignored.get(source, 0) + 1
    missing = []
    for source, count in sorted(ignored.items()):
        binary = _TEST_BINARY.match(source)
        ran = binary is not None and re.search(rf"cargo test .*--test {binary.group(1)}\b", ci) is not None
        print(f"{source}: {count} ignored test(s), {'run by a step' if ran else 'RUN BY NO STEP'}")
        if not ran:
            missing.append(source)
    if missing:
        print(f"ignored tests that .ci/run never runs: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
