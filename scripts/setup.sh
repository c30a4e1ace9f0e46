#!/usr/bin/env bash
# Installs everything coopvk needs on a Debian 12 (bookworm) machine, as root.
# Idempotent: a second run on a set-up machine only checks and takes seconds.
#
#  * bookworm packages: through the system's apt, as configured (never edited).
#  * newer packages (Vulkan-Headers/vk.xml, SPIRV-Headers/grammar, xsimd from sid; Catch2 3
#    from bookworm-backports): `apt-get download` through a private apt state and source
#    list under third_party/apt, .debs cached in ${XDG_CACHE_HOME:-~/.cache}/coopvk, and
#    unpacked with `dpkg -x` into third_party/prefix (git-ignored).
#  * `--bench` (optional, for scripts/bench.sh only): Mesa lavapipe and sid's Vulkan loader,
#    plus every library they need that this system lacks or has too old, unpacked into
#    third_party/sid-bench and run through sid-root's dynamic loader (bin/sid-run there).
set -euo pipefail

WANT_BENCH=0
for arg in "$@"; do
  case $arg in
    --bench) WANT_BENCH=1 ;;
    *) printf 'setup: ERROR: unknown argument %s (only --bench)\n' "$arg" >&2; exit 2 ;;
  esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TP="$ROOT/third_party"
PREFIX="$TP/prefix"
APTDIR="$TP/apt"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/coopvk/debs"
STAMP="$PREFIX/.unpacked"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs Debian packages)"
command -v apt-get >/dev/null || die "this script needs Debian's apt-get"

# ---- 1. bookworm packages -------------------------------------------------------------
# dpkg-dev (dpkg-shlibdeps) and file: CPack reads the .deb's dependencies off its ELF
# files with them. mount: the package test lays the package over /usr with overlayfs in a
# mount namespace (unshare, from util-linux, which Debian always has).
SYSTEM_PKGS=(build-essential cmake ninja-build ccache python3 pkg-config git
             llvm-19-dev libvulkan1 vulkan-tools zlib1g-dev libzstd-dev libedit-dev
             libxml2-dev libffi-dev libncurses-dev dpkg-dev file mount)
missing=()
for p in "${SYSTEM_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing bookworm packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -x /usr/lib/llvm-19/bin/llvm-config ] || die "llvm-19-dev did not install /usr/lib/llvm-19/bin/llvm-config"

# ---- 2. newer packages from sid / bookworm-backports ------------------------------------
# name/suite pairs: the suite is pinned so a package never drifts to another release.
NEWER_PKGS=(
  libvulkan-dev/sid            # Vulkan-Headers + registry/vk.xml (headers only; the loader is bookworm's)
  spirv-headers/sid            # SPIRV-Headers + spirv.core.grammar.json
  libxsimd-dev/sid             # xsimd (header-only)
  xtl-dev/sid                  # needed by xsimd's CMake config
  libcatch2-dev/bookworm-backports  # Catch2 3 built for bookworm's toolchain
)
# Sid's shader tools need sid's C library: they go to a root of their own and run through
# that root's dynamic loader (wrappers in $SIDROOT/bin), never touching the system's.
TOOL_PKGS=(
  glslang-tools/sid spirv-tools/sid
  libc6/sid libstdc++6/sid libgcc-s1/sid gcc-16-base/sid libc-gconv-modules-extra/sid
)
SIDROOT="$TP/sid-root"
TOOL_STAMP="$SIDROOT/.unpacked"

APT_OPTS=(-o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Etc::sourcelist=$APTDIR/sources.list"
          -o "Dir::Etc::sourceparts=-" -o "Dir::State::status=/dev/null"
          -o "Dir::Cache=$APTDIR/cache" -o "APT::Sandbox::User=root")
