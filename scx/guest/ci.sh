#!/usr/bin/env bash
# CI step for the sched_ext guest lane (called by .ci/run after `bash .ci/test` passed):
# install what the lane needs with apt, then run scx/guest/run.sh under one overall
# timeout. Cold cache (no kernel in /var/cache/schedlab-scx): about 10-15 min of kernel
# build with -j2; warm: a couple of minutes. Never waits for input, never hangs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export DEBIAN_FRONTEND=noninteractive
exec </dev/null
log() { printf 'scx/guest/ci: %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        return 1
    fi
}

pkgs=(linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev dwarves python3
    cpio kmod zlib1g-dev libzstd-dev pkg-config ccache xz-utils
    clang-19 llvm-19 qemu-system-x86 busybox-static)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing: ${missing[*]}"
    as_root timeout 900 apt-get update -q
    as_root timeout 1800 apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ "$(id -u)" -ne 0 ]; then
    # The kernel cache lives in /var/cache/schedlab-scx unless told otherwise.
    export SCX_CACHE="${SCX_CACHE:-$HOME/.cache/schedlab-scx}"
fi

start=$(date +%s)
timeout --foreground -k 30 "${SCX_LANE_TIMEOUT:-3600}" scx/guest/run.sh "$@"
log "sched_ext guest lane passed in $(($(date +%s) - start)) s"
# End CI's output with the lane's plain summary line (the counts check.py printed).
cat "${SCX_OUT:-target/scx}/guest/summary.txt" 2>/dev/null || true
