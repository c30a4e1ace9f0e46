#!/usr/bin/env bash
# CTest `package_install`: the Debian package and `cmake --install`, end to end.
#
#   test_package.sh BUILD_DIR SCRATCH_DIR VERSION LIBDIR MANIFEST_NAME CMAKE CPACK VULKANINFO
#
#  1. cpack builds the .deb from BUILD_DIR (as scripts/package.sh does) into SCRATCH_DIR;
#     its name, control fields (dependencies included) and file list are checked, and
#     the manifest inside must name /usr/LIBDIR/libcoopvk_icd.so.
#  2. `cmake --install --prefix` and `DESTDIR=... cmake --install --prefix`: only the
#     three files, the manifest naming the library under the prefix (never DESTDIR).
#  3. Control: with an empty environment (no VK_DRIVER_FILES, whatever CTest or the shell
#     set) the system's loader must not already find a coopvk; if it does, an installed
#     coopvk would hide what this test checks, and it is skipped (code 77).
#  4. The package's usr/ is laid over /usr with overlayfs in a private mount namespace
#     (unshare; the real /usr is never written), so the real loader finds the manifest in
#     /usr/share/vulkan/icd.d exactly as after `apt install ./coopvk_*.deb`, and
#     vulkaninfo --summary and the installed coopvk-info run with an empty environment.
#     Where no mount namespace can be had (a container without CAP_SYS_ADMIN and without
#     user namespaces) it says so and falls back to the unpacked package with a copy of
#     its manifest whose library_path names the unpacked library, found through
#     XDG_DATA_DIRS. (COOPVK_PACKAGE_TEST_NO_NAMESPACE=1 takes that path on purpose.)
#  5. The `cmake --install --prefix` tree: found through XDG_DATA_DIRS alone.
set -euo pipefail

[ $# -eq 8 ] || { echo "usage: $0 BUILD SCRATCH VERSION LIBDIR MANIFEST CMAKE CPACK VULKANINFO" >&2; exit 2; }
BUILD=$1 SCRATCH=$2 VERSION=$3 LIBDIR=$4 MANIFEST=$5 CMAKE=$6 CPACK=$7 VULKANINFO=$8
LIB=libcoopvk_icd.so

fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
note() { printf '%s\n' "$*"; }
# show FILE: prints a log into the test's output (CTest keeps it on failure).
show() { sed 's/^/  | /' "$1" >&2; }
# clean_env CMD...: CMD with nothing from the caller's environment, so no VK_DRIVER_FILES
# or VK_ICD_FILENAMES (nor XDG_* or a HOME with ~/.local/share/vulkan) can point the
# loader anywhere; LC_ALL=C for stable messages.
clean_env() { env -i PATH=/usr/bin:/bin HOME="$SCRATCH/home" LC_ALL=C "$@"; }
# library_path JSON: the manifest's library_path.
library_path() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ICD"]["library_path"])' "$1"
}
# names_coopvk LOG: vulkaninfo's summary lists a device whose driver is coopvk.
names_coopvk() { grep -Eq 'driverName *= coopvk$' "$1"; }

rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/home"

# ---- 1. the package ---------------------------------------------------------------------
arch=$(dpkg --print-architecture)
"$CPACK" --config "$BUILD/CPackConfig.cmake" -G DEB -B "$SCRATCH/dist" >"$SCRATCH/cpack.log" 2>&1 \
  || { show "$SCRATCH/cpack.log"; fail "cpack failed"; }
deb="$SCRATCH/dist/coopvk_${VERSION}_${arch}.deb"
[ -f "$deb" ] || { ls -l "$SCRATCH/dist" >&2; fail "cpack did not write $(basename "$deb")"; }
note "package: $(basename "$deb") ($(stat -c %s "$deb") bytes)"

dpkg-deb -f "$deb" >"$SCRATCH/control"
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = coopvk ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$VERSION" ] || fail "Version is '$(field Version)', not $VERSION"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture is '$(field Architecture)', not $arch"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
[ -n "$(field Description)" ] || fail "no Description"
depends=$(field Depends)
# the package names in the comma-separated list, without versions
dep_names=$(printf '%s\n' "$depends" | tr ',' '\n' | awk '{ print $1 }')
for dep in libc6 libstdc++6 libllvm19 libvulkan1; do
  printf '%s\n' "$dep_names" | grep -qxF "$dep" \
    || { show "$SCRATCH/control"; fail "Depends lacks $dep: $depends"; }
done
note "depends: $depends"

