#!/usr/bin/env bash
# A short run of every fuzz target (default 30 s each), seeded from tests/fixtures.
# Usage: scripts/fuzz-smoke.sh [SECONDS]. A crash fails the script; see docs/TESTING.md.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"

if ! command -v cargo-fuzz >/dev/null; then
  echo "== installing cargo-fuzz"
  if ! cargo install --locked cargo-fuzz >/dev/null 2>&1; then
    echo "warning: cargo-fuzz could not be installed; the fuzz smoke run is skipped" >&2
    exit 0
  fi
fi
# cargo-fuzz passes -Z flags (sanitizers); the stable toolchain accepts them this way.
export RUSTC_BOOTSTRAP=1

seed() { # target, files...
  local dir="fuzz/corpus/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do head -c 60000 "$f" > "$dir/$(basename "$f")"; done
}
seed decode_json tests/fixtures/edge/*.json tests/fixtures/real/catapult_*.json tests/fixtures/fuzz/*
seed build_model tests/fixtures/edge/*.json tests/fixtures/spall/*.spall tests/fixtures/fuzz/* \
  tests/fixtures/proto/*.pftrace
seed decode_proto tests/fixtures/proto/*.pftrace
# System traces (ftrace bundles, compact_sched, atrace), decompressed, for both readers of
# protobuf: the decoder and the model (scheduling slices, thread states).
for f in tests/fixtures/systrace/*.pftrace.gz; do
  for t in decode_proto build_model; do
    mkdir -p "fuzz/corpus/$t"
    gunzip -c "$f" > "fuzz/corpus/$t/$(basename "$f" .gz)"
  done
done
# Text system traces in each wrapping: tracefs text, atrace -z output, pages (a process dump,
# base64 gzip), and Chrome JSON with systemTraceEvents.
cp tests/fixtures/systrace/events.trace tests/fixtures/systrace/events.html \
  tests/fixtures/systrace/events.ctrace tests/fixtures/systrace/android.html \
  tests/fixtures/systrace/chrome-system.json fuzz/corpus/build_model/
seed decode_json tests/fixtures/systrace/chrome-system.json
# The Chromium trace is gzipped: its first packets, decompressed.
{ gunzip -c tests/fixtures/real/chromium148_startup.pftrace.gz | head -c 60000 \
    > fuzz/corpus/decode_proto/chromium148_startup.pftrace; } || true
seed info_path tests/fixtures/edge/*.json tests/fixtures/spall/*.spall
seed flame tests/fixtures/edge/*.json tests/fixtures/spall/*.spall tests/fixtures/real/catapult_*.json
seed diff tests/fixtures/edge/*.json tests/fixtures/spall/*.spall tests/fixtures/systrace/events.trace
seed model_kinds tests/fixtures/edge/*.json tests/fixtures/real/catapult_*.json tests/fixtures/real/chrome116_devtools_export.json
seed cli_text tests/fixtures/budgets/*.toml
seed decode_profiles tests/fixtures/real/profiles/*.perf tests/fixtures/real/profiles/*.cpuprofile
# pprof and Gecko fixtures are gzipped; the readers see them decompressed.
for f in tests/fixtures/real/profiles/*.pb.gz tests/fixtures/real/profiles/*.json.gz; do
  { gzip -dc "$f" | head -c 60000 > "fuzz/corpus/decode_profiles/$(basename "$f" .gz)"; } || true
done
mkdir -p fuzz/corpus/decode_spall
# The decode_spall target supplies the magic itself: seeds start after it. (`head` closing
# the pipe early is expected, hence `|| true` under pipefail.)
for f in tests/fixtures/spall/*.spall; do
  { tail -c +9 "$f" | head -c 60000 > "fuzz/corpus/decode_spall/$(basename "$f")"; } || true
done

cd fuzz
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Every target in one build, so that their links share the cores; `cargo fuzz run` below
# then finds them built.
echo "== building the fuzz targets"
if ! cargo fuzz build -O >"$log" 2>&1; then
  tail -n 80 "$log" >&2
  exit 1
fi
for t in decode_spall decode_proto decode_json decode_profiles build_model info_path flame diff model_kinds \
    cli_text; do
  echo "== fuzz $t for ${secs}s"
  # A fixed seed: a failure in CI replays here with the same command.
  if ! cargo fuzz run -O "$t" "corpus/$t" -- -seed=1 -max_total_time="$secs" -max_len=65536 \
      -rss_limit_mb=4096 >"$log" 2>&1; then
    # The panic (or sanitizer report), the input's path and its base64 are in the log.
    echo "fuzz target $t failed; the end of its output:" >&2
    grep -v -E '^#[0-9]+ +(NEW|REDUCE|pulse|RELOAD)' "$log" | tail -n 80 >&2
    exit 1
  fi
  tail -n 2 "$log"
done
echo "== fuzz smoke passed"
