#!/usr/bin/env bash
# What `make run` (preflight.sh run) and `make test` (preflight.sh test) need before they start,
# checked at once: what Debian's apt can install is installed when this runs as root; for the
# rest, it stops with the one command that installs it (README, "Two commands").
#
#   both: make, curl, openssl, python3 with venv, a C compiler and the C library's headers (gcc,
#         libc6-dev: Rust's linker, and the C parts of the AWS SDK's TLS), Rust through rustup
#         (cargo, rustfmt, clippy),
#         Go >= 1.26 (the control plane is built from its Go modules), MariaDB's and PostgreSQL's
#         clients and servers (moto.sh installs them)
#   test: Node.js and npm (the Coffee Manage app and its TLS tests run on node), root and iproute2
#         (moto.sh makes the real servers' network 10.88.1.0/24 local with `ip route`, so the test
#         node's Pods reach them; the node tests run a kubelet)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. tests/env/lib.sh
what=${1:-test}

apt_packages=()
fail=()
need() { # need COMMAND PACKAGE...: the Debian packages that give COMMAND, when it is missing
  command -v "$1" >/dev/null || apt_packages+=("${@:2}")
}
need make make
need curl curl
need openssl openssl
need cc gcc libc6-dev
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_packages+=(python3-venv)
if [ "$what" = test ]; then
  need node nodejs
  need npm npm
  need ip iproute2
fi
if ((${#apt_packages[@]})); then
  status=0
  apt_install "make $what" "${apt_packages[@]}" || status=$?
  if [ "$status" != 0 ]; then
    fail+=("sudo apt-get install -y ${apt_packages[*]}")
  fi
fi

if ! command -v rustup >/dev/null || ! command -v cargo >/dev/null; then
  fail+=("curl --proto '=https' -sSf https://sh.rustup.rs | sh   # Rust through rustup (cargo, rustfmt, clippy)")
fi
go_version=$(go env GOVERSION 2>/dev/null | sed 's/^go//') || go_version=
if [ -z "$go_version" ] || [ "$(printf '%s\n1.26\n' "$go_version" | sort -V | head -1)" != 1.26 ]; then
  fail+=("install Go 1.26 or later (https://go.dev/doc/install): the control plane is built from its Go modules${go_version:+ (found $go_version)}")
fi
if [ "$what" = test ] && [ "$(id -u)" != 0 ]; then
  fail+=("sudo make test   # root: the real servers' network is made local with ip route, and the node tests run a kubelet")
fi

if ((${#fail[@]})); then
  echo "make $what cannot start; first run:" >&2
  printf '  %s\n' "${fail[@]}" >&2
  exit 1
fi
