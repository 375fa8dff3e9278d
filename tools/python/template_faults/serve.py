#!/usr/bin/env python3
"""Starts the template backend with one planted fault (the template kill matrix's corpus).

    python serve.py --fault NAME --port 8080 --db chat.sqlite3 --conformance
    python serve.py --list

Every argument but `--fault` goes to `template/server.py` as it is; without `--fault` the template
runs as it is (the matrix's control run goes through this launcher too). The template's own files carry
no fault: this launcher imports them, plants the fault (faults.py) and then runs the template's
`main`, so a team copying `template/` copies none of it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parent.parent / "template"
sys.path.insert(1, str(TEMPLATE))

import faults  # noqa: E402  (needs the template on the path)
import server  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description="the template backend with one planted fault", add_help=False)
    parser.add_argument("--fault", help="the fault to plant (--list names them)")
    parser.add_argument("--list", action="store_true", help="print the name of every fault and exit")
    ours, rest = parser.parse_known_args()
    if ours.list:
        print("\n".join(sorted(faults.FAULTS)))
        return 0
    if ours.fault is not None:
        if ours.fault not in faults.FAULTS:
            known = ", ".join(sorted(faults.FAULTS))
            print(f"serve.py: --fault takes one of: {known}; not {ours.fault!r}", file=sys.stderr)
            return 2
        faults.plant(ours.fault)
        print(f"template: fault {ours.fault} planted", file=sys.stderr)
    sys.argv = [str(TEMPLATE / "server.py"), *rest]
    return asyncio.run(server.main())


if __name__ == "__main__":
    sys.exit(main())
