#!/usr/bin/env bash
# IAM token benchmark: 1,000 DBUsers with auth IAM on one real MariaDB instance, their tokens kept
# fresh (tests/bench/tokens.rs says what it measures). BENCH_USERS, BENCH_REFRESH, BENCH_WINDOW;
# BENCH_PROFILE=debug uses the debug build.
#   tests/bench/tokens.sh
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" tokens 4592
