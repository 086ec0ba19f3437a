#!/usr/bin/env bash
# Instructions in `Engine::run_to` for one simulation, counted by callgrind: the speed
# comparison that does not drift with the VM's clock (docs/performance.md). Needs
# valgrind (apt-get install valgrind) and a release build.
#
# usage: scripts/callgrind-run-to.sh BIN SET POLICY PLACEMENT [DURATION]
#   SET is a workload file, e.g. one exported by `schedlab bench --export DIR`.
#   KEEP=1 keeps callgrind's output file (for `callgrind_annotate --inclusive=yes`).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 BIN SET POLICY PLACEMENT [DURATION]" >&2; exit 2; }
bin=$1; set_=$2; policy=$3; placement=$4; duration=${5:-}
out=$(mktemp /tmp/callgrind.XXXXXX)
args=(simulate "$set_" --policy "$policy" --placement "$placement" --quiet --json)
[ -n "$duration" ] && args+=(--duration "$duration")
if ! valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*Engine*run_to*' \
    "$bin" "${args[@]}" >/dev/null 2>"$out.err"; then
    cat "$out.err" >&2
    exit 1
fi
ir=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
printf '%s %s %s %s: %s instructions in run_to\n' "$(basename "$set_")" "$policy" "$placement" \
    "${duration:-full}" "$ir"
rm -f "$out.err"
if [ "${KEEP:-0}" = 1 ]; then echo "kept $out"; else rm -f "$out"; fi
