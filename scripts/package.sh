#!/usr/bin/env bash
# Builds coopvk's Debian package and prints its path (the only thing on stdout).
#
#   scripts/package.sh                   # as root on Debian 12 (setup installs packages)
#   apt install ./build/coopvk_*.deb     # then `vulkaninfo --summary` lists coopvk
#   apt remove coopvk                    # and it is gone again
#
# Runs scripts/setup.sh, builds the two installed targets (the driver and coopvk-info)
# with scripts/build.sh into ${COOPVK_BUILD_DIR:-build}, then CPack
# (cmake/CoopvkPackage.cmake) there, which writes coopvk_<version>_<arch>.deb beside the
# build. The package holds exactly what `cmake --install` installs, for the prefix /usr:
#   /usr/lib/<multiarch>/libcoopvk_icd.so              the driver
#   /usr/share/vulkan/icd.d/coopvk_icd.<arch>.json     its manifest: the loader finds the
#                                                      driver there with no env variable
#   /usr/bin/coopvk-info                               device report + round trip
# Dependencies (libllvm19, libvulkan1, libc6, libstdc++6, libgcc-s1) are read off the ELF
# files by dpkg-shlibdeps; vulkan-tools is recommended. `ctest -R package_install` checks
# the package (contents, dependencies, and the loader finding it over /usr).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${COOPVK_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh" >&2
"$ROOT/scripts/build.sh" --target coopvk_icd coopvk-info >&2
cd "$BUILD"
rm -f coopvk_*.deb
cpack -G DEB >&2
debs=(coopvk_*.deb)
if [ ! -f "${debs[0]}" ] || [ ${#debs[@]} -ne 1 ]; then
  echo "package: cpack wrote no single coopvk_*.deb in $BUILD" >&2
  exit 1
fi
printf '%s\n' "$BUILD/${debs[0]}"
