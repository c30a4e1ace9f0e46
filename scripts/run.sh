#!/usr/bin/env bash
# The main job: set up, build, and run coopvk-info through the system Vulkan loader.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${COOPVK_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
VK_DRIVER_FILES="$BUILD/coopvk_icd.json" VK_ICD_FILENAMES="$BUILD/coopvk_icd.json" \
  exec "$BUILD/tools/coopvk-info" "$@"
