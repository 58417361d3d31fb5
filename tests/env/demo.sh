#!/usr/bin/env bash
# `make run`: brings up a local control plane and moto, installs the CRD, runs the operator and
# creates the Coffee Manage sample database, then prints it. `make stop` tears it all down.
# `make run NODE=1` (NODE=1 here): a real node too (tests/env/node.sh), the operator installed by
# helm from the image built here and running as a Pod, and the stand-in Coffee Manage app as a
# Deployment on the node reading the connection Secret (tests/env/images.sh builds both images).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
cache=${RDS_OPERATOR_CACHE:-$HOME/.cache/rds-operator}
run="$cache/run"
cp_dir="$run/controlplane"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$cache/target}
export MOTO_PORT=${MOTO_PORT:-4566}
export AWS_ENDPOINT_URL=${AWS_ENDPOINT_URL:-http://127.0.0.1:$MOTO_PORT}
export AWS_REGION=${AWS_REGION:-us-east-1} AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}
ns=coffee-manage
node=${NODE:-}

stop() {
  if [ -f "$run/operator.pid" ]; then
    kill "$(cat "$run/operator.pid")" 2>/dev/null || true
    rm -f "$run/operator.pid"
  fi
  localstack/moto.sh stop
  tests/env/controlplane.sh stop "$cp_dir"
  echo "stopped"
}

# The node, the images, and the chart installed as a user does (the operator as a Pod).
operator_pod() {
  echo "==> starting a node (kubelet, containerd, kube-scheduler) and importing the images"
  tests/env/node.sh start "$cp_dir"
  tests/env/images.sh import "$cp_dir/node/containerd.sock" operator app
  echo "==> helm install of the chart: the operator runs as a Pod in rds-system"
  "$kubectl" create namespace rds-system --dry-run=client -o yaml | "$kubectl" apply -f -
  "$kubectl" -n rds-system create configmap rds-ca --from-file=ca.crt="$run/ca.pem" \
    --dry-run=client -o yaml | "$kubectl" apply -f -
  "$kubectl" -n rds-system create secret generic aws --from-literal=AWS_ACCESS_KEY_ID=test \
    --from-literal=AWS_SECRET_ACCESS_KEY=test --dry-run=client -o yaml | "$kubectl" apply -f -
  "$(tests/env/build.sh helm)/helm" upgrade --install rds-operator helm/rds-operator --namespace rds-system \
    --set image.repository=rds-operator.test/rds-operator --set image.tag=dev --set image.pullPolicy=Never \
    --set aws.endpointUrl="http://10.88.0.1:$MOTO_PORT" --set aws.region="$AWS_REGION" \
    --set aws.credentials.secretName=aws --set busyPollInterval=2s --set caBundle.configMap=rds-ca
  "$kubectl" -n rds-system rollout status deployment/rds-operator --timeout 120s
}

