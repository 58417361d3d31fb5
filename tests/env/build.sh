#!/usr/bin/env bash
# Makes sure etcd, kube-apiserver, kube-controller-manager and kubectl exist for the test control
# plane and prints the folder that holds them (the KUBEBUILDER_ASSETS layout used by
# controller-runtime's envtest). `build.sh node` also builds kubelet, kube-scheduler and the pause
# binary, for node.sh. `build.sh helm` builds helm (the chart tests) into
# ${RDS_OPERATOR_CACHE:-~/.cache/rds-operator}/helm-<version>/ and `build.sh kstatus` kstatus (the
# status library Flux's health checks use, sigs.k8s.io/cli-utils; the Flux health test) into
# .../kstatus-<version>/, and print that folder instead: only the tests need them (`build.sh
# shipcheck` too: the dashboard's check, rebuilt when its source changes). `build.sh
# prometheus` builds the Prometheus Operator, Prometheus and promtool (prometheus/) the same way,
# and `build.sh olm` OLM's olm and catalog operators and operator-registry's opm (olm/), beside
# OLM's own chart and upstream values (chart/, values.yaml) from the same module; `build.sh
# operator-sdk` builds operator-sdk from its module's zip (see there why not through a go.mod).
#
# - KUBEBUILDER_ASSETS set (e.g. from `setup-envtest use -p path`): those binaries are used as they are.
# - Otherwise they are built from their Go modules (k8s/ and etcd/ beside this script) into
#   ${RDS_OPERATOR_CACHE:-~/.cache/rds-operator}/k8s-<version>/ and reused from there.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The tools are built inside this repository's checkout: without VCS stamping, a machine with no
# git (a tarball of the repository) builds them too, instead of stopping at "error obtaining VCS
# status".
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false"
K8S_VERSION=1.36.3
HELM_VERSION=3.22.0
KSTATUS_VERSION=0.37.2
KREW_VERSION=0.4.3
OLM_VERSION=0.36.0
OPERATOR_SDK_VERSION=1.42.0
# The SHA-256 of operator-sdk's module zip as the Go module proxy served it on 2026-12-03.
OPERATOR_SDK_ZIP_SHA256=037803c2605486a8649a857242d97874bb9eb36c4a5549996af16dbd545aff47
cache=${RDS_OPERATOR_CACHE:-$HOME/.cache/rds-operator}
bins=(etcd kube-apiserver kube-controller-manager kubectl)

fail() {
  echo "tests/env/build.sh: $*" >&2
  exit 1
}

