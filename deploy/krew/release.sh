#!/usr/bin/env bash
# The krew release of kubectl-rds: release.sh BINARY OUT_DIR writes into OUT_DIR
#   kubectl-rds-vVERSION-linux-amd64.tar.gz   the binary and LICENSE, at the archive's top level
#   rds.yaml                                  deploy/krew/rds.yaml with the version and the SHA-256
# (the version is the crate's). `kubectl krew install --manifest=OUT_DIR/rds.yaml
# --archive=OUT_DIR/kubectl-rds-...tar.gz` installs it from the local archive; the release uploads
# the archive to the URI the manifest names and proposes the manifest to krew-index.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
binary=$1 out=$2
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
archive="$out/kubectl-rds-v$version-linux-amd64.tar.gz"
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$binary" "$stage/kubectl-rds"
install -m 0644 "$root/LICENSE" "$stage/LICENSE"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$archive" kubectl-rds LICENSE
sha=$(sha256sum "$archive" | cut -d' ' -f1)
sed -e "s/\${VERSION}/$version/g" -e "s/\${SHA256}/$sha/" "$here/rds.yaml" >"$out/rds.yaml"
echo "$archive"
