#!/usr/bin/env bash
# Configures (once) and builds coopvk into ${COOPVK_BUILD_DIR:-build}.
# Arguments go to `cmake --build` (e.g. --target coopvk_icd coopvk-info); none: everything.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${COOPVK_BUILD_DIR:-$ROOT/build}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja ${COOPVK_CMAKE_ARGS:-}
fi
cmake --build "$BUILD" -j"$(nproc)" "$@"