build() { # build <binary> <module dir, under this folder or absolute> <package> <out dir> <ldflags>
  local bin=$1 dir=$2 pkg=$3 out=$4 ldflags=$5 log="$4/$1.build.log" lock
  [[ $dir = /* ]] || dir=$here/$dir
  [ -x "$out/$bin" ] && return 0
  # One build of a binary at a time (.ci/run builds the node tests' tools in the background while
  # a test may ask for them): a second caller waits for the first, then finds the binary built.
  exec {lock}>"$out/$bin.lock"
  flock "$lock"
  if [ -x "$out/$bin" ]; then
    exec {lock}>&-
    return 0
  fi
  command -v go >/dev/null ||
    fail "cannot build '$bin': no Go toolchain on PATH. Install Go >= 1.26 (https://go.dev/doc/install) or set KUBEBUILDER_ASSETS to a folder with prebuilt binaries."
  echo "building $bin into $out: this takes several minutes the first time..." >&2
  if ! (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$out/$bin.tmp" "$pkg") >"$log" 2>&1; then
    rm -f "$out/$bin.tmp"
    echo "---- last lines of $log ----" >&2
    tail -n 15 "$log" >&2
    fail "building '$bin' from $dir failed (full log: $log). Check that the Go module proxy is reachable (go env GOPROXY) and that Go is >= 1.26, or set KUBEBUILDER_ASSETS to a folder with prebuilt etcd, kube-apiserver and kubectl."
  fi
  mv "$out/$bin.tmp" "$out/$bin"
  exec {lock}>&-
}

# helm and kstatus are for the tests, built when they ask (`make run` builds only what it runs).
if [ "${1:-}" = helm ]; then
helm_out="$cache/helm-$HELM_VERSION"
mkdir -p "$helm_out"
build helm helm helm.sh/helm/v3/cmd/helm "$helm_out" \
  "-X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37"
"$helm_out/helm" version --short >/dev/null 2>&1 ||
  fail "'$helm_out/helm' exists but does not run; delete it and run this script again to rebuild it."
  echo "$helm_out"
  exit 0
fi
if [ "${1:-}" = shipcheck ]; then
  # Checks what ships for others' tools with their own libraries (the Grafana dashboard).
  shipcheck_out="$cache/shipcheck-$(sha256sum "$here/shipcheck/go.sum" "$here/shipcheck/main.go" | sha256sum | cut -c1-12)"
  mkdir -p "$shipcheck_out"
  build shipcheck shipcheck . "$shipcheck_out" ""
  echo "$shipcheck_out"
  exit 0
fi
if [ "${1:-}" = krew ]; then
  # kubectl's plugin manager, for the plugin's install test (tests/integration/plugin.rs).
  krew_out="$cache/krew-$KREW_VERSION"
  mkdir -p "$krew_out"
  build krew krew sigs.k8s.io/krew/cmd/krew "$krew_out" ""
  echo "$krew_out"
  exit 0
fi
if [ "${1:-}" = kstatus ]; then
  kstatus_out="$cache/kstatus-$KSTATUS_VERSION"
  mkdir -p "$kstatus_out"
  build kstatus kstatus . "$kstatus_out" ""
  echo "$kstatus_out"
  exit 0
fi

if [ "${1:-}" = prometheus ]; then
  # The Prometheus Operator, Prometheus, its config reloader and promtool, for the node's
  # monitoring test (tests/env/images.sh), static.
  prom_out="$cache/prometheus"
  mkdir -p "$prom_out"
  export CGO_ENABLED=0
  build prometheus prometheus github.com/prometheus/prometheus/cmd/prometheus "$prom_out" ""
  build promtool prometheus github.com/prometheus/prometheus/cmd/promtool "$prom_out" ""
  build operator prometheus-operator github.com/prometheus-operator/prometheus-operator/cmd/operator "$prom_out" ""
  build prometheus-config-reloader prometheus-operator \
    github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader "$prom_out" ""
  echo "$prom_out"
  exit 0
fi

if [ "${1:-}" = olm ]; then
  # OLM for the node's OLM test (tests/node/olm.rs, tests/env/images.sh olm catalog), static.
  # OLM's module replaces github.com/openshift/api, so olm/go.mod repeats that replace; opm
  # needs json1 (its SQLite) and containers_image_openpgp (else gpgme through cgo).
  olm_out="$cache/olm-$OLM_VERSION"
  mkdir -p "$olm_out"
  export CGO_ENABLED=0 GOFLAGS="-tags=json1,containers_image_openpgp"
  build olm olm github.com/operator-framework/operator-lifecycle-manager/cmd/olm "$olm_out" ""
  build catalog olm github.com/operator-framework/operator-lifecycle-manager/cmd/catalog "$olm_out" ""
  build opm olm github.com/operator-framework/operator-registry/cmd/opm "$olm_out" ""
  olm_src=$(cd "$here/olm" && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)
  # OLM's release manifests are its chart rendered with these values (scripts/package_release.sh).
  # One copy at a time, whole or not at all: .ci/run's background build and the OLM test may both
  # get here (a fresh CI run failed on "cp: cannot create directory .../chart: File exists").
  exec {copy_lock}>"$olm_out/chart.lock"
  flock "$copy_lock"
  if [ ! -d "$olm_out/chart" ]; then
    rm -rf "$olm_out/chart.tmp"
    cp -R "$olm_src/deploy/chart" "$olm_out/chart.tmp"
    chmod -R u+w "$olm_out/chart.tmp"
    mv "$olm_out/chart.tmp" "$olm_out/chart"
  fi
  if [ ! -s "$olm_out/values.yaml" ]; then
    cp "$olm_src/deploy/upstream/values.yaml" "$olm_out/values.yaml.tmp"
    chmod u+w "$olm_out/values.yaml.tmp"
    mv "$olm_out/values.yaml.tmp" "$olm_out/values.yaml"
  fi
  exec {copy_lock}>&-
  echo "$olm_out"
  exit 0
fi

if [ "${1:-}" = operator-sdk ]; then
  # operator-sdk, whose `bundle validate` the OLM bundle's test runs. The Go module proxy serves
  # its module's zip but refuses its go.mod (403 Forbidden for
  # github.com/operator-framework/operator-sdk/@v/v1.42.0.mod; v1.41.1, v1.40.0 and v1.39.2 are
  # refused whole), so no go.mod can require it: the zip is fetched from the proxy, checked against its
  # SHA-256, and built in place with its own go.mod and go.sum, as its Makefile builds it.
  sdk_out="$cache/operator-sdk-$OPERATOR_SDK_VERSION"
  sdk_src="$sdk_out/src/github.com/operator-framework/operator-sdk@v$OPERATOR_SDK_VERSION"
  mkdir -p "$sdk_out"
  if [ ! -x "$sdk_out/operator-sdk" ]; then
    exec {fetch}>"$sdk_out/fetch.lock"
    flock "$fetch"
    if [ ! -s "$sdk_src/go.mod" ]; then
      proxy=$(go env GOPROXY | tr ',|' '\n\n' | grep -m1 '^http') ||
        fail "operator-sdk: GOPROXY ($(go env GOPROXY)) names no module proxy to fetch its zip from"
      zip="$sdk_out/module.zip"
      curl -fsSL -o "$zip" "$proxy/github.com/operator-framework/operator-sdk/@v/v$OPERATOR_SDK_VERSION.zip" ||
        fail "operator-sdk: fetching v$OPERATOR_SDK_VERSION's zip from $proxy failed"
      echo "$OPERATOR_SDK_ZIP_SHA256  $zip" | sha256sum -c --quiet ||
        fail "operator-sdk: the zip from $proxy is not the one this script knows (SHA-256 differs)"
      rm -rf "$sdk_out/src"
      python3 -m zipfile -e "$zip" "$sdk_out/src"
      rm "$zip"
    fi
    exec {fetch}>&-
  fi
  sdk=github.com/operator-framework/operator-sdk/internal/version
  CGO_ENABLED=0 GOFLAGS="-tags=containers_image_openpgp" build operator-sdk "$sdk_src" ./cmd/operator-sdk "$sdk_out" \
    "-X $sdk.Version=v$OPERATOR_SDK_VERSION -X $sdk.GitVersion=v$OPERATOR_SDK_VERSION -X $sdk.KubernetesVersion=v1.33.1"
  echo "$sdk_out"
  exit 0
fi

if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  for b in "${bins[@]}"; do
    [ -x "$KUBEBUILDER_ASSETS/$b" ] ||
      fail "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable '$b'. Point it at a folder holding etcd, kube-apiserver, kube-controller-manager and kubectl (setup-envtest gives the first three; add kube-controller-manager v$K8S_VERSION), or unset it to build them from source."
  done
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

out="$cache/k8s-$K8S_VERSION"
mkdir -p "$out"

v="k8s.io/component-base/version"
minor=${K8S_VERSION#1.}
minor=${minor%%.*}
k8s_ldflags="-X $v.gitVersion=v$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
build kube-apiserver k8s k8s.io/kubernetes/cmd/kube-apiserver "$out" "$k8s_ldflags"
build kube-controller-manager k8s k8s.io/kubernetes/cmd/kube-controller-manager "$out" "$k8s_ldflags"
build kubectl k8s k8s.io/kubernetes/cmd/kubectl "$out" "$k8s_ldflags"
build etcd etcd . "$out" ""
if [ "${1:-}" = node ]; then
  # The node (node.sh): kubelet and kube-scheduler from the same module, and a static pause.
  build kubelet k8s k8s.io/kubernetes/cmd/kubelet "$out" "$k8s_ldflags"
  build kube-scheduler k8s k8s.io/kubernetes/cmd/kube-scheduler "$out" "$k8s_ldflags"
  if [ ! -x "$out/pause" ]; then
    pause_c=$(cd "$here/k8s" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c
    gcc -static -O2 -DVERSION=3.10 -o "$out/pause.tmp" "$pause_c" && mv "$out/pause.tmp" "$out/pause"
  fi
fi

for b in "${bins[@]}"; do
  "$out/$b" --version >/dev/null 2>&1 || "$out/$b" version --client >/dev/null 2>&1 ||
    fail "'$out/$b' exists but does not run; delete it and run this script again to rebuild it."
done
echo "$out"
