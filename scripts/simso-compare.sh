#!/usr/bin/env bash
# SimSo 0.8.5 and schedlab side by side on the same random task sets (docs/performance.md).
#
# 1. makes a throwaway virtualenv in a temp dir (Python 3.11 when found) with
#    simso==0.8.5, simpy==2.3.1 and numpy from PyPI;
# 2. exports the sets with `schedlab bench --export` (JSON workloads);
# 3. scripts/simso_compare.py times SimSo's global EDF and LLF (simso.schedulers.EDF and
#    .LLF, run_model()) on them, prints SimSo's and schedlab's job and deadline-miss
#    counts (both abort late jobs) and writes the timing file;
# 4. runs `schedlab bench --rows SETS --simso FILE`: the table with SimSo's times and the
#    ratio SimSo / schedlab.
#
# With --speed, instead of 3 and 4: scripts/simso_speed.py times both tools scheduler by
# scheduler on the first set (default simso-64x8) in one run and prints one table of the
# cost per simulated second (schedlab over the set's duration, SimSo over --simso-horizon),
# for --policies (default: EDF, LLF and the optimal and Pfair schedulers; a name schedlab
# or the cross-check's table does not know gets a row saying so).
#
# usage: scripts/simso-compare.sh [--sets simso-64x8,simso-256x16] [--policies edf,llf]
#                                 [--out FILE] [--schedlab BIN] [--timeout SECS] [--keep]
#                                 [--python PY] [--speed [--simso-horizon 1s] [--markdown]]
#   --out       timing file (default out/simso-times.json; with --speed, the rows as JSON)
#   --schedlab  schedlab binary (default target/release/schedlab, built if missing)
#   --timeout   passed to schedlab bench (default 300)
#   --keep      keep the temp dir (virtualenv and exported sets) and print its path
#   --python    a Python with simso 0.8.5 and simpy 2.3.1 (no virtualenv is made)
#   --speed     the one-run table per scheduler (docs/simso.md, "Speed")
# needs: python3 with venv (on Debian: apt-get install python3-venv; done here when run as
# root), network access to PyPI. SimSo takes about a minute on the two default sets.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sets=simso-64x8,simso-256x16
policies=edf,llf
out=$root/out/simso-times.json
bin=
timeout=300
keep=0
speed=0
py=
policies_given=0
sets_given=0
out_given=0
speed_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --speed) speed=1; shift ;;
    --simso-horizon) speed_args+=(--simso-horizon "$2"); shift 2 ;;
    --markdown) speed_args+=(--markdown); shift ;;
    --python) py=$2; shift 2 ;;
    --sets) sets=$2; sets_given=1; shift 2 ;;
    --policies) policies=$2; policies_given=1; shift 2 ;;
    --out) out=$2; out_given=1; shift 2 ;;
    --schedlab) bin=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "simso-compare.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "simso-compare: $*" >&2; }

# schedlab: the release binary, built when missing.
if [ -z "$bin" ]; then
  bin=$root/target/release/schedlab
  if [ ! -x "$bin" ]; then
    say "building the release binary (cargo build --release -p schedlab-cli)..."
    (cd "$root" && cargo build --release -p schedlab-cli)
  fi
fi
[ -x "$bin" ] || { say "no schedlab binary at $bin"; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/simso-compare.XXXXXX")
if [ "$keep" = 1 ]; then
  trap 'say "kept $tmp"' EXIT
else
  trap 'rm -rf "$tmp"' EXIT
fi

if [ -z "$py" ]; then
  # Python: 3.11 (SimSo 0.8.5 with SimPy 2.3.1 is known to run unmodified there).
  base=
  for c in python3.11 python3; do
    if command -v "$c" >/dev/null 2>&1; then base=$(command -v "$c"); break; fi
  done
  [ -n "$base" ] || { say "python3 not found (apt-get install python3 python3-venv)"; exit 2; }
  pyver=$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  [ "$pyver" = 3.11 ] || say "warning: $base is Python $pyver; SimSo 0.8.5 is checked on 3.11"
  if ! "$base" -m venv "$tmp/venv" >/dev/null 2>&1; then
    rm -rf "$tmp/venv"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "python venv is missing: apt-get install python3-venv"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv "python$pyver-venv" >/dev/null \
        || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      "$base" -m venv "$tmp/venv"
    else
      say "$base -m venv failed: install venv (Debian: sudo apt-get install python3-venv) and retry"
      exit 2
    fi
  fi
  say "installing simso==0.8.5 simpy==2.3.1 numpy into $tmp/venv..."
  "$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check simso==0.8.5 simpy==2.3.1 numpy
  py=$tmp/venv/bin/python
fi

if [ "$speed" = 1 ]; then
  # One set (the first of --sets; simso-64x8 by default), every scheduler, one table.
  [ "$policies_given" = 1 ] || policies=edf,llf,pd2,er-pd2,epdf,bf,llref,lre-tl,dp-wrap,run,u-edf,ekg
  [ "$sets_given" = 1 ] || sets=simso-64x8
  set1=${sets%%,*}
  "$bin" bench --rows "$set1" --export "$tmp/sets" >/dev/null
  json=()
  if [ "$out_given" = 1 ]; then mkdir -p "$(dirname "$out")"; json=(--json "$out"); fi
  "$py" "$root/scripts/simso_speed.py" --set "$tmp/sets/$set1.json" --schedlab "$bin" \
    --policies "$policies" "${json[@]}" "${speed_args[@]}"
  exit
fi

"$bin" bench --rows "$sets" --export "$tmp/sets" >/dev/null
mkdir -p "$(dirname "$out")"
"$py" "$root/scripts/simso_compare.py" --sets-dir "$tmp/sets" \
  --schedlab "$bin" --out "$out" --sets "$sets" --policies "$policies"
echo
"$bin" bench --rows "$sets" --simso "$out" --timeout "$timeout"
