#!/usr/bin/env bash
# Builds the web viewer and serves it on http://127.0.0.1:PORT/ (default 8000) for trying
# it. Traces can be dropped on the page, or linked: files under the served directory open
# with ?trace=NAME, e.g. `scripts/serve-web.sh 8000 ~/traces` and
# http://127.0.0.1:8000/?trace=traces/profile.json
#
# Every answer carries Cross-Origin-Opener-Policy: same-origin and
# Cross-Origin-Embedder-Policy: require-corp, which make the page cross-origin isolated:
# its load worker then decodes on threads (docs/WEB.md, "Threads").
set -euo pipefail
port=${1:-8000}
traces=${2:-}
root="$(cd "$(dirname "$0")/.." && pwd)"
site="$root/target/web-site"
cd "$root"
# What a fresh machine lacks, installed here (build-web.sh only says what is missing): the
# wasm32 target and wasm-bindgen-cli at the version of the wasm-bindgen crate in
# Cargo.lock. Only a C compiler for SQLite is left to the user (scripts/wasm-cc.sh names it).
if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "serve-web: installing the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$want" ]; then
  echo "serve-web: installing wasm-bindgen-cli $want (found: ${have:-none}); a few minutes, once"
  cargo install --locked wasm-bindgen-cli --version "$want"
fi
"$root/scripts/build-web.sh" "$site"
if [ -n "$traces" ]; then
  ln -sfn "$(cd "$traces" && pwd)" "$site/traces"
fi
echo "serve-web: http://127.0.0.1:$port/ (Ctrl+C stops)"
cd "$site"
exec python3 - "$port" <<'PY'
import http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    # Cross-origin isolation: SharedArrayBuffer, so the load worker's threads.
    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()
# WebAssembly.instantiateStreaming wants this type; older Pythons do not know it.
Handler.extensions_map[".wasm"] = "application/wasm"
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY
