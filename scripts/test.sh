#!/usr/bin/env bash
# Set up, build, and run every test (unit and end-to-end through the real loader).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${COOPVK_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
cd "$BUILD"
exec ctest --output-on-failure -j"$(nproc)" --timeout 600 "$@"
