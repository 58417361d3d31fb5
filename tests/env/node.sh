#!/usr/bin/env bash
# A real node for the test control plane (controlplane.sh): containerd (Debian's, with runc and the
# CNI plugins), a CNI bridge, kubelet and kube-scheduler, and a stand-in for kube-proxy. Pods run
# from images built on this machine (images.sh), since no registry is reachable.
#
#   node.sh start CONTROLPLANE_DIR   start the node beside that control plane, wait until it is Ready
#   node.sh stop CONTROLPLANE_DIR    stop it and take away everything it put on the host
#   node.sh install                  install what a node needs when it is missing: Debian's
#                                    containerd, runc, CNI plugins, iptables, and musl-gcc with
#                                    Rust's musl target for the operator's static image
#   node.sh leftovers                what any node left on the host (none: exit 0), waiting up to
#                                    30 s for the stops under way
#
# Everything lives under CONTROLPLANE_DIR/node. Every address is on this machine:
# - the Pods are on the bridge rdsop0 (10.88.0.0/24, the host is 10.88.0.1);
# - the real database servers behind the emulator listen in 10.88.1.0/24 when moto runs with
#   MOTO_RDS_ENGINE_NETWORK=10.88.1 (localstack/moto.sh makes that range local to the host), so a
#   Pod reaches an instance's endpoint through the host;
# - the node's address is 10.88.0.1, where the kubelet serves (the API server reads logs there); a
#   Pod reaching 10.88.0.1:PORT reaches the host's 127.0.0.1:PORT instead (the emulator, the API
#   server), never the kubelet;
#   and the `kubernetes` Service (10.0.0.1:443) reaches the API server: the stand-in for kube-proxy;
# - nothing from the Pod or Service ranges leaves the machine: forwarding out of the bridge is
#   dropped and the Service range is a blackhole route.
# Requires root (it runs containerd and kubelet, and sets up the bridge and iptables).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cmd=${1:-}
cp=${2:-}
dir=${cp:-/nonexistent}/node
bridge=rdsop0
gateway=10.88.0.1
service_ip=10.0.0.1
node=rdsop-node

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# iptables rules, each undone by net_down with -D.
nat_rules() {
  local api_port=$1
  echo "PREROUTING -i $bridge -d $service_ip/32 -p tcp --dport 443 -j DNAT --to-destination 127.0.0.1:$api_port"
  echo "PREROUTING -i $bridge -d $gateway/32 -p tcp -j DNAT --to-destination 127.0.0.1"
}
filter_rules() {
  echo "FORWARD -i $bridge ! -o $bridge -j DROP"
  echo "FORWARD -o $bridge ! -i $bridge -j DROP"
}

net_up() {
  local api_port=$1
  ip link show "$bridge" >/dev/null 2>&1 || ip link add "$bridge" type bridge
  ip addr replace "$gateway/24" dev "$bridge"
  ip link set "$bridge" up
  # DNAT to 127.0.0.1 of what arrives on the bridge.
  sysctl -qw "net.ipv4.conf.$bridge.route_localnet=1"
  sysctl -qw net.ipv4.ip_forward=1
  ip route replace blackhole 10.0.0.0/24
  nat_rules "$api_port" >"$dir/nat.rules"
  filter_rules >"$dir/filter.rules"
  while read -r rule; do
    # shellcheck disable=SC2086
    iptables -t nat -C $rule 2>/dev/null || iptables -t nat -I $rule
  done <"$dir/nat.rules"
  while read -r rule; do
    # shellcheck disable=SC2086
    iptables -C $rule 2>/dev/null || iptables -I $rule
  done <"$dir/filter.rules"
}

