#!/usr/bin/env bash
# The AWS emulator for tests and local runs: moto in server mode (pinned in requirements.txt) with the
# time-faithful RDS extension in moto_ext/.
#
#   moto.sh install   install the real engines' Debian packages when missing, and create/refresh the virtualenv (${RDS_OPERATOR_CACHE:-~/.cache/rds-operator}/moto-venv)
#   moto.sh start     install if needed, start on 127.0.0.1:${MOTO_PORT:-4566}, wait until it answers,
#                     create the sample network (init/coffee_network.py)
#   moto.sh stop      stop the one on ${MOTO_PORT:-4566}
#   moto.sh suite     moto's own RDS tests (tests/test_rds/ of its source distribution at the pinned
#                     version, from PyPI), in-process with moto_ext installed (suite/conftest.py);
#                     a failure not listed in suite/known_failures.txt fails it
#
# Delays (seconds) of the RDS state machine: MOTO_RDS_CREATE_DELAY, MOTO_RDS_MODIFY_DELAY,
# MOTO_RDS_DELETE_DELAY (default 0: instances are available at once), and of a manual DB snapshot,
# MOTO_RDS_SNAPSHOT_DELAY (default 0), and of a snapshot export, MOTO_RDS_EXPORT_DELAY (default: the
# snapshot delay).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tests/env/lib.sh
. "$here/../tests/env/lib.sh"
cache=${RDS_OPERATOR_CACHE:-$HOME/.cache/rds-operator}
venv="$cache/moto-venv"
run="$cache/run"
port=${MOTO_PORT:-4566}
stamp="$venv/.requirements"
pidfile="$run/moto-$port.pid"

