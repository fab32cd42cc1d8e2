#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time.
#
#   fuzz/run.sh [BUILD_DIR [SECONDS]]
#
# BUILD_DIR defaults to build-fuzz at the top of the repository; SECONDS (per target) defaults to
# $FUZZ_SECONDS, else 60. Each target starts from a copy of fuzz/corpus/<target> in a temporary
# directory, so the committed seed corpus never grows. A crash reproducer is kept in
# BUILD_DIR/fuzz-artifacts/<target>/ and the script exits non-zero.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$repo/build-fuzz}
seconds=${2:-${FUZZ_SECONDS:-60}}
targets=(fuzz_frame_decoder fuzz_message_decode fuzz_hub_contents)

if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
    echo "run.sh: SECONDS must be a positive integer, not \"$seconds\"" >&2
    exit 2
fi

cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER="${CXX_FUZZ:-clang++}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPDB_BUILD_FUZZERS=ON -DDPDB_BUILD_TESTS=OFF >/dev/null
ninja -C "$build_dir" "${targets[@]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/dpdb-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The targets run side by side: each is one process, and the machine has cores for more than one.
declare -A fuzzing=()
for target in "${targets[@]}"; do
    corpus=$work/corpus/$target
    artifacts=$build_dir/fuzz-artifacts/$target
    mkdir -p "$corpus" "$artifacts"
    cp -R "$repo/fuzz/corpus/$target/." "$corpus/"
    echo "=== $target: ${seconds} s from $(ls "$corpus" | wc -l) seeds"
    # The outer timeout is a backstop only: libFuzzer stops itself after -max_total_time.
    timeout --kill-after=10 $((seconds + 120)) "$build_dir/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -dict="$repo/fuzz/json.dict" -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "$corpus" 2>"$work/$target.log" &
    fuzzing[$target]=$!
done

failed=()
for target in "${targets[@]}"; do
    status=0
    wait "${fuzzing[$target]}" || status=$?
    echo "=== $target"
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)' \
        "$work/$target.log" || true
    if ((status != 0)); then
        tail -n 60 "$work/$target.log" >&2
        echo "=== $target FAILED (exit $status); reproducers in $build_dir/fuzz-artifacts/$target/" >&2
        failed+=("$target")
    else
        echo "=== $target: no crash"
    fi
done

if ((${#failed[@]} > 0)); then
    echo "fuzzers that found a crash: ${failed[*]}" >&2
    exit 1
fi
