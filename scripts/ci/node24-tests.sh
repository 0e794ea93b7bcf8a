#!/usr/bin/env bash
# Runs the test suite (`npm test`, arguments passed on) on Node 24, the Active LTS, in this checkout
# (scripts/ci/node-tests.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/ci/lib.sh
exec bash scripts/ci/node-tests.sh "$NODE24_VERSION" "$@"