net_down() {
  if [ -f "$dir/nat.rules" ]; then
    while read -r rule; do
      # shellcheck disable=SC2086
      while iptables -t nat -D $rule 2>/dev/null; do :; done
    done <"$dir/nat.rules"
  fi
  if [ -f "$dir/filter.rules" ]; then
    while read -r rule; do
      # shellcheck disable=SC2086
      while iptables -D $rule 2>/dev/null; do :; done
    done <"$dir/filter.rules"
  fi
  ip route del blackhole 10.0.0.0/24 2>/dev/null || true
  ip link del "$bridge" 2>/dev/null || true
}

stop() {
  [ -d "$dir" ] || return 0
  stop_pid "$dir" kube-scheduler
  stop_pid "$dir" kubelet
  # The Pods' containers and sandboxes: their shims, then containerd.
  if [ -S "$dir/containerd.sock" ]; then
    for task in $(ctr -a "$dir/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "$dir/containerd.sock" -n k8s.io tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
    done
  fi
  pkill -9 -f "containerd-shim.*-address $dir/containerd.sock" 2>/dev/null || true
  stop_pid "$dir" containerd
  pkill -9 -f "containerd-shim.*-address $dir/containerd.sock" 2>/dev/null || true
  # Mounts under the node's folder (container rootfs, volumes, sandbox /dev/shm), deepest first.
  awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
  # The Pods' network namespaces (containerd names them cni-<uuid>).
  for ns in $(cat "$dir/netns" 2>/dev/null; ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do
    ip netns del "$ns" 2>/dev/null || true
  done
  net_down
  # The Pods' logs are the node's (podLogsDir); the kubelet's links to them in /var/log/containers,
  # a path it does not let be moved, go with them.
  find /var/log/containers -maxdepth 1 -lname "$dir/pods/*" -delete 2>/dev/null || true
  rm -rf "$dir/containerd/state" "$dir/kubelet/pods" "$dir/pods"
}

start() {
  local assets kubeconfig api_port
  assets=$("$here/build.sh" node)
  kubeconfig=$cp/kubeconfig
  [ -f "$kubeconfig" ] || { echo "node.sh: no control plane in $cp (start it with controlplane.sh)" >&2; exit 1; }
  api_port=$(sed -n 's|.*server: https://127.0.0.1:\([0-9]*\).*|\1|p' "$kubeconfig")
  stop
  mkdir -p "$dir/cni" "$dir/containerd" "$dir/kubelet" "$dir/plugins"
  # The kubelet rejects and evicts Pods under DiskPressure (evictionHard below: under 1 % of the
  # disk free), which the tests would only see as Pods that never start; the node's images and
  # containers take about 2 GiB more. Stop here instead, saying so.
  local free size
  read -r free size < <(df -k --output=avail,size "$dir" | tail -n 1)
  if [ "$free" -lt $((size / 100 + 3 * 1024 * 1024)) ]; then
    echo "node.sh: $((free / 1024 / 1024)) GiB free on the disk of $dir: the node needs 1 % of the disk and 3 GiB more, or the kubelet rejects its Pods (DiskPressure). Free some (\$CARGO_TARGET_DIR/debug/incremental can go)." >&2
    exit 1
  fi
  net_up "$api_port"

  cat >"$dir/cni/10-rdsop.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "rdsop",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/24", "gateway": "$gateway"}]],
              "dataDir": "$dir/cni/ipam", "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "loopback"}
  ]
}
CNI
  cat >"$dir/containerd.toml" <<TOML
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$dir/containerd.sock"
[ttrpc]
  address = "$dir/containerd.ttrpc.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "rds-operator.test/pause:3.10"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni"
