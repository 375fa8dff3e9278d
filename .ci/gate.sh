#!/usr/bin/env bash
# Protocol-change gate and schemas for frontends (called by .ci/run):
#   1. the schema diff gate: schema/json against the released baseline schema/releases/v1;
#   2. TypeScript: npm ci, drift check of schema/typescript, tsc --strict, ajv (strict, 2020-12)
#      over every fixture frame;
#   3. cross-validator agreement: Rust FrameValidator, ajv and Python jsonschema on every frame.
# Everything is installed from the project's files: Cargo.lock, tools/ts-check/package-lock.json,
# tools/crosscheck/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

step() { printf '\n==> gate: %s\n' "$*"; }
need() { command -v "$1" >/dev/null || { echo "gate: $1 is required but not installed" >&2; exit 1; }; }
need node
need npm
need python3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/chatwire-gate.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

step "build chatwire-schema"
cargo build -q --locked -p chatwire-schema-tool
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/chatwire-schema"
[ -x "$BIN" ] || { echo "gate: $BIN not found after the build" >&2; exit 1; }

step "protocol-change gate: schema/releases/v1 -> schema/json"
"$BIN" diff schema/releases/v1 schema/json

step "TypeScript: npm ci (tools/ts-check/package-lock.json)"
(cd tools/ts-check && npm ci --no-audit --no-fund --loglevel=error)

step "TypeScript: schema/typescript is what schema/json generates"
(cd tools/ts-check && node scripts/generate.mjs --check)

step "TypeScript: tsc --strict --noEmit"
(cd tools/ts-check && npx --no-install tsc --strict --noEmit -p tsconfig.json)

step "ajv (draft 2020-12, strict) over fixtures/messages"
(cd tools/ts-check && node scripts/validate-fixtures.mjs --out "$WORK/ajv.json")

step "Python jsonschema (tools/crosscheck/requirements.txt)"
VENV=tools/crosscheck/.venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r tools/crosscheck/requirements.txt
"$VENV/bin/python" tools/crosscheck/crosscheck.py python --out "$WORK/python.json"

step "Rust FrameValidator (chatwire-schema validate)"
"$VENV/bin/python" tools/crosscheck/crosscheck.py rust --bin "$BIN" --out "$WORK/rust.json"

step "cross-validator agreement"
"$VENV/bin/python" tools/crosscheck/crosscheck.py compare "$WORK/rust.json" "$WORK/ajv.json" "$WORK/python.json"
