#!/usr/bin/env bash
# Builds etcdctl from the etcd release the real control plane runs (hack/envtest/etcd), pinned by this
# module's go.mod and go.sum, into a cache outside the clone keyed by those pins. `tenantctl backup`
# runs it; the backup tests put it on PATH. Prints the directory holding it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache_root="${TENANTCTL_ETCDCTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tenantctl/etcdctl}"
version="$(awk '$1 == "go.etcd.io/etcd/etcdctl/v3" { print $2; exit } $1 == "require" && $2 == "go.etcd.io/etcd/etcdctl/v3" { print $3; exit }' "$here/go.mod")"
pins="$(cat "$here/go.mod" "$here/go.sum" "$0" | sha256sum | cut -c1-12)"
dir="$cache_root/etcdctl-$version-$pins"
mkdir -p "$dir"
if [ ! -x "$dir/etcdctl" ]; then
    started=$(date +%s)
    echo "etcdctl: building $version" >&2
    (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/etcdctl.partial" go.etcd.io/etcd/etcdctl/v3)
    mv "$dir/etcdctl.partial" "$dir/etcdctl"
    echo "etcdctl: built in $(( $(date +%s) - started )) s" >&2
fi
echo "$dir"
