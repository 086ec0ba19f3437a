#!/usr/bin/env bash
# Job-by-job cross-check of schedlab against SimSo 0.8.5 (docs/simso.md).
#
# 1. makes a throwaway virtualenv in a temp dir (Python 3.11 when found) with
#    simso==0.8.5, simpy==2.3.1 and numpy from PyPI (or uses --python, a Python that
#    already has them);
# 2. builds schedlab (debug) when no binary is given;
# 3. runs scripts/simso_crosscheck.py: seeded random implicit-deadline sets in both tools,
#    every job's finish time compared, the first difference of each set classified;
#    prints the table per scheduler.
#
# usage: scripts/simso-crosscheck.sh [--python PY] [--schedlab BIN] [--keep] [ARGS...]
#   --python    a Python with simso 0.8.5 and simpy 2.3.1 (no virtualenv is made)
#   --schedlab  schedlab binary (default target/debug/schedlab, built if missing)
#   --keep      keep the temp dir (virtualenv) and print its path
#   ARGS        passed to simso_crosscheck.py: --policies edf,llf (or all), --seeds N,
#               --sizes 2x4,4x8, --levels 0.5,1.0, --markdown, --verbose, --json FILE
# Exit status: 0 when every difference is classified, 1 when some is not.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=
py=
keep=0
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --python) py=$2; shift 2 ;;
    --schedlab) bin=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

say() { echo "simso-crosscheck: $*" >&2; }

if [ -z "$bin" ]; then
  bin=$root/target/debug/schedlab
  if [ ! -x "$bin" ]; then
    say "building schedlab (cargo build -p schedlab-cli)..."
    (cd "$root" && cargo build -q -p schedlab-cli)
  fi
fi
[ -x "$bin" ] || { say "no schedlab binary at $bin"; exit 2; }

if [ -z "$py" ]; then
  base=
  for c in python3.11 python3; do
    if command -v "$c" >/dev/null 2>&1; then base=$(command -v "$c"); break; fi
  done
  [ -n "$base" ] || { say "python3 not found (apt-get install python3 python3-venv)"; exit 2; }
  ver=$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  [ "$ver" = 3.11 ] || say "warning: $base is Python $ver; SimSo 0.8.5 is checked on 3.11"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/simso-crosscheck.XXXXXX")
  if [ "$keep" = 1 ]; then trap 'say "kept $tmp"' EXIT; else trap 'rm -rf "$tmp"' EXIT; fi
  "$base" -m venv "$tmp/venv" || { say "$base -m venv failed: install python3-venv"; exit 2; }
  say "installing simso==0.8.5 simpy==2.3.1 numpy into $tmp/venv..."
  "$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check \
    simso==0.8.5 simpy==2.3.1 numpy
  py=$tmp/venv/bin/python
fi

"$py" "$root/scripts/simso_crosscheck.py" --schedlab "$bin" "${args[@]}"
