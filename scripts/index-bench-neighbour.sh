#!/usr/bin/env bash
# The trace-index frame benchmarks for the issue's three views, on one core, while a
# process streaming through memory runs on another (examples/memory_neighbour.rs): the
# frames' cost when the shared cache and memory bus are busy.
#
#   scripts/index-bench-neighbour.sh            # the three target views
#   scripts/index-bench-neighbour.sh 'query/'   # any criterion filter
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-query/frame_(full|1_100|1_100000)_gap1px}"
cores=$(nproc)
if [ "$cores" -lt 2 ]; then
    echo "needs at least 2 cores (found $cores)" >&2
    exit 1
fi
cargo build --release -p trace-index --example memory-neighbour
cargo bench -p trace-index --bench index --no-run
taskset -c 1 target/release/examples/memory-neighbour &
neighbour=$!
trap 'kill $neighbour 2>/dev/null || true' EXIT
taskset -c 0 cargo bench -p trace-index --bench index -- "$filter"
