#!/usr/bin/env bash
# The load of every file shape, side by side with another build and with `cat`, in one run.
#
#   cargo build --release -p spall-cli && cargo build --release -p spall-format --examples
#   BASE=/path/to/main/spall-cli MB=100 RUNS=3 scripts/load-shapes.sh
#
# Makes (once, into bench-data/shapes/, about MB megabytes each; default 100) generated
# `.spall` v3 and v1, a deep `.spall` (spall.h's shape: 4 threads, deep stacks, short
# spans), generated JSON, realistic Chrome JSON (`gen-realistic`), that JSON with a
# misplaced end event (`chrome-misplaced.py`), Chrome-shaped and dense Perfetto protobuf
# (`make.py chrome`, `make.py big`); SHAPES="v3 json" picks some; FILES="a b" adds files.
# Then runs `cat`, BASE's and this tree's `spall-cli info` on each, alternating, RUNS
# times (default 3), and prints medians: wall and CPU (user + sys) seconds, MB/s of each,
# peak RSS, and the new build's CPU MB/s as a fraction of the generated JSON's and BASE's.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
mb=${MB:-100}
new=${NEW:-target/release/spall-cli}
base=${BASE:-}
ex=target/release/examples
dir=bench-data/shapes
corpus=${CORPUS:-}
for c in ../shared/corpus ../../shared/corpus; do
  [ -z "$corpus" ] && [ -d "$c/real" ] && corpus=$c
done
[ -n "$corpus" ] || { echo "set CORPUS to the shared trace corpus" >&2; exit 2; }
real=$corpus/real
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }
[ -x "$new" ] && [ -x "$ex/gen-trace" ] && [ -x "$ex/gen-realistic" ] || {
  echo "build first: cargo build --release -p spall-cli && cargo build --release -p spall-format --examples" >&2
  exit 2
}
mkdir -p "$dir"

# Spans per MB of each generated shape, measured on the generators' output.
make_shape() {
  local s=$1 f=$2
  case $s in
    v3) "$ex/gen-trace" "$f" --spans $((mb * 20400)) ;;
    v1) "$ex/gen-trace" "$f" --spans $((mb * 15100)) --v1 ;;
    deep) "$ex/gen-trace" "$f" --spans $((mb * 20400)) --threads 4 --depth 64 --names 3000 --seed 3 ;;
    json) "$ex/gen-trace" "$f" --spans $((mb * 7420)) ;;
    realistic) "$ex/gen-realistic" "$f" "$mb" "$real/catapult_multiple_input_latency.json" \
      "$real/catapult_lthi_cats.json.gz" "$real/catapult_flow.json" ;;
    misplaced) python3 scripts/chrome-misplaced.py "$f" "$real/catapult_lthi_cats.json.gz" $(( (mb + 15) / 30 )) ;;
    chrome) python3 tests/fixtures/proto/make.py chrome "$f" "$mb" ;;
    dense) python3 tests/fixtures/proto/make.py big "$f" "$mb" ;;
  esac > /dev/null 2>&1
}
ext() { case $1 in v3|v1|deep) echo spall ;; chrome|dense) echo pftrace ;; *) echo json ;; esac; }

files=()
for s in ${SHAPES:-json v3 v1 deep realistic misplaced chrome dense}; do
  f="$dir/$s-${mb}mb.$(ext "$s")"
  [ -s "$f" ] || { echo "making $f" >&2; make_shape "$s" "$f"; }
  files+=("$f")
done
for f in ${FILES:-}; do files+=("$f"); done

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# One run: "wall cpu rss_kb".
one() {
  /usr/bin/time -o "$tmp" -f "%e %U %S %M" "$@" > /dev/null 2> /dev/null || true
  tail -1 "$tmp" | awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }'
}
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

tools=(cat new)
[ -n "$base" ] && tools=(cat base new)
json_rate=""
printf '| file | MB | cat | '
[ -n "$base" ] && printf 'base: wall, CPU, peak | '
printf 'new: wall, CPU, peak | new MB/s (wall, CPU) |'
[ -n "$base" ] && printf ' new / base CPU |'
printf ' CPU MB/s / generated JSON |\n|---|---:|---:|'
[ -n "$base" ] && printf -- '---:|'
printf -- '---:|---:|'
[ -n "$base" ] && printf -- '---:|'
printf -- '---:|\n'
for f in "${files[@]}"; do
  size=$(stat -L -c %s "$f")
  cat "$f" > /dev/null
  declare -A wall=() cpu=() rss=()
  for r in $(seq "$runs"); do
    # Rotate the order each run so that neither build always runs first.
    n=${#tools[@]}
    for i in $(seq 0 $((n - 1))); do
      t=${tools[$(( (i + r) % n ))]}
      case $t in
        cat) out=$(one cat "$f") ;;
        base) out=$(one "$base" info "$f") ;;
        new) out=$(one "$new" info "$f") ;;
      esac
      read -r w c m <<< "$out"
      wall[$t]+="$w "; cpu[$t]+="$c "; rss[$t]=$(( m > ${rss[$t]:-0} ? m : ${rss[$t]:-0} ))
    done
  done
  stat_of() { # tool -> "wall cpu rssMB"
    echo "$(tr ' ' '\n' <<< "${wall[$1]}" | grep . | med) $(tr ' ' '\n' <<< "${cpu[$1]}" | grep . | med) $(( ${rss[$1]} / 1024 ))"
  }
  read -r cw _ _ <<< "$(stat_of cat)"
  read -r nw nc nm <<< "$(stat_of new)"
  rate() { awk -v b="$size" -v s="$1" 'BEGIN { if (s > 0) printf "%.0f", b / s / 1e6; else print "-" }'; }
  ncr=$(rate "$nc")
  [ -z "$json_rate" ] && [[ $f == */json-* ]] && json_rate=$ncr
  printf '| %s | %d | %s s |' "$(basename "$f")" $((size / 1000000)) "$cw"
  if [ -n "$base" ]; then
    read -r bw bc bm <<< "$(stat_of base)"
    printf ' %s s, %s s, %s MB |' "$bw" "$bc" "$bm"
  fi
  printf ' %s s, %s s, %s MB | %s, %s |' "$nw" "$nc" "$nm" "$(rate "$nw")" "$ncr"
  [ -n "$base" ] && awk -v b="$bc" -v n="$nc" 'BEGIN { printf " %.2f |", n / b }'
  if [ -n "$json_rate" ]; then
    awk -v r="$ncr" -v j="$json_rate" 'BEGIN { printf " %.2f |\n", r / j }'
  else
    printf ' - |\n'
  fi
  unset wall cpu rss
done
