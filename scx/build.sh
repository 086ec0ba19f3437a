#!/usr/bin/env bash
# Build schedlab's sched_ext schedulers (scx_illf, scx_llf, scx_edf for periodic tasks,
# scx_bfs and scx_cfsw for fair ones) and their static loader scx_schedlab.
#
#   scx/build.sh            # -> target/scx/{scx_schedlab,*.bpf.o}
#
# Needs clang-19 (bookworm's clang 14 is too old for sched_ext code), gcc, make,
# libelf-dev, zlib1g-dev, libzstd-dev, and a Linux 6.12 source tree for
# tools/sched_ext's headers and its own libbpf and bpftool (Debian's linux-source-6.12,
# unpacked under $SCX_CACHE on first use).
#
# Environment:
#   SCX_CACHE       cache directory (default /var/cache/schedlab-scx)
#   SCX_KERNEL_SRC  kernel source tree (default $SCX_CACHE/linux-source-6.12)
#   SCX_VMLINUX_H   vmlinux.h of the target kernel; default: generated from
#                   /sys/kernel/btf/vmlinux when the running kernel has sched_ext, else
#                   the guest kernel's built by scx/guest/build-kernel.sh (cached)
#   SCX_OUT         output directory (default target/scx in the repository)
#   CLANG           clang for the BPF target (default clang-19)
set -euo pipefail

# Arguments: only -h/--help (print the header above and build nothing). Anything else is
# refused before any work starts, so a mistyped flag never launches a long build.
for arg in "$@"; do
    case "$arg" in
        -h | --help)
            sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *)
            printf 'scx/build: error: unknown argument `%s` (it takes none; see --help)\n' "$arg" >&2
            exit 2
            ;;
    esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cache="${SCX_CACHE:-/var/cache/schedlab-scx}"
src="${SCX_KERNEL_SRC:-$cache/linux-source-6.12}"
out="${SCX_OUT:-$repo/target/scx}"
clang="${CLANG:-clang-19}"
log() { printf 'scx/build: %s\n' "$*" >&2; }

command -v "$clang" >/dev/null || { log "error: $clang not found (apt-get install clang-19 llvm-19)"; exit 1; }

if [ ! -f "$src/tools/sched_ext/Makefile" ]; then
    tarball=/usr/src/linux-source-6.12.tar.xz
    [ -f "$tarball" ] || { log "error: no kernel tree at $src and no $tarball (apt-get install linux-source-6.12)"; exit 1; }
    log "unpacking $tarball into $cache"
    mkdir -p "$cache"
    tar -C "$cache" -xf "$tarball"
    dpkg-query -W -f='${Version}' linux-source-6.12 >"$cache/linux-source-6.12.version" 2>/dev/null || true
fi

mkdir -p "$out/gen"
vmlinux_h="${SCX_VMLINUX_H:-}"

# tools/sched_ext builds libbpf (+ headers) and bpftool. Its Makefile (and bpftool's own
# BPF skeletons) want some kernel BTF: the tree's vmlinux when built, else the host's.
tools="$cache/scx-tools"
libbpf="$tools/build/obj/libbpf/libbpf.a"
bpftool="$tools/build/sbin/bpftool"
if [ ! -x "$bpftool" ] || [ ! -f "$libbpf" ]; then
    log "building libbpf and bpftool from $src/tools"
    btf="$src/vmlinux"
    [ -f "$btf" ] || btf=/sys/kernel/btf/vmlinux
    mkdir -p "$tools"
    make -s -C "$src/tools/sched_ext" CLANG="$clang" O="$tools" \
        VMLINUX_BTF="$btf" "$libbpf" "$bpftool" >&2
fi

if [ -z "$vmlinux_h" ]; then
    if [ -r /sys/kernel/btf/vmlinux ] && "$bpftool" btf dump file /sys/kernel/btf/vmlinux format c \
        >"$out/gen/vmlinux.h.tmp" 2>/dev/null && grep -q 'struct sched_ext_ops {' "$out/gen/vmlinux.h.tmp"; then
        vmlinux_h="$out/gen/vmlinux.h.tmp"
        log "vmlinux.h from the running kernel ($(uname -r))"
    elif kdir="$("$here/guest/build-kernel.sh" --cached-only 2>/dev/null)"; then
        vmlinux_h="$kdir/vmlinux.h"
        log "vmlinux.h from the cached guest kernel ($kdir)"
    else
        rm -f "$out/gen/vmlinux.h.tmp"
        log "error: no vmlinux.h with sched_ext: set SCX_VMLINUX_H, run on a sched_ext kernel, or run scx/guest/build-kernel.sh"
        exit 1
    fi
fi
cmp -s "$vmlinux_h" "$out/gen/vmlinux.h" 2>/dev/null || cp "$vmlinux_h" "$out/gen/vmlinux.h"
rm -f "$out/gen/vmlinux.h.tmp"

sys_includes="$("$clang" -v -E - </dev/null 2>&1 |
    sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')"
bpf_cflags=(-g -O2 -target bpf -mcpu=v3 -mlittle-endian -D__TARGET_ARCH_x86
    -I"$here/src" -I"$out/gen" -I"$src/tools/sched_ext/include"
    -I"$src/tools/sched_ext/include/bpf-compat" -I"$tools/build/include"
    -I"$src/tools/include/uapi" -I"$src/include" $sys_includes
    -Wall -Wno-compare-distinct-pointer-types)

for pol in illf llf edf bfs cfsw; do
    obj="$out/scx_$pol.bpf.o"
    if [ ! -f "$obj" ] || [ -n "$(find "$here/src" "$out/gen/vmlinux.h" -newer "$obj" -print -quit)" ]; then
        log "clang: scx_$pol.bpf.c"
        "$clang" "${bpf_cflags[@]}" -c "$here/src/scx_$pol.bpf.c" -o "$obj"
        "$bpftool" gen object "$out/scx_$pol.linked.o" "$obj"
        "$bpftool" gen skeleton "$out/scx_$pol.linked.o" name "scx_$pol" >"$out/gen/scx_$pol.bpf.skel.h"
    fi
done

loader="$out/scx_schedlab"
if [ ! -x "$loader" ] || [ -n "$(find "$here/src" "$out/gen" -newer "$loader" -print -quit)" ]; then
    log "cc: scx_schedlab (static)"
    gcc -O2 -g -Wall -static -I"$here/src" -I"$out/gen" -I"$tools/build/include" \
        -I"$src/tools/sched_ext/include" -I"$src/tools/include/uapi" \
        "$here/src/scx_schedlab.c" "$libbpf" -lelf -lz -lzstd -o "$loader"
fi
log "built $loader"
echo "$out"
