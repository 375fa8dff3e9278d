#!/usr/bin/env bash
# Protocol-change gate and schemas for frontends (called by .ci/run):
#   1. the schema diff gate: schema/json against every released minor, schema/releases/v1/<MAJOR.MINOR>
#      (1.0, 1.1 and 1.2 today: exactly the released minors the protocol facts list);
#   2. the npm package @chatwire/protocol (tools/npm): npm ci, drift check of its generated types,
#      tsc --strict with TypeScript 5 and 7, build (precompiled validators), its tests, and the
#      consumer test (the packed tarball installed into fresh ESM projects, nodenext and bundler);
#   3. cross-validator agreement: Rust FrameValidator, the package's validators and Python
#      jsonschema on every fixture frame.
# Everything is installed from the project's files: Cargo.lock, tools/npm/package-lock.json,
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

# Every released minor is a baseline (spec/versioning.md, COMPAT-013): a change may be additive
# against the newest and still break what an older one promised. Directory names are versions.
BASELINES=$(find schema/releases/v1 -mindepth 1 -maxdepth 1 -type d -name '[0-9]*.[0-9]*' -printf '%f\n' | sort -V)
[ -n "$BASELINES" ] || { echo "gate: no released set under schema/releases/v1" >&2; exit 1; }
# They must be exactly the minors chatwire_schema::since::RELEASED_VERSIONS names (read from the
# generated, drift-checked protocol facts), so a missing release directory fails the gate instead of
# silently dropping a baseline.
RELEASED=$(python3 -c 'import json; print("\n".join(json.load(open("fixtures/protocol-facts.json"))["released_versions"]))' | sort -V)
[ "$BASELINES" = "$RELEASED" ] || {
  echo "gate: schema/releases/v1 holds $(echo $BASELINES) but the released minors are $(echo $RELEASED)" >&2
  exit 1
}
for BASELINE in $BASELINES; do
  step "protocol-change gate: schema/releases/v1/$BASELINE -> schema/json"
  "$BIN" diff "schema/releases/v1/$BASELINE" schema/json
done

NPM=tools/npm
step "npm package: npm ci ($NPM/package-lock.json)"
(cd "$NPM" && npm ci --no-audit --no-fund --loglevel=error)

step "npm package: src/generated/protocol.ts is what schema/json generates"
(cd "$NPM" && npm run -s drift)

step "npm package: tsc --strict with TypeScript 5 and 7"
(cd "$NPM" && npm run -s typecheck)

step "npm package: build (ajv standalone validators, no run-time code generation)"
(cd "$NPM" && npm run -s build)

step "npm package: the chat page bundle tools/reference/ui/app.js is what tools/npm/ui builds"
(cd "$NPM" && npm run -s page -- --check)

step "npm package: tests (node --test; the client's against the release reference backend)"
cargo build -q --release --locked -p chatwire-reference
(cd "$NPM" && CHATWIRE_REFERENCE="${CARGO_TARGET_DIR:-$ROOT/target}/release/chatwire-reference" npm test --silent)

step "npm package: consumer projects install the packed tarball (nodenext, bundler; TS 5 and 7)"
(cd "$NPM" && npm run -s consumer)

step "npm package: verdicts on fixtures/messages"
(cd "$NPM" && node scripts/verdicts.mjs --out "$WORK/npm.json")

step "Python jsonschema (tools/crosscheck/requirements.txt)"
VENV=tools/crosscheck/.venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r tools/crosscheck/requirements.txt
"$VENV/bin/python" tools/crosscheck/crosscheck.py python --out "$WORK/python.json"

step "Rust FrameValidator (chatwire-schema validate)"
"$VENV/bin/python" tools/crosscheck/crosscheck.py rust --bin "$BIN" --out "$WORK/rust.json"

step "cross-validator agreement"
"$VENV/bin/python" tools/crosscheck/crosscheck.py compare "$WORK/rust.json" "$WORK/npm.json" "$WORK/python.json"
