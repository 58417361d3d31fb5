#!/usr/bin/env bash
# Scale benchmark: runs the operator (release build) on the test bed against a moto at zero delays
# with N DBInstances for each N given (default: 100 1000), and prints
#   time from applying all N to all Ready; the operator's peak RSS; RDS calls per operation over a
#   steady-state window and per instance-hour; drift detection-to-correction latency p50/p99; spec
#   change to ModifyDBInstance latency p50/p99; CPU spent in the operator and in moto.
#
#   tests/bench/scale.sh [N...]
# Environment: BENCH_DRIFT_INTERVAL (10s), BENCH_SAMPLES (50), BENCH_CONCURRENCY (8),
# BENCH_PROFILE (release | debug), BENCH_MOTO_PORT (4590), BENCH_FEED (on | off), BENCH_SAFETY_NET,
# BENCH_PHASES ("steady drift spec"; add "restart"), BENCH_CLUSTERS (C: C Aurora DBClusters with
# two member DBInstances each, instead of the sizes), BENCH_REPLICAS (R: R DBInstances under
# upgradePolicy BlueGreen with a read replica each, instead of the sizes), BENCH_SNAPSHOTS (S: S
# DBSnapshots of ten DBInstances, instead of the sizes), BENCH_SCHEDULES (N: N DBInstances on a
# stop/start schedule of BENCH_WINDOW-minute windows, instead of the sizes), BENCH_SUBSCRIPTIONS (N:
# N EventSubscriptions of ten DBInstances, instead of the sizes), BENCH_INTEGRATIONS (N: N
# Integrations of ten DBClusters), BENCH_SHARD_GROUPS (N: N limitless DBClusters with a DBShardGroup
# each), BENCH_HEALTH (N: N DBInstances with alarms, the health poll every drift interval).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rds-operator/target}
port=${BENCH_MOTO_PORT:-4590}
profile=${BENCH_PROFILE:-release}
tests/env/build.sh >/dev/null
MOTO_PORT=$port MOTO_RDS_CREATE_DELAY=0 MOTO_RDS_MODIFY_DELAY=0 MOTO_RDS_DELETE_DELAY=0 localstack/moto.sh start
trap 'MOTO_PORT=$port localstack/moto.sh stop' EXIT
export BENCH_MOTO_PID
BENCH_MOTO_PID=$(cat "${RDS_OPERATOR_CACHE:-$HOME/.cache/rds-operator}/run/moto-$port.pid")
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
export BENCH_SIZES="${*:-100 1000}"
if [ "$profile" = release ]; then
  cargo bench --locked --bench scale
else
  cargo test --locked --bench scale -- --bench
fi