start() {
  # NODE=1 runs a kubelet and the node's network: what make test needs (root, iproute2).
  tests/env/preflight.sh "$([ "${NODE:-0}" = 1 ] && echo test || echo run)"
  mkdir -p "$run"
  echo "==> building the operator"
  cargo build --locked --quiet
  echo "==> starting the control plane (kube-apiserver + etcd; built from source the first time)"
  kubeconfig=$(tests/env/controlplane.sh start "$cp_dir")
  export KUBECONFIG=$kubeconfig
  kubectl="$cp_dir/kubectl"
  if curl -sf "http://127.0.0.1:$MOTO_PORT/_rds_ext/config" >/dev/null 2>&1; then
    echo "==> using the moto already running on port $MOTO_PORT"
  else
    echo "==> starting moto (the AWS emulator)"
    # Real engines: the sample's MySQL instance is a real MariaDB server on its own loopback address.
    # With a node, in 10.88.1.0/24, which its Pods reach (tests/env/node.sh).
    [ -n "$node" ] && export MOTO_RDS_ENGINE_NETWORK=${MOTO_RDS_ENGINE_NETWORK:-10.88.1}
    MOTO_RDS_ENGINES=${MOTO_RDS_ENGINES:-real} MOTO_RDS_CREATE_DELAY=${MOTO_RDS_CREATE_DELAY:-5} \
      MOTO_RDS_MODIFY_DELAY=${MOTO_RDS_MODIFY_DELAY:-3} MOTO_RDS_DELETE_DELAY=${MOTO_RDS_DELETE_DELAY:-3} \
      localstack/moto.sh start
  fi
  sg=$(AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL "$cache/moto-venv/bin/python" localstack/init/coffee_network.py --get security_group_id)
  # The event feed the network script set up (docs/events.md): drift is put back within seconds.
  queue=$(AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL "$cache/moto-venv/bin/python" localstack/init/coffee_network.py --get events_queue_url)

  # The test bed's CA, in the role of RDS's CA bundle: connection Secrets carry it (ca.crt).
  curl -sf "$AWS_ENDPOINT_URL/_rds_ext/ca.pem" >"$run/ca.pem"

  echo "==> installing the CRD"
  "$kubectl" apply --server-side -f crds/
  "$kubectl" wait --for condition=Established crd/dbinstances.rds.operator.rs crd/dbsubnetgroups.rds.operator.rs crd/dbparametergroups.rds.operator.rs crd/dbclusters.rds.operator.rs crd/dbclusterparametergroups.rds.operator.rs crd/dbsnapshots.rds.operator.rs --timeout 60s

  if [ -n "$node" ]; then
    operator_pod
  else
    echo "==> starting the operator (log: $run/operator.log)"
    "$CARGO_TARGET_DIR/debug/rds-operator" --busy-poll-interval 2s --poll-interval 30s \
      --events-queue-url "$queue" --ca-bundle "$run/ca.pem" >"$run/operator.log" 2>&1 &
    echo $! >"$run/operator.pid"
  fi

  echo "==> applying the Coffee Manage sample in namespace $ns"
  "$kubectl" create namespace "$ns" --dry-run=client -o yaml | "$kubectl" apply -f -
  "$kubectl" -n "$ns" apply -f deploy/examples/coffee-manage/password-secret.yaml
  subnets=$(AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL "$cache/moto-venv/bin/python" localstack/init/coffee_network.py --get subnet_ids)
  "$kubectl" -n "$ns" patch --local -f deploy/examples/coffee-manage/dbsubnetgroup.yaml --type merge \
    -p "{\"spec\":{\"subnetIDs\":[\"${subnets//,/\",\"}\"]}}" -o yaml | "$kubectl" -n "$ns" apply -f -
  "$kubectl" -n "$ns" patch --local -f deploy/examples/coffee-manage/dbinstance.yaml --type merge \
    -p "{\"spec\":{\"vpcSecurityGroupIDs\":[\"$sg\"]}}" -o yaml | "$kubectl" -n "$ns" apply -f -

  echo "==> waiting for the database to be Ready"
  if ! "$kubectl" -n "$ns" wait --for condition=Ready dbi/coffee-db --timeout 180s; then
    "$kubectl" -n "$ns" get dbi coffee-db -o yaml
    tail -n 30 "$run/operator.log"
    exit 1
  fi
  "$kubectl" -n "$ns" get dbsng,dbi -o wide
  "$kubectl" -n "$ns" get dbi coffee-db -o jsonpath='{.status}' | python3 -m json.tool
  if [ -n "$node" ]; then
    # The stand-in app image built here, in place of the lab's.
    "$kubectl" -n "$ns" patch --local -f deploy/examples/coffee-manage/deployment.yaml --type json \
      -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"rds-operator.test/coffee-manage:dev"},{"op":"add","path":"/spec/template/spec/containers/0/imagePullPolicy","value":"Never"}]' \
      -o yaml | "$kubectl" -n "$ns" apply -f -
    "$kubectl" -n "$ns" rollout status deployment/coffee-manage --timeout 120s
    echo "==> the app's first line (its suppliers, read back from COFFEE):"
    sleep 2
    "$kubectl" -n "$ns" logs deployment/coffee-manage | head -n 1
  else
    "$kubectl" -n "$ns" apply -f deploy/examples/coffee-manage/deployment.yaml
  fi
  echo "==> the connection Secret the Coffee Manage Deployment reads (keys only):"
  "$kubectl" -n "$ns" get secret coffee-db-connection -o jsonpath='{.data}' | python3 -c 'import json,sys; print("  " + ", ".join(sorted(json.load(sys.stdin))))'
  # kubectl-rds (cargo build built it beside the operator): kubectl finds it on PATH.
  export PATH="$CARGO_TARGET_DIR/debug:$PATH"
  echo "==> kubectl rds status coffee-db:"
  "$kubectl" rds -n "$ns" status coffee-db
  echo "==> SELECT 1 on COFFEE through kubectl rds connect (the Secret's values, TLS verified with its ca.crt):"
  "$kubectl" rds -n "$ns" connect coffee-db -- -e 'SELECT 1' ||
    echo "  (could not connect: is moto running with MOTO_RDS_ENGINES=real?)"
  cat <<MSG

The operator keeps running. Try:
  export KUBECONFIG=$kubeconfig PATH=$CARGO_TARGET_DIR/debug:\$PATH
  $kubectl -n $ns get dbi,events
  $kubectl rds -n $ns status coffee-db
  $kubectl rds -n $ns connect coffee-db     # the mariadb client, as the Coffee Manage app connects
  $kubectl -n $ns delete dbi coffee-db     # deletes the RDS instance after a final snapshot, then the CR
Stop everything with: make stop
MSG
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
