#!/usr/bin/env bash
# Installs the clients the tests use besides the engines' CLIs: Node's mysql2, the Coffee Manage
# app's own driver, into tests/env/node/node_modules (from the npm registry, once), and Lua 5.4
# (Debian's lua5.4) for the Argo CD health script test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! command -v lua5.4 >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "installing lua5.4 for the Argo CD health script test ..." >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua5.4 >/dev/null
  else
    echo "tests/env/clients.sh: the Argo CD health test needs lua5.4 (Debian package lua5.4)" >&2
  fi
fi
[ -d "$here/node/node_modules/mysql2" ] && exit 0
command -v npm >/dev/null || { echo "tests/env/clients.sh: npm (Node.js) is needed for the mysql2 client" >&2; exit 1; }
npm install --prefix "$here/node" --no-package-lock --no-audit --no-fund --silent >/dev/null
