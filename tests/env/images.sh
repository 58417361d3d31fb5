#!/usr/bin/env bash
# The images the test node runs, built on this machine (no registry is reachable) into
# ${RDS_OPERATOR_CACHE:-~/.cache/rds-operator}/images/ and imported into the node's containerd:
#
#   images.sh build NAME...                 build (when missing or older than their inputs)
#   images.sh import CONTAINERD_SOCKET NAME...  build, then import into containerd's k8s.io namespace
#
# NAME is one of:
# - pause:     rds-operator.test/pause:3.10, Kubernetes' build/pause/linux/pause.c, static;
# - operator:  rds-operator.test/rds-operator:dev, the Dockerfile's runtime stage file for file: the
#              static (musl) release binary as /rds-operator (or, with OPERATOR_BUILD=debug, the
#              debug build and its shared libraries), the CA certificates and the nonroot user
#              (65532) distroless/static-debian12:nonroot provides, no shell;
# - app:       rds-operator.test/coffee-manage:dev, the stand-in Coffee Manage app
#              (tests/env/app/): Node.js with mysql2, reading only the four APP_DB_* variables;
# - prometheus-operator, prometheus, prometheus-config-reloader: rds-operator.test/<name>:dev, the
#              static binaries of `build.sh prometheus`, as their upstream images run them;
# - olm:       rds-operator.test/olm:dev, OLM's olm and catalog operators (`build.sh olm`) as
#              /bin/olm and /bin/catalog, as OLM's upstream image has them;
# - catalog:   rds-operator.test/rds-operator-catalog:dev, a file-based catalog of bundle/ (the
#              package, its alpha channel and the bundle as `opm render` makes it, manifests
#              inlined) served by `opm serve`, as an operator-registry catalog image does.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${RDS_OPERATOR_CACHE:-$HOME/.cache/rds-operator}
out=$cache/images
mkdir -p "$out"
target=x86_64-unknown-linux-musl

# /etc/passwd and /etc/group as distroless's nonroot variant has them.
etc_files() {
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$out/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$out/group"
}

# The shared libraries a dynamically linked binary needs, as image.py entries.
libs_of() {
  ldd "$1" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
    echo "$lib=$(readlink -f "$lib")"
  done
}

# The JavaScript a Node.js binary loads from /usr/share/nodejs at start, as image.py entries:
# Debian's nodejs externalizes builtins (cjs-module-lexer, undici, acorn) there, and without them
# node aborts with 'Cannot load externalized builtin'; a node that embeds them has none.
node_builtins() {
  local file
  for file in "$@"; do
    grep -aohE '/usr/share/nodejs/[A-Za-z0-9_./@-]+[.]js' "$file" || true
  done | sort -u | while read -r js; do
    [ -f "$js" ] && echo "${js#/}=$js"
  done
}

build_pause() {
  local assets
  assets=$("$here/build.sh" node)
  python3 "$here/image.py" "$out/pause.tar" rds-operator.test/pause:3.10 --user 65535:65535 \
    --entrypoint '["/pause"]' "pause=$assets/pause"
}

# OPERATOR_BUILD=release (the default): the static musl release build the Dockerfile ships.
# OPERATOR_BUILD=debug (the tests, tests/run.sh): the debug binary the test build already made
# (cargo test --all-targets builds it), with the shared libraries it links: the same layout, user
# and entry point, without a second build of the crate (about 4 minutes on 2 cores).
build_operator() {
  local target_dir=${CARGO_TARGET_DIR:-$cache/target} bin libs=()
  if [ "${OPERATOR_BUILD:-release}" = debug ]; then
    # The binary `cargo test` built for the tests (they run it as CARGO_BIN_EXE_rds-operator):
    # `cargo build`, even under the test profile, resolves the dependencies' features without the
    # dev-dependencies and builds the crate a second time (69 s of the node tests' start in CI).
    (cd "$root" && cargo test --quiet --locked --no-run --test node --target-dir "$target_dir") >&2
    # Without its debug information (about 560 MiB of the binary's 600).
    strip -o "$out/rds-operator-debug" "$target_dir/debug/rds-operator"
    bin=$out/rds-operator-debug
    # shellcheck disable=SC2207
    libs=($(libs_of "$bin"))
  else
    rustup target list --installed | grep -qx "$target" || rustup target add "$target" >&2
    command -v musl-gcc >/dev/null || { echo "images.sh: musl-gcc missing (apt-get install musl-tools)" >&2; exit 1; }
    (cd "$root" && CC_x86_64_unknown_linux_musl=musl-gcc cargo build --quiet --release --locked \
      --target "$target" --bin rds-operator --target-dir "$target_dir") >&2
    bin=$target_dir/$target/release/rds-operator
  fi
  etc_files
  python3 "$here/image.py" "$out/operator.tar" rds-operator.test/rds-operator:dev --user 65532:65532 \
    --entrypoint '["/rds-operator"]' --cmd '["run"]' \
    "rds-operator=$bin" "${libs[@]}" "etc/ssl/certs/ca-certificates.crt=/etc/ssl/certs/ca-certificates.crt" \
    "etc/passwd=$out/passwd" "etc/group=$out/group" tmp/ home/nonroot/
}

