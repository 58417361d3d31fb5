#!/usr/bin/env bash
# Secret-watch memory benchmark: the operator's peak RSS (release build) with 300 Secrets of about
# 900 KiB elsewhere in the cluster. RDS_OPERATOR_BIN=path measures another build (e.g. an older one);
# BENCH_PROFILE=debug uses the debug build.
#   tests/bench/secrets.sh
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" secrets 4591
