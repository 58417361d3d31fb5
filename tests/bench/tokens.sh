#!/usr/bin/env bash
# IAM token benchmark: 1,000 DBUsers with auth IAM on one real MariaDB instance, their tokens kept
# fresh (tests/bench/tokens.rs says what it measures). BENCH_USERS, BENCH_REFRESH, BENCH_WINDOW;
# BENCH_PROFILE=debug uses the debug build.
#   tests/bench/tokens.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rds-operator/target}
port=${BENCH_MOTO_PORT:-4592}
tests/env/build.sh >/dev/null
MOTO_PORT=$port localstack/moto.sh start
trap 'MOTO_PORT=$port localstack/moto.sh stop' EXIT
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
if [ "${BENCH_PROFILE:-release}" = release ]; then
  cargo bench --locked --bench tokens
else
  cargo test --locked --bench tokens -- --bench
fi
