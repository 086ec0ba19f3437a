#!/usr/bin/env bash
# Two schedlab binaries, the same simulated results? For speed work, where every result
# must stay byte-identical (docs/performance.md). Runs `schedlab simulate --json` (its
# `wall_s` removed) with both binaries for 29 policies x global/linux/partitioned on
# simso-64x8 (cut to 2 s) and five examples: 522 runs, and prints each that differs and
# the count ("522 runs, 0 differences"). Exit 1 when any differs. About 10 s.
#
# usage: scripts/compare-builds.sh OLD_BIN NEW_BIN
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN" >&2; exit 2; }
a=$1; b=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$a" bench --export "$tmp" --rows simso-64x8 >/dev/null
ex=$root/examples
wls=("$tmp/simso-64x8.json" "$ex/dhall.yaml" "$ex/e2.yaml" "$ex/table1.yaml" "$ex/sporadic.yaml"
    "$ex/nice-mix.yaml")
policies="edf llf illf edzl pd2 er-pd2 epdf bf run u-edf dp-wrap llref lre-tl edf-us prid g-fl
    g-fl-zl mllf edcl nvnlf edhs ekg rm dm fifo rr cfs eevdf bfs"
# A refused combination is compared too: its message must be the same.
one() {
    local bin=$1 wl=$2 p=$3 pl=$4
    shift 4
    "$bin" simulate "$wl" --policy "$p" --placement "$pl" --quiet --json "$@" 2>&1 \
        | sed -E 's/"wall_s": ?[0-9.e+-]+,?//g'
}
n=0
d=0
for wl in "${wls[@]}"; do
    extra=()
    case $wl in *simso-64x8*) extra=(--duration 2s) ;; esac
    for p in $policies; do
        for pl in global linux partitioned; do
            n=$((n + 1))
            if ! cmp -s <(one "$a" "$wl" "$p" "$pl" "${extra[@]}") \
                <(one "$b" "$wl" "$p" "$pl" "${extra[@]}"); then
                d=$((d + 1))
                echo "differs: $(basename "$wl") $p $pl"
            fi
        done
    done
done
echo "$n runs, $d differences"
[ "$d" -eq 0 ]