apt_ready=0
# ensure_apt_state: the private source list and package lists, updated once per run.
ensure_apt_state() {
  [ $apt_ready = 1 ] && return 0
  mkdir -p "$CACHE" "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"
  cat > "$APTDIR/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-backports main
SRC
  apt-get "${APT_OPTS[@]}" update -qq || die "private apt update (sid, bookworm-backports) failed"
  apt_ready=1
}
# fetch_debs PKG/SUITE...: makes sure each package's .deb is in $CACHE.
fetch_debs() {
  local need=() spec name
  for spec in "$@"; do
    name=${spec%%/*}
    ls "$CACHE/${name}"_*.deb >/dev/null 2>&1 || need+=("$spec")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  ensure_apt_state
  say "downloading into $CACHE: ${need[*]}"
  (cd "$CACHE" && apt-get "${APT_OPTS[@]}" download "${need[@]}" >/dev/null) \
    || die "apt-get download failed for: ${need[*]}"
}
# unpack_debs DIR PKG/SUITE...: fresh DIR with each package's newest cached .deb inside.
unpack_debs() {
  local dir=$1 spec name deb
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  for spec in "$@"; do
    name=${spec%%/*}
    deb=$(ls -t "$CACHE/${name}"_*.deb | head -n1)
    say "unpacking $(basename "$deb")"
    dpkg -x "$deb" "$dir"
  done
}

want_key=$(printf '%s\n' "${NEWER_PKGS[@]}" | sha1sum | cut -c1-16)
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want_key" ]; then
  fetch_debs "${NEWER_PKGS[@]}"
  unpack_debs "$PREFIX" "${NEWER_PKGS[@]}"
  echo "$want_key" > "$STAMP"
fi

tool_key=$(printf '%s\n' "${TOOL_PKGS[@]}" v2 | sha1sum | cut -c1-16)
if [ ! -f "$TOOL_STAMP" ] || [ "$(cat "$TOOL_STAMP")" != "$tool_key" ]; then
  fetch_debs "${TOOL_PKGS[@]}"
  unpack_debs "$SIDROOT" "${TOOL_PKGS[@]}"
  mkdir -p "$SIDROOT/bin"
  for tool in glslangValidator glslang spirv-as spirv-val spirv-dis spirv-opt spirv-link; do
    [ -x "$SIDROOT/usr/bin/$tool" ] || continue
    cat > "$SIDROOT/bin/$tool" <<WRAP
#!/bin/sh
# Runs sid's $tool with sid's own C library (Debian 12's is too old for it).
R="\$(cd "\$(dirname "\$0")/.." && pwd)"
L="\$R/usr/lib/x86_64-linux-gnu"
exec "\$L/ld-linux-x86-64.so.2" --library-path "\$L:\$R/lib/x86_64-linux-gnu" "\$R/usr/bin/$tool" "\$@"
WRAP
    chmod +x "$SIDROOT/bin/$tool"
  done
  echo "$tool_key" > "$TOOL_STAMP"
fi

# ---- 2b. (--bench) lavapipe from sid, beside the system ---------------------------------
# The closure of mesa-vulkan-drivers + libvulkan1 in sid (Depends/Pre-Depends, recursively),
# minus what sid-root already holds (libc6, libstdc++6, ...), minus every package the system
# has installed at a version that meets each versioned dependency on it inside the closure.
# The rest is unpacked into its own root so a re-unpack of sid-root never loses it.
BENCHROOT="$TP/sid-bench"
BENCH_STAMP="$BENCHROOT/.unpacked"
# bench_pkgs: prints the PKG/sid list to fetch, one per line.
bench_pkgs() {
  local closure deps p have ok op ver line
  closure=$(apt-cache "${APT_OPTS[@]}" depends --recurse --no-recommends --no-suggests \
              --no-conflicts --no-breaks --no-replaces --no-enhances mesa-vulkan-drivers libvulkan1 \
            | grep -v '^ ' | sed 's/:.*//' | sort -u)
  # one "name op version" line per versioned dependency inside the closure (first alternative)
  deps=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions $closure \
         | sed -n 's/^\(Pre-\)\{0,1\}Depends: //p' | tr ',' '\n' | sed 's/|.*//' \
         | sed -n 's/^ *\([^ :(]*\)\(:[a-z]*\)\{0,1\} *(\([<>=]*\) *\([^)]*\)).*/\1 \3 \4/p')
  for p in $closure; do
    case " ${TOOL_PKGS[*]} " in *" $p/sid "*) continue ;; esac
    if [ "$p" != libvulkan1 ] && [ "$p" != mesa-vulkan-drivers ]; then
      have=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null \
             | sed -n 's/^install ok installed //p' || true)
      if [ -n "$have" ]; then
        ok=1
        while read -r _ op ver; do
          case $op in '>>') op=gt ;; '>=') op=ge ;; '=') op=eq ;; '<=') op=le ;; '<<') op=lt ;; *) continue ;; esac
          dpkg --compare-versions "$have" "$op" "$ver" || ok=0
        done < <(printf '%s\n' "$deps" | awk -v p="$p" '$1 == p')
        [ $ok = 1 ] && continue
      fi
    fi
    echo "$p/sid"
  done
}
if [ $WANT_BENCH = 1 ]; then
  # gnuplot (bookworm's, no X) draws scripts/bench.sh's cooperative-matrix GEMM chart
  if ! dpkg-query -W -f='${Status}' gnuplot-nox 2>/dev/null | grep -q '^install ok installed$'; then
    say "installing bookworm package: gnuplot-nox"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null
  fi
  # resolve from the lists of an earlier run when there are some (fetch_debs updates them
  # before it downloads anything), so a set-up machine does no network round trip
  ls "$APTDIR"/lists/*sid*Packages* >/dev/null 2>&1 || ensure_apt_state
  mapfile -t BENCH_PKGS < <(bench_pkgs)
  [ ${#BENCH_PKGS[@]} -gt 0 ] || die "could not resolve mesa-vulkan-drivers in sid"
  bench_key=$(printf '%s\n' "${BENCH_PKGS[@]}" v1 | sha1sum | cut -c1-16)
  if [ ! -f "$BENCH_STAMP" ] || [ "$(cat "$BENCH_STAMP")" != "$bench_key" ]; then
    fetch_debs "${BENCH_PKGS[@]}"
    unpack_debs "$BENCHROOT" "${BENCH_PKGS[@]}"
    mkdir -p "$BENCHROOT/bin"
    # sid-run PROG ARGS...: PROG with sid's C library, sid's Vulkan loader and lavapipe's libs
    # first, the system's libraries after them.
    cat > "$BENCHROOT/bin/sid-run" <<'WRAP'
#!/bin/sh
# Runs a program through sid's dynamic loader: sid-bench's libraries (lavapipe, sid's Vulkan
# loader, newer LLVM, ...), then sid-root's C/C++ runtime, then the system's libraries.
B="$(cd "$(dirname "$0")/.." && pwd)"
S="$(cd "$B/../sid-root" && pwd)"
exec "$S/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
  --library-path "$B/usr/lib/x86_64-linux-gnu:$S/usr/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu" "$@"
WRAP
    chmod +x "$BENCHROOT/bin/sid-run"
    # lavapipe's manifest names its library by a system path; write a copy that points at
    # the unpacked one.
    lvp_json=$(ls "$BENCHROOT"/usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n1)
    [ -n "$lvp_json" ] || die "mesa-vulkan-drivers has no lvp_icd*.json"
    lvp_so=$(ls "$BENCHROOT"/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so 2>/dev/null | head -n1)
    [ -n "$lvp_so" ] || die "mesa-vulkan-drivers has no libvulkan_lvp.so"
    sed 's|"library_path": *"[^"]*"|"library_path": "'"$lvp_so"'"|' "$lvp_json" > "$BENCHROOT/lvp_icd.json"
    echo "$bench_key" > "$BENCH_STAMP"
  fi
  [ -x /usr/bin/vulkaninfo ] || die "vulkaninfo (vulkan-tools) missing"
  VK_DRIVER_FILES="$BENCHROOT/lvp_icd.json" "$BENCHROOT/bin/sid-run" /usr/bin/vulkaninfo --summary 2>/dev/null \
    | grep -q llvmpipe || die "lavapipe does not enumerate through sid's loader (try: VK_DRIVER_FILES=$BENCHROOT/lvp_icd.json $BENCHROOT/bin/sid-run /usr/bin/vulkaninfo --summary)"
  say "ok: lavapipe $(dpkg-deb -f "$(ls -t "$CACHE"/mesa-vulkan-drivers_*.deb | head -n1)" Version) in $BENCHROOT (manifest lvp_icd.json, runner bin/sid-run)"
fi

# ---- 3. check versions ----------------------------------------------------------------
hdr="$PREFIX/usr/include/vulkan/vulkan_core.h"
[ -f "$hdr" ] || die "Vulkan headers missing at $hdr"
vkver=$(sed -n 's/^#define VK_HEADER_VERSION \([0-9]*\).*/\1/p' "$hdr")
[ "${vkver:-0}" -ge 359 ] || die "Vulkan-Headers 1.4.$vkver is too old; need >= 1.4.359"
[ -f "$PREFIX/usr/share/vulkan/registry/vk.xml" ] || die "vk.xml missing from libvulkan-dev"
grammar="$PREFIX/usr/include/spirv/unified1/spirv.core.grammar.json"
[ -f "$grammar" ] || die "SPIR-V grammar missing at $grammar"
grep -q '"OpCooperativeMatrixReduceEXT"' "$grammar" \
  || die "SPIRV-Headers grammar lacks OpCooperativeMatrixReduceEXT (maintenance1); too old"