# Exactly these files (plus the directories holding them), nothing else: no static
# libraries, tests or benchmarks.
dpkg-deb -c "$deb" >"$SCRATCH/contents"
want=$(printf '%s\n' "./usr/bin/coopvk-info" "./usr/$LIBDIR/$LIB" "./usr/share/vulkan/icd.d/$MANIFEST" | sort)
got=$(awk '$1 !~ /^d/ { print $6 }' "$SCRATCH/contents" | sort)
[ "$got" = "$want" ] || { show "$SCRATCH/contents"; fail "package files differ from: $(printf '%s\n' "$want" | tr '\n' ' ')"; }
awk '$1 !~ /^d/ && $2 != "root/root" { bad = 1 } END { exit bad }' "$SCRATCH/contents" \
  || { show "$SCRATCH/contents"; fail "files not owned by root/root"; }

ROOTFS="$SCRATCH/root"
dpkg -x "$deb" "$ROOTFS"
lp=$(library_path "$ROOTFS/usr/share/vulkan/icd.d/$MANIFEST")
[ "$lp" = "/usr/$LIBDIR/$LIB" ] || fail "the package's manifest names '$lp', not /usr/$LIBDIR/$LIB"

# ---- 2. cmake --install -----------------------------------------------------------------
# (It runs the same install rules as cpack, from this build tree.)
PREFIX="$SCRATCH/prefix"
"$CMAKE" --install "$BUILD" --prefix "$PREFIX" >"$SCRATCH/install.log" 2>&1 \
  || { show "$SCRATCH/install.log"; fail "cmake --install --prefix failed"; }
want=$(printf '%s\n' "bin/coopvk-info" "$LIBDIR/$LIB" "share/vulkan/icd.d/$MANIFEST" | sort)
got=$(cd "$PREFIX" && find . ! -type d | sed 's|^\./||' | sort)
[ "$got" = "$want" ] || { show "$SCRATCH/install.log"; fail "cmake --install installed: $(printf '%s\n' "$got" | tr '\n' ' ')"; }
lp=$(library_path "$PREFIX/share/vulkan/icd.d/$MANIFEST")
[ "$lp" = "$PREFIX/$LIBDIR/$LIB" ] || fail "cmake --install --prefix: manifest names '$lp'"
DESTDIR="$SCRATCH/destdir" "$CMAKE" --install "$BUILD" --prefix /opt/coopvk >"$SCRATCH/install-destdir.log" 2>&1 \
  || { show "$SCRATCH/install-destdir.log"; fail "DESTDIR=... cmake --install failed"; }
lp=$(library_path "$SCRATCH/destdir/opt/coopvk/share/vulkan/icd.d/$MANIFEST")
[ "$lp" = "/opt/coopvk/$LIBDIR/$LIB" ] || fail "DESTDIR install: manifest names '$lp', not /opt/coopvk/$LIBDIR/$LIB"
note "cmake --install: 3 files; library_path $PREFIX/$LIBDIR/$LIB (and /opt/coopvk/... under DESTDIR)"

