#!/usr/bin/env bash
# Renders the chart with its default values into the plain manifests of deploy/ (the operator-sdk
# layout): crd.yaml, service_account.yaml, role.yaml, role_binding.yaml, operator.yaml; and copies
# the chart's Grafana dashboard to grafana-dashboard.json (for a Grafana without the sidecar).
#   helm/render-deploy.sh [OUT_DIR]   (default: deploy/)
# A test renders into a temporary folder and fails when deploy/ differs (run `make manifests`).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here/../deploy}
helm=${HELM:-$("$here/../tests/env/build.sh" helm)/helm}
mkdir -p "$out"
"$helm" template rds-operator "$here/rds-operator" --namespace rds-system --include-crds |
  python3 -c '
import sys
out = sys.argv[1]
files = {
    "CustomResourceDefinition": "crd.yaml",
    "ValidatingAdmissionPolicy": "crd.yaml",
    "ValidatingAdmissionPolicyBinding": "crd.yaml",
    "ServiceAccount": "service_account.yaml",
    "ClusterRole": "role.yaml",
    "Role": "role.yaml",
    "ClusterRoleBinding": "role_binding.yaml",
    "RoleBinding": "role_binding.yaml",
    "Deployment": "operator.yaml",
    "Service": "operator.yaml",
}
docs = {}
for doc in sys.stdin.read().split("\n---\n"):
    lines = [l for l in doc.strip().splitlines() if not l.startswith("# Source:")]
    kind = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("kind:")), None)
    if kind is None:
        continue
    if kind not in files:
        sys.exit(f"render-deploy.sh: no deploy/ file for kind {kind}")
    docs.setdefault(files[kind], []).append("\n".join(lines))
header = "# Generated from helm/rds-operator (default values, namespace rds-system) by `make manifests`: do not edit.\n"
for name, parts in docs.items():
    with open(f"{out}/{name}", "w") as f:
        f.write(header + "---\n" + "\n---\n".join(parts) + "\n")
' "$out"
cp "$here/rds-operator/dashboards/rds-operator.json" "$out/grafana-dashboard.json"
