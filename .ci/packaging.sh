#!/usr/bin/env bash
# Publishable crates (called by .ci/run, after the tests):
#   1. `cargo package` for every crate meant for the registry (every member not `publish = false`);
#   2. the packages are unpacked outside the repository and chatwire-conformance is installed from
#      its package, against the packaged chatwire-schema, chatwire-monitor and chatwire-reference,
#      with the repository's Cargo.lock (--locked);
#   3. the installed runner lists exactly the repository's scenarios and requirements, and runs a
#      scenario with a golden snapshot against its bundled reference backend;
#   4. a package without its embedded files does not build: no scenario, no snapshot, no spec text.
# The build reuses the workspace's target directory: only the chatwire crates are compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

step() { printf '\n==> packaging: %s\n' "$*"; }
# Runs a command in the workspace of unpacked packages. Those crates are built from scratch on
# every run, so incremental compilation would only leave its caches behind.
in_work() { (cd "$WORK" && CARGO_INCREMENTAL=0 "$@"); }
fail() { echo "packaging: $*" >&2; exit 1; }

# Outside the repository, at a path fixed per checkout: the unpacked crates keep their package ids
# from run to run, so the target directory holds one build of them, not one per run.
WORK="${TMPDIR:-/tmp}/chatwire-packaging-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

