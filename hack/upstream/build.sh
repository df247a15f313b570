#!/usr/bin/env bash
# Builds the upstream managers the upstream test tier runs beside the real API server (make upstream):
# Cluster API core, the in-cluster IPAM provider and CABPT, each from its Go module at the version pinned
# in <component>/go.mod (+ go.sum), into a cache outside the clone keyed by those pins, as make envtest
# does. Prints the directory holding them on its last line.
#
# Not built here: capmox v0.7.7, the Kamaji control-plane provider v0.19.0 and Kamaji 26.3.6-edge, whose
# modules the module proxy answers 403 "not available" for; build-sources.sh builds them from their trees.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache_root="${TENANTCTL_UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tenantctl/upstream}"

pinned() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == m) ? $2 : $3; exit }' "$here/$1/go.mod"; }
pins="$(cat "$here"/*/go.mod "$here"/*/go.sum "$0" | sha256sum | cut -c1-12)"
capi="$(pinned capi sigs.k8s.io/cluster-api)"
caip="$(pinned caip sigs.k8s.io/cluster-api-ipam-provider-in-cluster)"
cabpt="$(pinned cabpt github.com/siderolabs/cluster-api-bootstrap-provider-talos)"
dir="$cache_root/capi-$capi-caip-$caip-cabpt-$cabpt-$pins"
mkdir -p "$dir"

build() {  # build <module dir> <binary name> <package>
    local out="$dir/$2"
    if [ -x "$out" ]; then return 0; fi
    echo "upstream: building $2 ($3)" >&2
    local started=$(date +%s)
    (cd "$here/$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out.partial" "$3")
    mv "$out.partial" "$out"
    echo "upstream: $2 built in $(( $(date +%s) - started )) s" >&2
}

build capi cluster-api-manager sigs.k8s.io/cluster-api
build caip caip-manager sigs.k8s.io/cluster-api-ipam-provider-in-cluster
build cabpt cabpt-manager github.com/siderolabs/cluster-api-bootstrap-provider-talos
echo "$dir"
