#!/usr/bin/env bash
# A real Kubernetes control plane for tests and local runs: etcd + kube-apiserver, as
# controller-runtime's envtest runs it, plus kube-controller-manager with the controllers a cluster
# needs for owner references, namespace deletion, ServiceAccounts, Deployments and Service
# endpoints. No node: node.sh adds one (kubelet, containerd, kube-scheduler) beside it.
#
#   controlplane.sh start [DIR]   start in DIR (default ~/.cache/rds-operator/run/controlplane),
#                                 write DIR/kubeconfig, wait until the API server is ready
#   controlplane.sh stop [DIR]    stop what start started
#
# CONTROLPLANE_WATCH_PID=<pid>: stop by itself when that process ends (used by the Rust test harness,
# so a test binary that dies never leaves servers behind).
# Ports are picked free at start. Authentication: a static admin token (group system:masters) in the
# kubeconfig; authorization: RBAC, so tests can also act as restricted ServiceAccounts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cmd=${1:-}
dir=${2:-${RDS_OPERATOR_CACHE:-$HOME/.cache/rds-operator}/run/controlplane}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

stop() {
  # A node beside it (node.sh) goes first: its kubelet talks to this API server.
  [ -d "$dir/node" ] && "$here/node.sh" stop "$dir"
  for name in kube-controller-manager kube-apiserver etcd; do
    stop_pid "$dir" "$name"
  done
  # The logs stay for a look afterwards; the data goes (a node's images are 1.5 GB, and every run
  # makes a directory of its own). Before the watcher: this may be the watcher.
  rm -rf "$dir/etcd" "$dir/node/containerd/root" 2>/dev/null || true
  stop_pid "$dir" watcher
}

start() {
  local assets
  assets=$("$here/build.sh")
  [ -f "$dir/kube-apiserver.pid" ] && kill -0 "$(cat "$dir/kube-apiserver.pid")" 2>/dev/null && {
    echo "control plane already running in $dir (stop it with: $0 stop $dir)" >&2
    exit 1
  }
  rm -rf "$dir"
  mkdir -p "$dir/certs" "$dir/etcd"
  local etcd_port peer_port api_port token
  etcd_port=$(free_port)
  peer_port=$(free_port)
  api_port=$(free_port)
  token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
  echo "$token,admin,admin,system:masters" >"$dir/tokens.csv"
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  # A CA and the API server's certificate, for 127.0.0.1 and the `kubernetes` Service (10.0.0.1, and
  # its names), so every client verifies it: the kubeconfig here, and Pods through kube-root-ca.crt.
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/certs/ca.key" -out "$dir/certs/ca.crt" \
    -days 30 -subj "/CN=rds-operator-test-ca" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$dir/certs/apiserver.key" -out "$dir/certs/apiserver.csr" \
    -subj "/CN=kube-apiserver" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' \
    >"$dir/certs/apiserver.ext"
  openssl x509 -req -in "$dir/certs/apiserver.csr" -CA "$dir/certs/ca.crt" -CAkey "$dir/certs/ca.key" \
    -CAcreateserial -days 30 -extfile "$dir/certs/apiserver.ext" -out "$dir/certs/apiserver.crt" 2>/dev/null

  "$assets/etcd" --name test --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "test=http://127.0.0.1:$peer_port" --unsafe-no-fsync --log-level warn \
    >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"

  # Audit: every request of a ServiceAccount (the operator under the chart's RBAC), as metadata,
  # so the node tests can tell which of its Role's verbs it uses and that none was refused.
  cat >"$dir/audit-policy.yaml" <<POLICY
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
POLICY
  "$assets/kube-apiserver" --advertise-address 127.0.0.1 --bind-address 127.0.0.1 --secure-port "$api_port" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --tls-cert-file "$dir/certs/apiserver.crt" --tls-private-key-file "$dir/certs/apiserver.key" \
    --kubelet-preferred-address-types InternalIP,Hostname \
    --audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/audit.log" \
    --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true \
    --authorization-mode RBAC --token-auth-file "$dir/tokens.csv" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$dir/sa.key" --service-account-signing-key-file "$dir/sa.key" \
    >"$dir/kube-apiserver.log" 2>&1 &
  echo $! >"$dir/kube-apiserver.pid"

  cat >"$dir/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $(base64 -w0 "$dir/certs/ca.crt")
users:
- name: admin
  user:
    token: $token
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
KUBECONFIG
  chmod 600 "$dir/kubeconfig"
  ln -sf "$assets/kubectl" "$dir/kubectl"

  if [ -n "${CONTROLPLANE_WATCH_PID:-}" ]; then
    (
      trap '' HUP
      while kill -0 "$CONTROLPLANE_WATCH_PID" 2>/dev/null; do sleep 1; done
      "$0" stop "$dir"
    ) </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/watcher.pid"
  fi

  for _ in $(seq 600); do
    if "$assets/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /readyz >/dev/null 2>&1; then
      "$assets/kube-controller-manager" --kubeconfig "$dir/kubeconfig" \
        --controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,root-ca-certificate-publisher-controller,deployment-controller,replicaset-controller,endpoints-controller,endpointslice-controller,pod-garbage-collector-controller,node-lifecycle-controller,statefulset-controller,daemonset-controller \
        --root-ca-file "$dir/certs/ca.crt" --leader-elect=false \
        --bind-address 127.0.0.1 --secure-port 0 \
        >"$dir/kube-controller-manager.log" 2>&1 &
      echo $! >"$dir/kube-controller-manager.pid"
      echo "control plane ready: $("$assets/kubectl" --kubeconfig "$dir/kubeconfig" version 2>/dev/null | grep Server) at https://127.0.0.1:$api_port" >&2
      echo "$dir/kubeconfig"
      return 0
    fi
    if exited "$dir" tests/env/controlplane.sh etcd kube-apiserver; then
      stop
      exit 1
    fi
    sleep 0.1
  done
  stop
  echo "tests/env/controlplane.sh: kube-apiserver not ready after 60 s (log: $dir/kube-apiserver.log)" >&2
  exit 1
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