# The real database servers moto_ext/engines.py starts (MOTO_RDS_ENGINES=real, or the tag
# moto-ext:real-engine=true): Debian's MariaDB and PostgreSQL, installed without starting their
# services.
engines() {
  local missing=()
  command -v mariadbd >/dev/null || missing+=(mariadb-server)
  command -v mariadb >/dev/null || missing+=(mariadb-client)
  [ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql)
  command -v psql >/dev/null || missing+=(postgresql-client)
  ((${#missing[@]})) || return 0
  local status=0
  apt_install "moto's real engines" "${missing[@]}" || status=$?
  if [ "$status" = 2 ]; then
    echo "localstack/moto.sh: real engines need ${missing[*]} (Debian packages); install them for the tests that connect" >&2
    return 0
  fi
  return $status
}

install() {
  engines
  if [ -x "$venv/bin/python" ] && cmp -s "$here/requirements.txt" "$stamp"; then
    return 0
  fi
  command -v python3 >/dev/null || { echo "localstack/moto.sh: python3 (>= 3.9) is needed to run moto" >&2; exit 1; }
  echo "installing moto into $venv ..." >&2
  python3 -m venv "$venv" || { echo "localstack/moto.sh: cannot create a virtualenv; install python3-venv (apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt" ||
    { echo "localstack/moto.sh: pip could not install $(grep -v '^#' "$here/requirements.txt"); check access to PyPI" >&2; exit 1; }
  cp "$here/requirements.txt" "$stamp"
}

start() {
  install
  mkdir -p "$run"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "moto already running on port $port (pid $(cat "$pidfile")); stop it with: $0 stop" >&2
    exit 1
  fi
  # MOTO_RDS_ENGINE_NETWORK=10.88.1: the real database servers listen in 10.88.1.0/24, made local to
  # this host here (as loopback addresses are), so Pods on the test node (tests/env/node.sh) reach
  # an instance's endpoint as clients on the host do.
  if [ -n "${MOTO_RDS_ENGINE_NETWORK:-}" ]; then
    ip route replace local "$MOTO_RDS_ENGINE_NETWORK.0/24" dev lo
    echo "$MOTO_RDS_ENGINE_NETWORK" >"$run/moto-$port.network"
  fi
  # moto counts automated snapshots (one per instance with backups) against the manual snapshot
  # quota, 1000 by default, and then fails CreateDBInstance; AWS does not count them.
  MOTO_RDS_SNAPSHOT_LIMIT=${MOTO_RDS_SNAPSHOT_LIMIT:-1000000} \
    "$venv/bin/python" "$here/run_moto.py" --port "$port" >"$run/moto-$port.log" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 300); do
    if curl -sf "http://127.0.0.1:$port/_rds_ext/config" >/dev/null 2>&1; then
      echo "moto ready at http://127.0.0.1:$port ($(curl -s "http://127.0.0.1:$port/_rds_ext/config"))" >&2
      AWS_ENDPOINT_URL="http://127.0.0.1:$port" "$venv/bin/python" "$here/init/coffee_network.py" >&2
      return 0
    fi
    kill -0 "$(cat "$pidfile")" 2>/dev/null || break
    sleep 0.1
  done
  tail -n 20 "$run/moto-$port.log" >&2
  echo "localstack/moto.sh: moto did not start on port $port (log: $run/moto-$port.log)" >&2
  exit 1
}

stop() {
  if [ -f "$pidfile" ]; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$(cat "$pidfile")" 2>/dev/null || break; sleep 0.1; done
    rm -f "$pidfile"
  fi
  stop_engines "${MOTO_RDS_ENGINES_DIR:-/tmp/moto-rds-engines-$port}"
  if [ -f "$run/moto-$port.network" ]; then
    ip route del local "$(cat "$run/moto-$port.network").0/24" dev lo 2>/dev/null || true
    rm -f "$run/moto-$port.network"
  fi
}

# Real database servers under the folder $1 that their moto could not stop (killed, or moto's suite,
# whose in-process backends are dropped, not deleted: moto_ext/engines.py), their folder, and the
# PAM services of their PostgreSQL servers' IAM logins (engines.py, _write_hba).
stop_engines() {
  local engines=$1 dir
  pkill -f -- "$engines/" 2>/dev/null || true
  for _ in $(seq 50); do pgrep -f -- "$engines/" >/dev/null || break; sleep 0.1; done
  for dir in "$engines"/*/; do
    [ -d "$dir" ] && rm -f "/etc/pam.d/rds-iam-$(basename "$dir")"
  done
  rm -rf "$engines"
}

# moto's source distribution at the pinned version, as PyPI served it on 2026-12-04.
MOTO_SDIST_SHA256=391857257d5dac144334013c2c10e599def5f0562f553e979160140bd7bd9cf6

suite() {
  install
  local version dir
  version=$(sed -n 's/^moto\[server\]==//p' "$here/requirements.txt")
  dir="$cache/moto-suite-$version"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/suite/requirements.txt"
  if [ ! -d "$dir/tests/test_rds" ]; then
    local tmp
    tmp=$(mktemp -d)
    "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: -d "$tmp" "moto==$version"
    echo "$MOTO_SDIST_SHA256  $tmp/moto-$version.tar.gz" | sha256sum -c --quiet ||
      { echo "localstack/moto.sh: moto-$version.tar.gz is not the one pinned" >&2; exit 1; }
    mkdir -p "$dir.tmp"
    tar -xzf "$tmp/moto-$version.tar.gz" -C "$dir.tmp" --strip-components=1 \
      "moto-$version/tests/__init__.py" "moto-$version/tests/conftest.py" \
      "moto-$version/tests/markers.py" "moto-$version/tests/test_rds"
    # The CloudFormation tests need moto's CloudFormation fixtures, which are not RDS's.
    rm -f "$dir.tmp/tests/test_rds/test_rds_cloudformation.py"
    rm -rf "$tmp" "$dir"
    mv "$dir.tmp" "$dir"
  fi
  cp "$here/suite/conftest.py" "$dir/conftest.py"
  # Beside it, the emulator's own tests of what holds it to RDS (suite/test_*.py).
  rm -rf "$dir/ext" && mkdir -p "$dir/ext" && cp "$here"/suite/test_*.py "$dir/ext/"
  # In-process: an AWS_ENDPOINT_URL (the test bed's server) would send moto's tests to it. The real
  # servers its tests started are stopped when it ends, however it ends (a run left them running).
  local engines=/tmp/moto-rds-engines-suite
  trap "stop_engines $engines" EXIT
  trap 'exit 143' TERM
  (cd "$dir" && unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_RDS AWS_PROFILE &&
    MOTO_EXT_DIR="$here" MOTO_SUITE_LIST="$here/suite/known_failures.txt" \
    MOTO_RDS_ENGINES_DIR="$engines" MOTO_RDS_ENGINE_NETWORK=127.0.3 \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_rds ext "$@")
}

case "${1:-}" in
  install) install ;;
  suite) shift; suite "$@" ;;
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