# ---- 3. control: no coopvk without the package ------------------------------------------
clean_env "$VULKANINFO" --summary >"$SCRATCH/control-vulkaninfo.log" 2>&1 || true
if names_coopvk "$SCRATCH/control-vulkaninfo.log"; then
  found=$(grep -ls coopvk /etc/xdg/vulkan/icd.d/* /etc/vulkan/icd.d/* /usr/local/share/vulkan/icd.d/* \
            /usr/share/vulkan/icd.d/* 2>/dev/null | tr '\n' ' ' || true)
  note "SKIP: the system's loader already finds a coopvk (${found:-manifest not found}); uninstall it"
  note "(apt remove coopvk, or delete that manifest) for this test to show the package's own."
  exit 77
fi

# ---- 4. the package over /usr, as after apt install ---------------------------------------
# in_ns CMD...: CMD in a private mount namespace with the unpacked package's usr/ over /usr.
# As root a plain mount namespace; otherwise a user namespace maps us to root in it.
ns_flags=()
# shellcheck disable=SC2016  # $1, $2: the inner sh's arguments
ns_probe() {
  unshare "$@" --mount --propagation private -- sh -c \
    'mount -t overlay overlay -o ro,lowerdir="$1/usr":/usr /usr && test -f /usr/share/vulkan/icd.d/"$2"' \
    sh "$ROOTFS" "$MANIFEST" 2>"$SCRATCH/unshare.log"
}
if [ -n "${COOPVK_PACKAGE_TEST_NO_NAMESPACE:-}" ]; then
  ns_flags=(none); echo "COOPVK_PACKAGE_TEST_NO_NAMESPACE is set" >"$SCRATCH/unshare.log"
elif [ "$(id -u)" = 0 ] && ns_probe; then ns_flags=()
elif ns_probe --user --map-root-user; then ns_flags=(--user --map-root-user)
else ns_flags=(none)
fi
# shellcheck disable=SC2016
in_ns() {
  unshare "${ns_flags[@]}" --mount --propagation private -- sh -c \
    'mount -t overlay overlay -o ro,lowerdir="$1/usr":/usr /usr && shift && exec "$@"' sh "$ROOTFS" "$@"
}

if [ "${ns_flags[*]}" != none ]; then
  note "installed copy: the package's usr/ over /usr (overlayfs, unshare ${ns_flags[*]}${ns_flags[*]:+ }--mount)"
  in_ns env -i PATH=/usr/bin:/bin HOME="$SCRATCH/home" LC_ALL=C VK_LOADER_DEBUG=driver \
      /usr/bin/vulkaninfo --summary >"$SCRATCH/vulkaninfo.log" 2>&1 \
    || { show "$SCRATCH/vulkaninfo.log"; fail "vulkaninfo --summary failed with the package over /usr"; }
  names_coopvk "$SCRATCH/vulkaninfo.log" \
    || { show "$SCRATCH/vulkaninfo.log"; fail "vulkaninfo --summary does not list coopvk with the package over /usr"; }
  # The loader took it from the system directory, as it will after apt install.
  grep -q "/usr/share/vulkan/icd.d/$MANIFEST" "$SCRATCH/vulkaninfo.log" \
    || { show "$SCRATCH/vulkaninfo.log"; fail "the loader did not report reading /usr/share/vulkan/icd.d/$MANIFEST"; }
  in_ns env -i PATH=/usr/bin:/bin HOME="$SCRATCH/home" LC_ALL=C \
      /usr/bin/coopvk-info >"$SCRATCH/coopvk-info.log" 2>&1 \
    || { show "$SCRATCH/coopvk-info.log"; fail "the installed coopvk-info failed"; }
else
  note "NOTE: no mount namespace here ($(head -n1 "$SCRATCH/unshare.log")); falling back to the"
  note "unpacked package with a copy of its manifest pointing at the unpacked library."
  mkdir -p "$SCRATCH/fallback/vulkan/icd.d"
  sed "s|\"library_path\": *\"[^\"]*\"|\"library_path\": \"$ROOTFS/usr/$LIBDIR/$LIB\"|" \
    "$ROOTFS/usr/share/vulkan/icd.d/$MANIFEST" >"$SCRATCH/fallback/vulkan/icd.d/$MANIFEST"
  clean_env XDG_DATA_DIRS="$SCRATCH/fallback" "$VULKANINFO" --summary >"$SCRATCH/vulkaninfo.log" 2>&1 \
    || { show "$SCRATCH/vulkaninfo.log"; fail "vulkaninfo --summary failed on the unpacked package"; }
  names_coopvk "$SCRATCH/vulkaninfo.log" \
    || { show "$SCRATCH/vulkaninfo.log"; fail "vulkaninfo --summary does not list the unpacked package's coopvk"; }
  clean_env XDG_DATA_DIRS="$SCRATCH/fallback" "$ROOTFS/usr/bin/coopvk-info" >"$SCRATCH/coopvk-info.log" 2>&1 \
    || { show "$SCRATCH/coopvk-info.log"; fail "the unpacked coopvk-info failed"; }
fi
grep -q 'round trip.*: ok' "$SCRATCH/coopvk-info.log" \
  || { show "$SCRATCH/coopvk-info.log"; fail "coopvk-info did not report its round trip ok"; }
note "vulkaninfo --summary: $(grep -E 'deviceName|driverName' "$SCRATCH/vulkaninfo.log" | tr -s ' ' | tr '\n' ';')"
note "coopvk-info: $(grep 'round trip' "$SCRATCH/coopvk-info.log")"

# ---- 5. the cmake --install tree, found through XDG_DATA_DIRS ---------------------------
clean_env XDG_DATA_DIRS="$PREFIX/share" "$VULKANINFO" --summary >"$SCRATCH/vulkaninfo-prefix.log" 2>&1 \
  || { show "$SCRATCH/vulkaninfo-prefix.log"; fail "vulkaninfo --summary failed on the cmake --install tree"; }
names_coopvk "$SCRATCH/vulkaninfo-prefix.log" \
  || { show "$SCRATCH/vulkaninfo-prefix.log"; fail "vulkaninfo does not list the cmake --install tree's coopvk"; }
note "ok"
