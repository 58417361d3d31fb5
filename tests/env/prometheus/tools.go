//go:build tools

// Package tools pins Prometheus and promtool, for the node's monitoring test (tests/env/build.sh
// prometheus).
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
