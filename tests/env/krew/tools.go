//go:build tools

// Builds krew, kubectl's plugin manager, for the plugin's install test (see ../build.sh).
package tools

import _ "sigs.k8s.io/krew/cmd/krew"
