//go:build tools

// Package tools pins the Prometheus Operator and its config reloader the node's monitoring test
// runs (tests/env/build.sh prometheus). A module of its own: its dependencies and Prometheus's
// (../prometheus/) do not build together.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader"
)
