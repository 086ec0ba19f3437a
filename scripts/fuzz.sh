#!/usr/bin/env bash
# Coverage-guided fuzzing of schedlab's input paths with cargo-fuzz (libFuzzer); see
# docs/safety.md "Fuzzing".
#
#   scripts/fuzz.sh list                 the targets
#   scripts/fuzz.sh seeds                (re)build fuzz/corpus/<target>/ from examples/,
#                                        fuzz/seeds/ and rt-app's examples if installed
#   scripts/fuzz.sh run TARGET|all SECS  fuzz each target for SECS seconds, one at a time,
#                                        one job (the corpus grows in fuzz/corpus/)
#   scripts/fuzz.sh replay [TARGET|all]  run every corpus and seed input once (no fuzzing)
#   scripts/fuzz.sh smoke                CI's pass: from the seeds only, a fixed number of
#                                        inputs per target (about 20 s each) with a fixed
#                                        libFuzzer seed, so the same code gives the same
#                                        verdict on every machine
#
# A crash, a timeout (-timeout, default 10 s per input) or an out-of-memory
# (-rss_limit_mb, default 2048) stops the target with exit 1 and leaves the input in
# fuzz/artifacts/<target>/; turn it into a regression test in the crate's tests/ dir.
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). libFuzzer needs nightly
# rustc flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export RUSTC_BOOTSTRAP=1

TARGETS=(workload_yaml workload_json simulate simulate_generated rtapp_import ftrace_import duration)
TIMEOUT="${FUZZ_TIMEOUT:-10}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
MAX_LEN="${FUZZ_MAX_LEN:-8192}"
# Corpus directory under fuzz/ (the smoke pass uses its own, fresh each time).
CORPUS=corpus

die() { echo "fuzz.sh: $*" >&2; exit 2; }

targets_of() {
    case "${1:-all}" in
        all) printf '%s\n' "${TARGETS[@]}" ;;
        *)
            for t in "${TARGETS[@]}"; do
                [ "$t" = "$1" ] && { echo "$t"; return; }
            done
            die "unknown target \`$1\` (known: ${TARGETS[*]}, all)"
            ;;
    esac
}

