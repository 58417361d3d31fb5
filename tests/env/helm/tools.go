//go:build tools

// Package tools pins the command this module builds.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
