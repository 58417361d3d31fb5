#!/usr/bin/env bash
# Secret-watch memory benchmark: the operator's peak RSS (release build) with 300 Secrets of about
# 900 KiB elsewhere in the cluster. RDS_OPERATOR_BIN=path measures another build (e.g. an older one);
# BENCH_PROFILE=debug uses the debug build.
#   tests/bench/secrets.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rds-operator/target}
port=${BENCH_MOTO_PORT:-4591}
tests/env/build.sh >/dev/null
MOTO_PORT=$port localstack/moto.sh start
trap 'MOTO_PORT=$port localstack/moto.sh stop' EXIT
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
if [ "${BENCH_PROFILE:-release}" = release ]; then
  cargo bench --locked --bench secrets
else
  cargo test --locked --bench secrets -- --bench
fi