# Seeds: small valid inputs the fuzzer mutates. Generated, not committed (fuzz/corpus is
# ignored by git), except the few hand-written files of fuzz/seeds/.
seeds() {
    local c=fuzz/$CORPUS
    for t in "${TARGETS[@]}"; do mkdir -p "$c/$t"; done
    for f in examples/*.yaml crates/cli/src/builtin/*.yaml; do
        cp "$f" "$c/workload_yaml/"
        cp "$f" "$c/simulate/"
    done
    cp fuzz/seeds/workload_json/*.json "$c/workload_json/"
    # JSON text is YAML too: the YAML targets start from the JSON seeds as well.
    cp fuzz/seeds/workload_json/*.json "$c/workload_yaml/"
    cp fuzz/seeds/workload_json/*.json "$c/simulate/"
    cp fuzz/seeds/rtapp_import/* "$c/rtapp_import/"
    if [ -d /usr/share/doc/rt-app/examples ]; then
        # Debian's rt-app ships its example configurations (some gzipped).
        find /usr/share/doc/rt-app/examples -name '*.json' -size -16k -exec cp {} "$c/rtapp_import/" \;
        while IFS= read -r gz; do
            gzip -dc "$gz" >"$c/rtapp_import/$(basename "$gz" .gz)"
        done < <(find /usr/share/doc/rt-app/examples -name '*.json.gz' -size -16k)
    fi
    cp fuzz/seeds/ftrace_import/* "$c/ftrace_import/"
    cp fuzz/seeds/duration/* "$c/duration/"
    # Durations as the examples write them.
    grep -ohE '[0-9][0-9._]*(ns|us|µs|ms|s)\b' examples/*.yaml | sort -u | head -50 | {
        i=0
        while IFS= read -r d; do
            i=$((i + 1))
            printf '%s' "$d" >"$c/duration/ex$i"
        done
    }
    for t in "${TARGETS[@]}"; do
        echo "fuzz.sh: $t: $(find "$c/$t" -type f | wc -l) seed files"
    done
}

build() {
    command -v cargo-fuzz >/dev/null 2>&1 || die "cargo-fuzz is missing: cargo install cargo-fuzz --locked"
    (cd fuzz && cargo fuzz build -O "$@")
}

# One libFuzzer run of target $1 with extra flags; prints the executions it reports.
libfuzzer() {
    local t=$1
    shift
    mkdir -p "fuzz/artifacts/$t"
    local log
    log=$(mktemp "/tmp/fuzz-$t.XXXXXX")
    local rc=0
    (cd fuzz && cargo fuzz run -O "$t" "$CORPUS/$t" -- \
        -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" -max_len="$MAX_LEN" \
        -artifact_prefix="artifacts/$t/" "$@") >"$log" 2>&1 || rc=$?
    # libFuzzer's closing lines: executions, speed, corpus size, or the crash.
    grep -E '^(#[0-9]+.*(DONE|pulse|INITED)|Done [0-9]+ runs|==[0-9]+== ERROR|SUMMARY|artifact_prefix|Test unit written|stat::number_of_executed_units|stat::peak_rss_mb|thread .* panicked)' "$log" | tail -8 || true
    if [ "$rc" -ne 0 ]; then
        echo "fuzz.sh: $t FAILED (exit $rc); full log: $log" >&2
        tail -40 "$log" >&2
        return 1
    fi
    rm -f "$log"
}

# Inputs per target for `smoke`: about 20 s each on a 2-CPU machine shared with a
# build (the simulate targets run a simulation with the invariant checker per input).
smoke_runs() {
    case "$1" in
        workload_yaml) echo 40000 ;;
        workload_json) echo 150000 ;;
        simulate) echo 40000 ;;
        simulate_generated) echo 5000 ;;
        rtapp_import) echo 120000 ;;
        ftrace_import) echo 12000 ;;
        duration) echo 1200000 ;;
    esac
}

case "${1:-}" in
    list) printf '%s\n' "${TARGETS[@]}" ;;
    seeds) seeds ;;
    run)
        [ $# -eq 3 ] || die "usage: scripts/fuzz.sh run TARGET|all SECONDS"
        secs=$3
        [ -d fuzz/corpus ] || seeds
        build
        failed=0
        for t in $(targets_of "$2"); do
            echo "fuzz.sh: $t for ${secs}s"
            start=$(date +%s)
            # One process, one job: the machine is shared. FUZZ_SEED fixes libFuzzer's
            # random seed (CI), else each run explores differently.
            libfuzzer "$t" -max_total_time="$secs" -print_final_stats=1 \
                ${FUZZ_SEED:+-seed="$FUZZ_SEED"} || failed=1
            echo "fuzz.sh: $t ran $(($(date +%s) - start))s"
        done
        exit "$failed"
        ;;
    replay)
        [ -d fuzz/corpus ] || seeds
        build
        failed=0
        for t in $(targets_of "${2:-all}"); do
            echo "fuzz.sh: replay $t"
            libfuzzer "$t" -runs=0 || failed=1
        done
        exit "$failed"
        ;;
    smoke)
        # A corpus of seeds only (not what earlier local runs grew), so the verdict
        # depends on the code alone.
        CORPUS=smoke-corpus
        rm -rf "fuzz/$CORPUS"
        seeds >/dev/null
        build
        failed=0
        for t in "${TARGETS[@]}"; do
            start=$(date +%s)
            libfuzzer "$t" -runs="$(smoke_runs "$t")" -seed=1 -print_final_stats=1 || failed=1
            echo "fuzz.sh: smoke $t: $(smoke_runs "$t") inputs in $(($(date +%s) - start))s"
        done
        exit "$failed"
        ;;
    *) die "usage: scripts/fuzz.sh list | seeds | run TARGET|all SECONDS | replay [TARGET|all] | smoke" ;;
esac
