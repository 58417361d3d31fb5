#!/usr/bin/env bash
# Runs one `cargo bench` target (release build; BENCH_PROFILE=debug: the debug build) against an
# emulator of its own on PORT (BENCH_MOTO_PORT overrides it), stopped when it ends.
#   tests/bench/run.sh NAME PORT
set -euo pipefail
name=$1
port=${BENCH_MOTO_PORT:-$2}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rds-operator/target}
tests/env/build.sh >/dev/null
MOTO_PORT=$port localstack/moto.sh start
trap 'MOTO_PORT=$port localstack/moto.sh stop' EXIT
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
if [ "${BENCH_PROFILE:-release}" = release ]; then
  cargo bench --locked --bench "$name"
else
  cargo test --locked --bench "$name" -- --bench
fi
