#!/usr/bin/env bash
# Installs what Coinkeep and its tests need, builds it, and creates the data dir.
# Idempotent: safe to run again; it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")"

fail() { echo "install.sh: $*" >&2; exit 1; }

command -v node >/dev/null || fail "Node.js 20 or newer is required (node not found)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || fail "Node.js 20 or newer is required (found $(node --version))"
command -v npm >/dev/null || fail "npm is required (not found)"

# Native modules (better-sqlite3) build from source: a C++ toolchain and python3 are needed.
missing=()
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
command -v python3 >/dev/null || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "install.sh: installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
      || fail "apt-get could not install ${missing[*]}"
  else
    fail "missing build tools: ${missing[*]} (install them, then run ./install.sh again)"
  fi
fi

# Dependencies: exactly the lock file's versions; skipped when node_modules already matches it.
stamp=node_modules/.coinkeep-lock-stamp
lockhash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lockhash" ]; then
  npm ci --no-audit --no-fund || fail "npm ci failed (see the lines above)"
  echo "$lockhash" > "$stamp"
fi

npm run --silent build || fail "the TypeScript build failed (see the lines above)"

mkdir -p data
chmod 700 data
echo "install.sh: ready. Sandbox: bin/coinkeep dev   Tests: npm test"
