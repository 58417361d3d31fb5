# What the test bed's scripts share; sourced, not run.

# stop_pid DIR NAME: stops the process DIR/NAME.pid names (TERM, then KILL after 10 s) and removes
# the file.
stop_pid() {
  local pidfile="$1/$2.pid"
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

# exited DIR SCRIPT NAME...: true, after showing its log's last lines, when one of the processes
# DIR/NAME.pid names has exited (during start-up: the caller stops the rest and fails).
exited() {
  local dir=$1 script=$2 name
  shift 2
  for name in "$@"; do
    kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null && continue
    echo "---- last lines of $dir/$name.log ----" >&2
    tail -n 20 "$dir/$name.log" >&2
    echo "$script: $name exited during start-up (log: $dir/$name.log)" >&2
    return 0
  done
  return 1
}

# apt_install WHAT PACKAGE...: installs Debian packages for WHAT, without starting their services;
# returns 2 at once when it cannot (no apt-get, or not root), for the caller to decide.
apt_install() {
  local what=$1 status
  shift
  command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] || return 2
  echo "installing $* for $what ..." >&2
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  status=$?
  rm -f /usr/sbin/policy-rc.d
  return $status
}
