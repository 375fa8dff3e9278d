#!/usr/bin/env bash
# The Chatwire conformance check of one backend: installs the runner (from its wheel when given),
# runs the suite against the backend the runner starts with --exec, writes the JSON report, the
# JUnit file and the HTML page with its badges, and fails on a conformance failure at the chosen
# level. It is the whole logic of the GitHub Action beside it (action.yml only maps inputs to these
# variables and uploads what it writes), and .ci/run runs it against the Python template.
#
# Inputs (environment):
#   CHATWIRE_EXEC          required: the command that starts one backend instance ({port}, {db})
#   CHATWIRE_PLAIN_EXEC    the same without its conformance switch (else those scenarios are n/a)
#   CHATWIRE_VERSIONS      the versions the runner offers, e.g. "1.0" (default: every one, newest first)
#   CHATWIRE_LEVEL         "must" (default): fail on a MUST failure; "should": also on a SHOULD not met
#   CHATWIRE_NAME          what the report calls the backend (default: "backend")
#   CHATWIRE_OUT           where to write report.json, junit.xml and html/ (default: chatwire-conformance)
#   CHATWIRE_WHEEL         a runner wheel to install (else chatwire-conformance from PATH or CHATWIRE_RUNNER)
#   CHATWIRE_VENV          the venv the wheel goes into (default: $CHATWIRE_OUT/.venv)
#   CHATWIRE_RUNNER        the runner binary to use when no wheel is given (default: chatwire-conformance)
#   CHATWIRE_JOBS, CHATWIRE_TIMEOUT_SCALE, CHATWIRE_STRICT ("true"), CHATWIRE_SCENARIOS (space-separated globs)
# Exit code: 0 conformant at the level; 1 not; 2 a usage or harness error; 3 the backend did not start.
set -euo pipefail

: "${CHATWIRE_EXEC:?CHATWIRE_EXEC names the command that starts your backend, with {port} and {db}}"
level=${CHATWIRE_LEVEL:-must}
case "$level" in must|should) ;; *) echo "CHATWIRE_LEVEL must be must or should, not $level" >&2; exit 2 ;; esac
out=${CHATWIRE_OUT:-chatwire-conformance}
name=${CHATWIRE_NAME:-backend}
mkdir -p "$out"

runner=${CHATWIRE_RUNNER:-chatwire-conformance}
if [ -n "${CHATWIRE_WHEEL:-}" ]; then
  venv=${CHATWIRE_VENV:-$out/.venv}
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "$CHATWIRE_WHEEL"
  runner="$venv/bin/chatwire-conformance"
fi
"$runner" --version

args=(run --exec "$CHATWIRE_EXEC" --junit "$out/junit.xml" --report-json "$out/report.json")
[ -z "${CHATWIRE_PLAIN_EXEC:-}" ] || args+=(--plain-exec "$CHATWIRE_PLAIN_EXEC")
[ -z "${CHATWIRE_VERSIONS:-}" ] || args+=(--versions "$CHATWIRE_VERSIONS")
[ -z "${CHATWIRE_JOBS:-}" ] || args+=(--jobs "$CHATWIRE_JOBS")
[ -z "${CHATWIRE_TIMEOUT_SCALE:-}" ] || args+=(--timeout-scale "$CHATWIRE_TIMEOUT_SCALE")
[ "${CHATWIRE_STRICT:-false}" != true ] || args+=(--strict)
for glob in ${CHATWIRE_SCENARIOS:-}; do args+=(--scenario "$glob"); done

status=0
"$runner" "${args[@]}" || status=$?
if [ -f "$out/report.json" ]; then
  "$runner" report --html "$out/html" --name "$name" "$out/report.json"
  if [ "$status" = 0 ] && [ "$level" = should ]; then
    # A SHOULD not met is a `warn` verdict: it does not fail the run, but it fails this level.
    warned=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["warn"])' "$out/report.json")
    if [ "$warned" != 0 ]; then
      echo "level should: $warned scenario(s) warned (a SHOULD not met); see $out/html/index.html" >&2
      status=1
    fi
  fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  { echo "exit-code=$status"; echo "report=$out/report.json"; echo "junit=$out/junit.xml"; echo "html=$out/html"; } >>"$GITHUB_OUTPUT"
fi
case "$status" in
  0) echo "chatwire conformance ($level): pass; the page is $out/html/index.html" ;;
  1) echo "chatwire conformance ($level): FAIL; the failures are in $out/html/index.html" >&2 ;;
  *) echo "chatwire conformance: the runner could not judge the backend (exit $status)" >&2 ;;
esac
exit "$status"
