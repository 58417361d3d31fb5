#!/usr/bin/env bash
# Runs every test: unit tests, then the integration tests against a real kube-apiserver (started by
# the test harness from tests/env/) and an RDS emulator.
#
# AWS_ENDPOINT_URL set: the tests use that emulator (moto with localstack/moto_ext, or LocalStack).
# Unset: moto is started here (on MOTO_PORT, default 4566) with a 3 s create and 2 s modify/delete
# delay, and stopped at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rds-operator/target}
tests/env/preflight.sh test

assets=$(tests/env/build.sh)
echo "control plane binaries: $assets ($("$assets/kube-apiserver" --version))"

# The tests' own files (each operator's log, CA bundles, rendered manifests, archives, moto's suite
# log) go in one folder of this run's, removed when the run passes and kept, with its name printed,
# when it fails: a run leaves nothing behind in /tmp (a day's runs had left 2,500 files there).
work=$(mktemp -d "${TMPDIR:-/tmp}/rds-operator-tests.XXXXXX")
export TMPDIR=$work
# What this script started, stopped when it ends however it ends: moto, and moto's suite while it
# runs beside the integration tests.
stop_moto=0 suite=
cleanup() {
  status=$?
  if [ -n "$suite" ]; then kill -- -"$suite" 2>/dev/null || true; fi
  if [ "$stop_moto" = 1 ]; then localstack/moto.sh stop; fi
  if [ "$status" = 0 ]; then rm -rf "$work"; else echo "the tests' files (the operators' logs among them) are kept in $work" >&2; fi
}
trap cleanup EXIT

if [ -z "${AWS_ENDPOINT_URL:-}" ]; then
  port=${MOTO_PORT:-4566}
  if curl -sf "http://127.0.0.1:$port/_rds_ext/config" >/dev/null 2>&1; then
    echo "using the moto already running on port $port"
  else
    # The real database servers in 10.88.1.0/24, which the test node's Pods reach (tests/env/node.sh).
    # MOTO_EXT_STRICT: every reply is checked against RDS's service model (moto_ext/model_check.py).
    # MOTO_RDS_MAX_ENGINES: room for the real servers eight tests make at once (each is small).
    MOTO_EXT_STRICT=${MOTO_EXT_STRICT:-1} MOTO_RDS_ENGINE_NETWORK=${MOTO_RDS_ENGINE_NETWORK:-10.88.1} \
      MOTO_RDS_MAX_ENGINES=${MOTO_RDS_MAX_ENGINES:-24} \
      MOTO_RDS_CREATE_DELAY=${MOTO_RDS_CREATE_DELAY:-3} MOTO_RDS_MODIFY_DELAY=${MOTO_RDS_MODIFY_DELAY:-2} \
      MOTO_RDS_DELETE_DELAY=${MOTO_RDS_DELETE_DELAY:-2} MOTO_RDS_SNAPSHOT_DELAY=${MOTO_RDS_SNAPSHOT_DELAY:-3} \
      MOTO_RDS_EXPORT_DELAY=${MOTO_RDS_EXPORT_DELAY:-6} localstack/moto.sh start
    stop_moto=1
  fi
  export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
fi
export AWS_REGION=${AWS_REGION:-us-east-1}
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}

# mysql2, the Coffee Manage app's driver, for the tests that connect with a Secret's uri.
tests/env/clients.sh
# What the node tests' node needs (containerd, runc, CNI plugins, iptables, musl-gcc).
tests/env/node.sh install

# Every target of every crate is built first (the benches too, which run only under `cargo bench`: they measure,
# and test nothing); then the unit tests, the integration tests eight at a time (they wait on the
# emulator's delays far more than they compute: 136 tests took 641 s four at a time and 351 s eight
# at a time, the two cores 60 % idle at four), and the node tests, all four at once (they share one
# node and wait on its Pods).
cargo test --locked --workspace --all-targets --no-run
cargo test --locked --workspace --lib --bins -- --show-output
# moto's own RDS tests with moto_ext loaded (in-process, about 50 s), beside the integration tests,
# which leave a core mostly idle (beside the crate's build they slowed it from 104 s to 193 s): a
# failure not listed in localstack/suite/known_failures.txt, with the AWS page that shows RDS does
# otherwise, fails the run. Its own process group, stopped whole if the run stops first.
suite_log=$(mktemp)
setsid localstack/moto.sh suite -W ignore::DeprecationWarning --tb=short >"$suite_log" 2>&1 &
suite=$!
cargo test --locked --test integration -- --show-output --test-threads "${INTEGRATION_TEST_THREADS:-8}"
suite_ok=0
wait "$suite" || suite_ok=$?
suite=
cat "$suite_log"
[ "$suite_ok" = 0 ] || { echo "moto's suite failed (above)" >&2; exit 1; }
# The node's operator image is the debug binary this build made (tests/env/images.sh), not a second,
# release build of the crate. A thread per node test: they mostly wait (two token lives, a
# rotation under load), and with one waiting for a free thread the run took two minutes longer.
OPERATOR_BUILD=${OPERATOR_BUILD:-debug} cargo test --locked --test node -- --show-output \
  --test-threads "${NODE_TEST_THREADS:-6}"

# Every reply the emulator gave kept RDS's service model (kept only where it runs strict).
if violations=$(curl -sf "$AWS_ENDPOINT_URL/_rds_ext/model-violations") && [ "$violations" != "[]" ]; then
  echo "the emulator's replies broke RDS's service model (localstack/moto_ext/model_check.py):" >&2
  echo "$violations" | python3 -m json.tool >&2
  exit 1
fi

# The node tests' node is gone, and took with it all it put on the host.
tests/env/node.sh leftovers