build_app() {
  "$here/clients.sh" >/dev/null
  local node_bin libs
  node_bin=$(readlink -f "$(command -v node)")
  libs=$(libs_of "$node_bin")
  etc_files
  # shellcheck disable=SC2046,SC2086
  python3 "$here/image.py" "$out/app.tar" rds-operator.test/coffee-manage:dev --user 65532:65532 \
    --entrypoint '["/usr/bin/node", "/app/app.js"]' --workdir /app \
    "usr/bin/node=$node_bin" $libs $(node_builtins "$node_bin" $(echo "$libs" | sed 's/.*=//')) \
    "app/app.js=$here/app/app.js" "app/node_modules=$here/node/node_modules" \
    "etc/passwd=$out/passwd" "etc/group=$out/group" tmp/
}

# A static Go binary of `build.sh prometheus` as its upstream image runs it (nobody, /bin/NAME).
build_prometheus_part() {
  local name=$1 bin=$2 prom
  prom=$("$here/build.sh" prometheus)
  etc_files
  python3 "$here/image.py" "$out/$name.tar" "rds-operator.test/$name:dev" --user 65534:65534 \
    --entrypoint "[\"/bin/$bin\"]" "bin/$bin=$prom/$bin" \
    "etc/passwd=$out/passwd" "etc/group=$out/group" tmp/ prometheus/
}

build_olm() {
  local olm
  olm=$("$here/build.sh" olm)
  etc_files
  python3 "$here/image.py" "$out/olm.tar" rds-operator.test/olm:dev --user 65532:65532 \
    --entrypoint '["/bin/olm"]' "bin/olm=$olm/olm" "bin/catalog=$olm/catalog" \
    "etc/passwd=$out/passwd" "etc/group=$out/group" tmp/
}

# The catalog of bundle/: `opm render` of the bundle directory (its manifests inlined as
# olm.bundle.object properties, no bundle image), its package and the channel the bundle's
# annotations name, checked by `opm validate`.
build_catalog() {
  local olm annotations configs=$out/catalog-configs
  olm=$("$here/build.sh" olm)
  annotations=$root/bundle/metadata/annotations.yaml
  rm -rf "$configs" && mkdir -p "$configs/rds-operator"
  "$olm/opm" render "$root/bundle" -o json >"$configs/bundle.json"
  python3 - "$configs/bundle.json" "$annotations" "$configs/rds-operator/catalog.json" <<'PY'
import json, re, sys
bundle = json.load(open(sys.argv[1]))
annotations = open(sys.argv[2]).read()
channel = re.search(r"bundle\.channel\.default\.v1: (\S+)", annotations).group(1)
package = bundle["package"]
blobs = [
    {"schema": "olm.package", "name": package, "defaultChannel": channel},
    {"schema": "olm.channel", "package": package, "name": channel, "entries": [{"name": bundle["name"]}]},
    bundle,
]
with open(sys.argv[3], "w") as f:
    f.writelines(json.dumps(b) + "\n" for b in blobs)
PY
  rm "$configs/bundle.json"
  "$olm/opm" validate "$configs" >&2
  etc_files
  python3 "$here/image.py" "$out/catalog.tar" rds-operator.test/rds-operator-catalog:dev --user 65532:65532 \
    --entrypoint '["/bin/opm"]' --cmd '["serve", "/configs"]' \
    "bin/opm=$olm/opm" "configs=$configs" "etc/passwd=$out/passwd" "etc/group=$out/group" tmp/
}

build() {
  for name in "$@"; do
    case "$name" in
      pause | operator | app | olm | catalog) "build_$name" ;;
      prometheus-operator) build_prometheus_part prometheus-operator operator ;;
      prometheus) build_prometheus_part prometheus prometheus ;;
      prometheus-config-reloader) build_prometheus_part prometheus-config-reloader prometheus-config-reloader ;;
      *) echo "images.sh: no image $name" >&2; exit 2 ;;
    esac
  done
}

case "${1:-}" in
  build) shift; build "$@" ;;
  import)
    sock=$2
    shift 2
    build "$@"
    for name in "$@"; do
      ctr -a "$sock" -n k8s.io images import --snapshotter native "$out/$name.tar" >/dev/null
    done
    ;;
  *) echo "usage: $0 build NAME... | import CONTAINERD_SOCKET NAME..." >&2; exit 2 ;;
esac
