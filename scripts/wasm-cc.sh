# Sourced by the scripts that build for wasm32-unknown-unknown: SQLite (the query panel) is C,
# compiled by a clang that has the wasm32 target and understands C23 attributes (clang 16 or
# newer; Debian 12's default clang 14 does not). Sets CC_wasm32_unknown_unknown unless it is
# set already; returns non-zero, saying what to install, when no such clang is found.
wasm_cc() {
  if [ -n "${CC_wasm32_unknown_unknown:-}" ]; then return 0; fi
  local cc v
  for cc in clang clang-22 clang-21 clang-20 clang-19 clang-18 clang-17 clang-16; do
    command -v "$cc" >/dev/null || continue
    v=$("$cc" -dumpversion 2>/dev/null | cut -d. -f1)
    if [ "${v:-0}" -ge 16 ] 2>/dev/null; then
      export CC_wasm32_unknown_unknown="$cc"
      return 0
    fi
  done
  echo "no clang 16 or newer for wasm32 (SQLite is C); on Debian: apt-get install clang-19" >&2
  return 1
}
