#!/usr/bin/env bash
# Installs what Coinkeep and its tests need, builds it, and creates the data dir.
# Idempotent: safe to run again; it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")"

fail() { echo "install.sh: $*" >&2; exit 1; }

# The floor of package.json's engines (undici 7, the webhook sender's HTTP client, wants 20.18.1).
need=20.18.1
command -v node >/dev/null || fail "Node.js $need or newer is required (node not found)"
node -e 'const v = (s) => s.split(".").map(Number); const [h, n] = [v(process.versions.node), v(process.argv[1])];
  process.exit((h[0] - n[0] || h[1] - n[1] || h[2] - n[2]) >= 0 ? 0 : 1)' "$need" \
  || fail "Node.js $need or newer is required (found $(node --version))"
command -v npm >/dev/null || fail "npm is required (not found)"

# Native modules (better-sqlite3) build from source: a C++ toolchain and python3 are needed.
# The tests also run the sandbox's printed example, which uses curl and openssl, and drive the CLI
# on a pseudo-terminal with util-linux `script` (package bsdutils).
missing=()
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
command -v python3 >/dev/null || missing+=(python3)
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
command -v script >/dev/null || missing+=(bsdutils)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "install.sh: installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
      || fail "apt-get could not install ${missing[*]}"
  else
    fail "missing tools: ${missing[*]} (install them, then run ./install.sh again)"
  fi
fi

# Tools only some tests need, not the daemon: Debian's Chromium (/usr/bin/chromium) for the payment
# page's browser tests, Go and PHP with curl for the client libraries' tests (clients/), tmux for the
# dashboard's terminal test and benchmark. As root with apt-get they are installed; otherwise one
# line names what is missing.
optional=()
[ -x /usr/bin/chromium ] || optional+=(chromium)
command -v tmux >/dev/null || optional+=(tmux)
command -v go >/dev/null || optional+=(golang-go)
command -v php >/dev/null || optional+=(php-cli)
{ command -v php >/dev/null && php -r 'exit(extension_loaded("curl") ? 0 : 1);'; } || optional+=(php-curl)
if [ ${#optional[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "install.sh: installing ${optional[*]} (for the browser, client-library and dashboard tests)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${optional[@]}" >/dev/null \
      || fail "apt-get could not install ${optional[*]}"
  else
    echo "install.sh: not installed: ${optional[*]}; the browser, client-library and dashboard tests need them (apt-get install ${optional[*]})" >&2
  fi
fi

# Dependencies: exactly the lock file's versions; skipped when node_modules already matches it
# and its native module loads (it follows the ABI of the Node.js that built it).
stamp=node_modules/.coinkeep-lock-stamp
lockhash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lockhash" ]; then
  npm ci --no-audit --no-fund || fail "npm ci failed (see the lines above)"
  echo "$lockhash" > "$stamp"
elif ! node -e 'new (require("better-sqlite3"))(":memory:").close()' >/dev/null 2>&1; then
  echo "install.sh: rebuilding native modules for Node.js $(node --version)"
  npm rebuild --no-audit --no-fund better-sqlite3 >/dev/null || fail "npm rebuild better-sqlite3 failed"
fi

# The build: skipped when nothing it reads changed since the last successful one.
built=dist/.coinkeep-build-stamp
if [ ! -f "$built" ] || [ -n "$(find src test config scripts tsconfig.json package-lock.json -newer "$built" -print -quit)" ]; then
  npm run --silent build || fail "the TypeScript build failed (see the lines above)"
  touch "$built"
fi

mkdir -p data
chmod 700 data
echo "install.sh: ready. Sandbox: bin/coinkeep dev   Tests: npm test"
