#!/usr/bin/env bash
# Runs the test suite (`npm test`, arguments passed on) on Node 22, the LTS before Node 24, in this
# checkout (scripts/ci/node-tests.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/ci/lib.sh
exec bash scripts/ci/node-tests.sh "$NODE22_VERSION" "$@"
