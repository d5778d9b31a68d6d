#!/usr/bin/env bash
# Builds the web viewer and serves it on http://127.0.0.1:PORT/ (default 8000) for trying
# it. Traces can be dropped on the page, or linked: files under the served directory open
# with ?trace=NAME, e.g. `scripts/serve-web.sh 8000 ~/traces` and
# http://127.0.0.1:8000/?trace=traces/profile.json
set -euo pipefail
port=${1:-8000}
traces=${2:-}
root="$(cd "$(dirname "$0")/.." && pwd)"
site="$root/target/web-site"
"$root/scripts/build-web.sh" "$site"
if [ -n "$traces" ]; then
  ln -sfn "$(cd "$traces" && pwd)" "$site/traces"
fi
echo "serve-web: http://127.0.0.1:$port/ (Ctrl+C stops)"
cd "$site"
exec python3 - "$port" <<'PY'
import http.server, sys
handler = http.server.SimpleHTTPRequestHandler
# WebAssembly.instantiateStreaming wants this type; older Pythons do not know it.
handler.extensions_map[".wasm"] = "application/wasm"
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
PY
