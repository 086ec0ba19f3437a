#!/usr/bin/env bash
# Build (or fetch from the cache) the small sched_ext guest kernel.
#
#   scx/guest/build-kernel.sh                # prints the cache directory on stdout
#   scx/guest/build-kernel.sh --cached-only  # the same, or exit 1 if not cached
#
# Source: Debian's linux-source-6.12 (/usr/src/linux-source-6.12.tar.xz), unpacked under
# $SCX_CACHE (default /var/cache/schedlab-scx) at a fixed path so ccache hits survive.
# Config: tinyconfig + kvm_guest.config + kernel.config (this directory), olddefconfig.
# The result (bzImage, vmlinux.h, .config) is cached in $SCX_CACHE/kernel-<key>, key =
# hash(linux-source version, kernel.config, this script's CONFIG_STEPS); a warm run only
# checks that the directory is complete.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${SCX_CACHE:-/var/cache/schedlab-scx}"
jobs="${SCX_JOBS:-$(nproc)}"
log() { printf 'build-kernel: %s\n' "$*" >&2; }

tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || { log "error: $tarball missing (apt-get install linux-source-6.12)"; exit 1; }
version="$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || stat -c %s "$tarball")"
# Bump when the way the config is produced changes (not only the fragment).
CONFIG_STEPS=1
key="$( { echo "$version"; echo "steps=$CONFIG_STEPS"; cat "$here/kernel.config"; } | sha256sum | cut -c1-16)"
out="$cache/kernel-$key"
if [ -s "$out/bzImage" ] && [ -s "$out/vmlinux.h" ] && [ -s "$out/config" ]; then
    log "cached: $out (linux-source $version)"
    echo "$out"
    exit 0
fi
if [ "${1:-}" = --cached-only ]; then
    exit 1
fi

mkdir -p "$cache"
src="$cache/linux-source-6.12"
stamp="$cache/linux-source-6.12.version"
if [ ! -f "$src/Makefile" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$version" ]; then
    log "unpacking $tarball"
    rm -rf "$src"
    tar -C "$cache" -xf "$tarball"
    echo "$version" >"$stamp"
fi

cc=gcc
if command -v ccache >/dev/null 2>&1; then
    export CCACHE_DIR="${CCACHE_DIR:-$cache/ccache}"
    export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-3G}"
    cc="ccache gcc"
fi
mk() { make -C "$src" ARCH=x86_64 CC="$cc" HOSTCC=gcc "$@"; }

t0=$(date +%s)
log "configuring (tinyconfig + kvm_guest.config + kernel.config)"
mk -s tinyconfig
mk -s kvm_guest.config
"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "$here/kernel.config" >/dev/null
mk -s olddefconfig
for opt in SCHED_CLASS_EXT DEBUG_INFO_BTF BPF_EVENTS BPF_JIT SMP ACPI; do
    v="$("$src/scripts/config" --file "$src/.config" -s "$opt")"
    if [ "$v" != y ]; then
        log "error: CONFIG_$opt is '$v' after olddefconfig (a dependency is missing)"
        exit 1
    fi
done
log "CONFIG_SCHED_CLASS_EXT=y; building bzImage with -j$jobs"
mk -s -j"$jobs" bzImage
t1=$(date +%s)
log "kernel built in $((t1 - t0)) s"

# vmlinux.h for the BPF schedulers comes from this kernel's BTF (the host has no
# sched_ext). tools/sched_ext builds its own libbpf and bpftool and generates vmlinux.h from
# the tree's vmlinux; building its scx_simple checks the BPF toolchain end to end.
tools="$cache/scx-tools"
mkdir -p "$tools"
make -s -C "$src/tools/sched_ext" CLANG=clang-19 O="$tools" scx_simple >&2
tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
cp "$src/arch/x86/boot/bzImage" "$tmp/bzImage"
cp "$src/.config" "$tmp/config"
cp "$tools/build/include/vmlinux.h" "$tmp/vmlinux.h"
echo "$version" >"$tmp/linux-source-version"
rm -rf "$out"
mv "$tmp" "$out"
log "cached in $out"
echo "$out"
