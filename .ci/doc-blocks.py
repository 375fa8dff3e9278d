#!/usr/bin/env python3
"""Runs the shell blocks of the READMEs as written, so the docs hold on a fresh machine.

Every fenced ```sh block of the given Markdown files carries a marker on the line before it (blank
lines allowed between):

    <!-- ci: run -->                      run it with bash -euo pipefail from the repository's root
    <!-- ci: run background -->           a server: start it, wait until it prints its ws:// URL (and,
                                          where it says it serves a page, until that page loads), then
                                          stop it
    <!-- ci: skip (why it cannot run) -->  never run; the reason is required

A block without a marker, a `skip` without a reason or a block that fails fails the whole step.
Blocks run in file order, one after the other, sharing the working tree (a venv one block makes,
the next uses), with CARGO_TARGET_DIR set to the repository's target directory (so `cargo install
--path` reuses the release build) and CARGO_INSTALL_ROOT to a temporary directory on PATH. Files a
block leaves in the working tree are listed and removed afterwards.

    doc-blocks.py [--list] FILE.md...
"""

from __future__ import annotations

import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

MARKER = re.compile(r"^\s*<!-- ci: (run(?: background)?|skip(?: \((?P<reason>.+)\))?) -->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
SHELLS = {"sh", "bash", "shell", "console"}
BLOCK_DEADLINE_S = 1200
READY_DEADLINE_S = 600
URL = re.compile(r"(ws|http)://127\.0\.0\.1:\d+")


@dataclass
class Block:
    file: str
    line: int
    mode: str  # "run", "background" or "skip"
    reason: str
    code: str


class DocError(Exception):
    pass


def blocks_of(path: str) -> list[Block]:
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        indent, info = fence.group(1), fence.group(2)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise DocError(f"{path}:{i + 1}: a code block that never closes")
        if info in SHELLS:
            body = [line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end]]
            out.append(_marked(path, lines, i, "\n".join(body)))
        i = end + 1
    return out


def _marked(path: str, lines: list[str], fence: int, code: str) -> Block:
    before = fence - 1
    while before >= 0 and lines[before].strip() == "":
        before -= 1
    marker = MARKER.match(lines[before]) if before >= 0 else None
    where = f"{path}:{fence + 1}"
    if marker is None:
        raise DocError(f"{where}: a shell block without a <!-- ci: run --> or <!-- ci: skip (reason) --> marker")
    kind = marker.group(1)
    if kind.startswith("skip"):
        if not marker.group("reason"):
            raise DocError(f"{where}: <!-- ci: skip --> needs a reason: <!-- ci: skip (why) -->")
        return Block(path, fence + 1, "skip", marker.group("reason"), code)
    return Block(path, fence + 1, "background" if kind == "run background" else "run", "", code)


def untracked(root: Path) -> set[str]:
    out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "--directory"], cwd=root, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def start_background(block: Block, env: dict[str, str], root: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", block.code], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + READY_DEADLINE_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        line = proc.stdout.readline()
        if line == "" and proc.poll() is not None:
            break
        print(f"    | {line.rstrip()}")
        found = URL.search(line)
        if found:
            if "--ui" in block.code:
                page = "http://" + found.group(0).split("://", 1)[1] + "/"
                with urllib.request.urlopen(page, timeout=30) as response:
                    if response.status != 200 or b"<html" not in response.read():
                        stop(proc)
                        raise DocError(f"{block.file}:{block.line}: {page} did not serve the page")
                print(f"    | {page} serves the page")
            return proc
    stop(proc)
    raise DocError(f"{block.file}:{block.line}: the background block printed no ws:// or http:// URL within {READY_DEADLINE_S} s")


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--list", action="store_true", help="list the blocks and their markers, run nothing")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    try:
        blocks = [b for f in args.files for b in blocks_of(f)]
    except DocError as e:
        print(f"doc-blocks: {e}", file=sys.stderr)
        return 1
    if args.list:
        for b in blocks:
            print(f"{b.file}:{b.line}: {b.mode}{f' ({b.reason})' if b.reason else ''}")
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="chatwire-doc-blocks-"))
    env = dict(os.environ)
    env["CARGO_TARGET_DIR"] = str(Path(os.environ.get("CARGO_TARGET_DIR", root / "target")).resolve())
    env["CARGO_INSTALL_ROOT"] = str(scratch / "cargo")
    env["PATH"] = f"{scratch / 'cargo' / 'bin'}:{env['PATH']}"
    before = untracked(root)
    background: list[subprocess.Popen[str]] = []
    failed = 0
    try:
        for b in blocks:
            if b.mode == "skip":
                print(f"==> {b.file}:{b.line}: skipped: {b.reason}")
                continue
            print(f"==> {b.file}:{b.line}: {'started in the background' if b.mode == 'background' else 'run'}\n" + "\n".join(f"    $ {line}" for line in b.code.splitlines()))
            started = time.monotonic()
            if b.mode == "background":
                stop(start_background(b, env, root))
                print(f"    ok in {time.monotonic() - started:.0f} s (started, answered, stopped)")
                continue
            try:
                result = subprocess.run(["bash", "-euo", "pipefail", "-c", b.code], cwd=root, env=env, timeout=BLOCK_DEADLINE_S)
            except subprocess.TimeoutExpired:
                print(f"doc-blocks: {b.file}:{b.line}: still running after {BLOCK_DEADLINE_S} s", file=sys.stderr)
                failed += 1
                continue
            if result.returncode != 0:
                print(f"doc-blocks: {b.file}:{b.line}: exit {result.returncode}", file=sys.stderr)
                failed += 1
            else:
                print(f"    ok in {time.monotonic() - started:.0f} s")
    except DocError as e:
        print(f"doc-blocks: {e}", file=sys.stderr)
        failed += 1
    finally:
        for proc in background:
            stop(proc)
        left = sorted(untracked(root) - before)
        if left:
            print(f"doc-blocks: the blocks left {', '.join(left)} in the working tree; removed")
            for rel in left:
                target = root / rel
                shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)
    ran = sum(1 for b in blocks if b.mode != "skip")
    print(f"doc-blocks: {ran - failed} passed, {failed} failed ({len(blocks) - ran} marked skip, each with its reason)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
