#!/usr/bin/env bash
# Is the window responsive while it loads a trace? Presses T (toggle theme, which always
# repaints) every 0.2 s and prints, every 0.2 s: seconds since start, the number of frames
# drawn so far, and whether the trace is loaded. A frame count that stops rising while
# keys are pressed is a stall. Needs an X display (run under xvfb-run) and xdotool.
#
#   cargo build --release -p spall-viewer
#   xvfb-run -a scripts/viewer-responsiveness.sh bench-data/1gb.spall [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
trace=$1
seconds=${2:-12}
dir=$(mktemp -d)
SPALL_TIMING=1 SPALL_FRAME_DUMP="$dir" target/release/spall "$trace" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
start=$(date +%s.%N)
for _ in $(seq 1 $((seconds * 5))); do
    sleep 0.2
    xdotool search --name spall windowfocus >/dev/null 2>&1 || true
    xdotool key t >/dev/null 2>&1 || true
    now=$(date +%s.%N)
    printf '%.1f %s\n' "$(echo "$now - $start" | bc)" "$(cat "$dir/frame.txt" 2>/dev/null || echo '0 false')"
done