step "crates meant for the registry"
CRATES=$(cargo metadata --no-deps --locked --format-version 1 | python3 -c '
import json, sys
meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
for p in meta["packages"]:
    if p["id"] in members and p["publish"] != []:
        print(p["name"], p["version"])
')
[ -n "$CRATES" ] || fail "no publishable crate found"
echo "$CRATES"
for expected in chatwire-schema chatwire-monitor chatwire-reference chatwire-conformance; do
  grep -q "^$expected " <<<"$CRATES" || fail "$expected is not publishable any more"
done

step "versions: every package is numbered after the protocol version it implements (README.md, Versions)"
# MAJOR.MINOR of the protocol (chatwire_schema::PROTOCOL_VERSION, through the drift-checked facts),
# then a numeric PATCH, with a pre-release tag (npm's -dev.N, Python's .devN) only while that minor is
# not released. The runner wheel takes the chatwire-conformance crate's version (maturin; .ci/run
# checks the wheel it builds).
read -r PROTOCOL PRERELEASE < <(python3 -c 'import json
facts = json.load(open("fixtures/protocol-facts.json"))
v = facts["protocol_version"]
print(v, "" if v in facts["released_versions"] else "(-dev\\.[0-9]+|\\.dev[0-9]+)?")')
PACKAGE_VERSIONS="$CRATES
@chatwire/protocol $(python3 -c 'import json; print(json.load(open("tools/npm/package.json"))["version"])')
chatwire(pyproject.toml) $(sed -n 's/^version = "\(.*\)"$/\1/p' tools/python/pyproject.toml)
chatwire.__version__ $(sed -n 's/^__version__ = "\(.*\)"$/\1/p' tools/python/src/chatwire/__init__.py)"
while read -r name version; do
  [[ "$version" =~ ^${PROTOCOL//./\\.}\.(0|[1-9][0-9]*)${PRERELEASE}$ ]] ||
    fail "$name is version '$version', not a release of protocol $PROTOCOL ($PROTOCOL.PATCH)"
  echo "$name $version"
done <<<"$PACKAGE_VERSIONS"

step "cargo package"
PACKAGE_ARGS=()
while read -r name _; do PACKAGE_ARGS+=(-p "$name"); done <<<"$CRATES"
# Verified below by installing from the packages, against the packaged dependencies.
cargo package --locked --no-verify --allow-dirty "${PACKAGE_ARGS[@]}"

step "unpack the packages outside the repository"
PATCHES=""
MEMBERS=""
while read -r name version; do
  # --touch: packaged files carry a fixed old mtime, and the unpack path is reused from run to run;
  # with it, cargo could take a build of the previous run's package for a fresh one.
  tar --touch -xzf "$CARGO_TARGET_DIR/package/$name-$version.crate" -C "$WORK"
  PATCHES+="$name = { path = \"$name-$version\" }"$'\n'
  MEMBERS+="\"$name-$version\", "
done <<<"$CRATES"
CONFORMANCE_DIR=$(ls -d "$WORK"/chatwire-conformance-*/)
SCHEMA_DIR=$(ls -d "$WORK"/chatwire-schema-*/)

# What the crates embed must be inside their packages.
for file in schema/json/*.json schema/asyncapi.json; do
  [ -f "$SCHEMA_DIR/${file#schema/}" ] || fail "the chatwire-schema package lacks ${file#schema/}"
done
for file in fixtures/scenarios/*.json fixtures/snapshots/*.snap; do
  copy="$CONFORMANCE_DIR/${file#fixtures/}"
  cmp -s "$file" "$copy" || fail "the chatwire-conformance package lacks ${file#fixtures/} or holds a stale copy"
done
for file in spec/*.md; do
  cmp -s "$file" "$SCHEMA_DIR/$file" || fail "the chatwire-schema package lacks $file or holds a stale copy"
done

# A workspace around the unpacked packages: their dependencies on each other resolve to the
# packages (as they will to the registry once published), with the repository's lock file and
# dependency profile, so that the dependencies already built by the tests are reused.
cat >"$WORK/Cargo.toml" <<EOF
[workspace]
resolver = "2"
members = [$MEMBERS]

[patch.crates-io]
$PATCHES
$(sed -n '/^\[profile/,$p' Cargo.toml)
EOF
cp Cargo.lock "$WORK/Cargo.lock"

step "what the repository's runner lists"
# The repository's runner embeds fixtures/ and spec/ themselves. Captured before the install,
# which builds into the same target directory.
cargo run -q --locked -p chatwire-conformance -- list >"$WORK/repo-list.txt"
cargo run -q --locked -p chatwire-conformance -- requirements >"$WORK/repo-requirements.txt"

step "cargo install chatwire-conformance from its package"
in_work cargo install --locked --debug --path "$CONFORMANCE_DIR" --root "$WORK/root"
INSTALLED="$WORK/root/bin/chatwire-conformance"
[ -x "$INSTALLED" ] || fail "$INSTALLED was not installed"
cmp -s Cargo.lock "$WORK/Cargo.lock" || fail "installing from the packages changed Cargo.lock"

step "the installed runner has every scenario and requirement of the repository"
in_work "$INSTALLED" list >"$WORK/installed-list.txt"
in_work "$INSTALLED" requirements >"$WORK/installed-requirements.txt"
# A scenario's id is its file name (conformance/src/scenario.rs): every file must be listed.
(cd fixtures/scenarios && ls -- *.json | sed 's/\.json$//' | sort) >"$WORK/scenario-files.txt"
tail -n +2 "$WORK/installed-list.txt" | grep -oE '^[a-z][a-z0-9-]*' | sort >"$WORK/installed-ids.txt"
diff -u "$WORK/scenario-files.txt" "$WORK/installed-ids.txt" ||
  fail "the installed runner's scenarios are not those of fixtures/scenarios"
LISTED=$(wc -l <"$WORK/installed-ids.txt")
diff -u "$WORK/repo-list.txt" "$WORK/installed-list.txt" || fail "the installed runner's scenarios differ from the repository's"
diff -u "$WORK/repo-requirements.txt" "$WORK/installed-requirements.txt" ||
  fail "the installed runner's requirements differ from the repository's spec"
echo "$LISTED scenarios, $(grep -c . "$WORK/installed-requirements.txt") requirement lines: identical"

step "the installed runner passes a snapshot scenario against its bundled reference backend"
in_work "$INSTALLED" run --scenario hitl-submit

# Builds in the workspace of packages below run --offline, not --locked: the packaged
# chatwire-reference no longer has its path-only dev-dependency on chatwire-conformance (cargo strips
# it), so that workspace's lock loses exactly that edge; --offline keeps every version of Cargo.lock.
step "a second build of the packages compiles nothing"
# A build script that watched a path missing from the package would rerun, and rebuild every crate
# depending on it, on each build of a user's project.
in_work cargo build --offline -p chatwire-conformance 2>"$WORK/rebuild.err"
if grep -E '^\s+Compiling' "$WORK/rebuild.err"; then
  fail "building the unchanged packages again recompiled them"
fi

step "a package without its embedded files does not build"
must_not_build() {
  local what=$1 says=$2
  if in_work cargo build -q --offline -p chatwire-conformance 2>"$WORK/build.err"; then
    fail "the chatwire-conformance package builds without $what"
  fi
  grep -qF "$says" "$WORK/build.err" || { cat "$WORK/build.err" >&2; fail "the failed build does not say: $says"; }
  echo "without $what: the build fails ($says)"
}
mv "$CONFORMANCE_DIR/scenarios" "$WORK/scenarios.moved"
mkdir "$CONFORMANCE_DIR/scenarios"
must_not_build "scenarios" "holds no .json file"
rm -r "$CONFORMANCE_DIR/scenarios" && mv "$WORK/scenarios.moved" "$CONFORMANCE_DIR/scenarios"
mv "$CONFORMANCE_DIR/snapshots" "$WORK/snapshots.moved"
must_not_build "snapshots" "cannot read"
mv "$WORK/snapshots.moved" "$CONFORMANCE_DIR/snapshots"
rm -r "$SCHEMA_DIR/spec"
must_not_build "spec text" "no spec text"