TOML
  containerd --config "$dir/containerd.toml" >"$dir/containerd.log" 2>&1 &
  echo $! >"$dir/containerd.pid"
  for _ in $(seq 100); do [ -S "$dir/containerd.sock" ] && break; sleep 0.1; done
  "$here/images.sh" import "$dir/containerd.sock" pause

  local kubelet_port healthz_port
  kubelet_port=$(free_port)
  healthz_port=$(free_port)
  cat >"$dir/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $gateway
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
makeIPTablesUtilChains: false
volumePluginDir: $dir/plugins
resolvConf: /etc/resolv.conf
containerRuntimeEndpoint: unix://$dir/containerd.sock
imageServiceEndpoint: unix://$dir/containerd.sock
# The Pods' logs stay in the node's folder (the default, /var/log/pods, outlived every node).
podLogsDir: $dir/pods
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
# Pods' mounted Secrets follow their Secret within about this long (an IAM DBUser's token is
# replaced every 10 s in the node tests; tests/node/tokens.rs).
syncFrequency: 10s
YAML
  "$assets/kubelet" --config "$dir/kubelet.yaml" --kubeconfig "$kubeconfig" --root-dir "$dir/kubelet" \
    --hostname-override "$node" --node-ip "$gateway" --v 1 >"$dir/kubelet.log" 2>&1 &
  echo $! >"$dir/kubelet.pid"
  "$assets/kube-scheduler" --kubeconfig "$kubeconfig" --leader-elect=false \
    --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$(free_port)" >"$dir/kube-scheduler.log" 2>&1 &
  echo $! >"$dir/kube-scheduler.pid"

  local kubectl="$cp/kubectl --kubeconfig $kubeconfig"
  for _ in $(seq 600); do
    if $kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; then
      echo "node $node Ready" >&2
      return 0
    fi
    if exited "$dir" tests/env/node.sh containerd kubelet kube-scheduler; then
      stop
      exit 1
    fi
    sleep 0.1
  done
  stop
  echo "tests/env/node.sh: node not Ready after 60 s (logs in $dir)" >&2
  exit 1
}

install() {
  local missing=()
  for tool in containerd runc iptables; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  command -v musl-gcc >/dev/null || missing+=(musl-tools)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  # Installed, not started: the node runs its own containerd.
  if ((${#missing[@]})) && ! apt_install "the test node" "${missing[@]}"; then
    echo "tests/env/node.sh: the node needs ${missing[*]} (Debian packages) and root" >&2
    exit 1
  fi
  rustup target list --installed | grep -qx x86_64-unknown-linux-musl ||
    rustup target add x86_64-unknown-linux-musl >&2
}

# What a node puts on the host, as it is now: one line each.
host_state() {
  ip link show "$bridge" >/dev/null 2>&1 && echo "the bridge $bridge"
  iptables-save 2>/dev/null | grep -- "$bridge" | sed 's/^/the iptables rule: /'
  ip route show 10.0.0.0/24 2>/dev/null | grep -q blackhole && echo "the blackhole route 10.0.0.0/24"
  awk '$2 ~ /rds-operator-controlplane-|\/node\/(kubelet|containerd)\// {print "the mount " $2}' /proc/mounts
  pgrep -af 'containerd-shim.*/node/containerd.sock' | sed 's/^/the shim /'
  pgrep -af '/node/containerd.toml|k8s-[0-9.]*/kubelet ' | sed 's/^/the process /'
  ip netns list 2>/dev/null | awk '/^cni-/{print "the network namespace " $1}'
  find /var/log/containers -maxdepth 1 -lname '*/node/pods/*' 2>/dev/null | sed 's/^/the log link /'
  return 0
}

leftovers() {
  local state
  for _ in $(seq 300); do
    state=$(host_state)
    [ -z "$state" ] && return 0
    sleep 0.1
  done
  echo "tests/env/node.sh: a node left this on the host:" >&2
  echo "$state" >&2
  exit 1
}

case "$cmd" in
  start) [ -n "$cp" ] || { echo "usage: $0 start CONTROLPLANE_DIR" >&2; exit 2; }; start ;;
  stop) [ -n "$cp" ] || { echo "usage: $0 stop CONTROLPLANE_DIR" >&2; exit 2; }; stop ;;
  install) install ;;
  leftovers) leftovers ;;
  *) echo "usage: $0 start|stop CONTROLPLANE_DIR | install | leftovers" >&2; exit 2 ;;
esac
