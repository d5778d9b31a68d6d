#!/usr/bin/env bash
# Whole-process load times, side by side in one run: `cat` (the ceiling), `spall-cli info`
# with all cores and with one, and for JSON the naive serde_json loader. Page cache warm;
# the median of RUNS runs (default 3). Prints a Markdown table. BASE=PATH adds a column for
# another build of spall-cli (say, main's), timed in the same run.
#
#   cargo build --release -p spall-cli && cargo build --release -p spall-format --examples
#   scripts/load-bench.sh bench-data/realistic-250mb.json bench-data/500mb.spall
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
cli=target/release/spall-cli
naive=target/release/examples/naive-load
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }
[ -x "$cli" ] && [ -x "$naive" ] || {
  echo "build first: cargo build --release -p spall-cli && cargo build --release -p spall-format --examples" >&2
  exit 2
}

# Median wall seconds and the largest peak RSS (MB) of N runs of a command.
measure() {
  local n=$1 times=() peak=0 out
  shift
  for _ in $(seq "$n"); do
    /usr/bin/time -o "$tmp" -f "%e %M" "$@" > /dev/null 2> /dev/null
    out=$(tail -1 "$tmp")
    times+=("${out% *}")
    local kb=${out#* }
    (( kb > peak )) && peak=$kb
  done
  local med
  med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  echo "$med $((peak / 1024))"
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

rate() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.2f GB/s", b / s / 1e9; else print "-" }'; }

base=${BASE:-}
base_head=""; base_rule=""
[ -n "$base" ] && { base_head=" $base |"; base_rule="---:|"; }
echo "| file | size | cat | spall-cli info, $(nproc) threads | throughput | peak RSS |$base_head 1 thread | naive serde_json |"
echo "|---|---:|---:|---:|---:|---:|$base_rule---:|---:|"
for f in "$@"; do
  size=$(stat -c %s "$f")
  cat "$f" > /dev/null
  read -r tcat _ < <(measure "$runs" cat "$f")
  read -r tinfo rss < <(measure "$runs" "$cli" info "$f")
  base_col=""
  if [ -n "$base" ]; then
    read -r tbase _ < <(measure "$runs" "$base" info "$f")
    base_col=" $tbase s |"
  fi
  read -r tone _ < <(measure "$runs" env RAYON_NUM_THREADS=1 "$cli" info "$f")
  naive_col="-"
  case "$f" in
    *.json)
      read -r tnaive nrss < <(measure 1 "$naive" "$f")
      naive_col="$tnaive s ($nrss MB)"
      ;;
  esac
  echo "| $(basename "$f") | $((size / 1000000)) MB | $tcat s | $tinfo s | $(rate "$size" "$tinfo") | $rss MB |$base_col $tone s | $naive_col |"
done
