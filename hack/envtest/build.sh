#!/usr/bin/env bash
# Builds the real control plane the test suite runs (kube-apiserver, kube-controller-manager, etcd)
# from their Go modules at the versions pinned in kube/go.mod and etcd/go.mod, into a cache outside
# the clone keyed by those versions, so a fresh clone on the same machine reuses the binaries.
# Prints the directory holding them on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache_root="${TENANTCTL_ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tenantctl/envtest}"

pinned() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == m) ? $2 : $3; exit }' "$here/$1/go.mod"; }
kube_version="$(pinned kube k8s.io/kubernetes)"
etcd_version="$(pinned etcd go.etcd.io/etcd/server/v3)"
# The pins themselves key the cache (not file times: a fresh clone's files are all new).
pins="$(cat "$here"/kube/go.mod "$here"/kube/go.sum "$here"/etcd/go.mod "$here"/etcd/go.sum "$0" | sha256sum | cut -c1-12)"
dir="$cache_root/kube-$kube_version-etcd-$etcd_version-$pins"
mkdir -p "$dir"

minor="${kube_version#v1.}"; minor="${minor%%.*}"
stamp="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

build() {  # build <module dir> <binary name> <package> [ldflags]
    local out="$dir/$2"
    if [ -x "$out" ]; then return 0; fi
    echo "envtest: building $2 ($3)" >&2
    (cd "$here/$1" && CGO_ENABLED=0 go build -trimpath -ldflags "${4:-}" -o "$out.partial" "$3")
    mv "$out.partial" "$out"
}

started=$(date +%s)
built_any=0
for spec in "kube kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver" \
            "kube kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager" \
            "etcd etcd go.etcd.io/etcd/server/v3"; do
    set -- $spec
    if [ ! -x "$dir/$2" ]; then built_any=1; fi
    if [ "$1" = kube ]; then build "$1" "$2" "$3" "$stamp"; else build "$1" "$2" "$3" "-s -w"; fi
done
if [ "$built_any" = 1 ]; then
    echo "envtest: built in $(( $(date +%s) - started )) s" >&2
fi
echo "$dir"