xsver=$(sed -n 's/^#define XSIMD_VERSION_MAJOR \([0-9]*\).*/\1/p' "$PREFIX/usr/include/xsimd/config/xsimd_config.hpp")
[ "${xsver:-0}" -ge 13 ] || die "xsimd major version ${xsver:-?} is too old; need >= 13"
[ -f "$PREFIX/usr/lib/cmake/Catch2/Catch2ConfigVersion.cmake" ] || die "Catch2 3 CMake config missing"
grep -q 'PACKAGE_VERSION "3\.' "$PREFIX/usr/lib/cmake/Catch2/Catch2ConfigVersion.cmake" || die "Catch2 is not version 3"
[ -f /usr/lib/x86_64-linux-gnu/libvulkan.so.1 ] || die "the Vulkan loader (libvulkan1) is missing"
glslang_ver=$("$SIDROOT/bin/glslangValidator" --version 2>/dev/null | sed -n 's/^Glslang Version: *[0-9]*:\([0-9]*\).*/\1/p')
[ "${glslang_ver:-0}" -ge 16 ] || die "glslangValidator from sid does not run or is older than 16 (got '${glslang_ver:-none}')"
"$SIDROOT/bin/spirv-val" --version >/dev/null 2>&1 || die "spirv-val from sid does not run"

say "ok: Vulkan-Headers 1.4.$vkver, xsimd $xsver, Catch2 3, LLVM $(/usr/lib/llvm-19/bin/llvm-config --version), glslang $glslang_ver; prefix $PREFIX, tools $SIDROOT/bin"
