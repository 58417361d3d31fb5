#!/usr/bin/env bash
# Installs the SQL client the tests use besides the engines' CLIs: Node's mysql2, the Coffee Manage
# app's own driver, into tests/env/node/node_modules (from the npm registry, once).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -d "$here/node/node_modules/mysql2" ] && exit 0
command -v npm >/dev/null || { echo "tests/env/clients.sh: npm (Node.js) is needed for the mysql2 client" >&2; exit 1; }
npm install --prefix "$here/node" --no-package-lock --no-audit --no-fund --silent >/dev/null
