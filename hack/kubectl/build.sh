#!/usr/bin/env bash
# Builds kubectl from the Kubernetes release the real control plane runs (hack/envtest), pinned by this
# module's go.mod and go.sum, into a cache outside the clone keyed by those pins. The tests that run
# docs/getting-started.md's commands put it first on PATH. Prints the directory holding it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache_root="${TENANTCTL_KUBECTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tenantctl/kubectl}"
version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit } $1 == "require" && $2 == "k8s.io/kubernetes" { print $3; exit }' "$here/go.mod")"
pins="$(cat "$here/go.mod" "$here/go.sum" "$0" | sha256sum | cut -c1-12)"
dir="$cache_root/kubectl-$version-$pins"
mkdir -p "$dir"
if [ ! -x "$dir/kubectl" ]; then
    minor="${version#v1.}"; minor="${minor%%.*}"
    started=$(date +%s)
    echo "kubectl: building $version" >&2
    (cd "$here" && CGO_ENABLED=0 go build -trimpath -o "$dir/kubectl.partial" \
        -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean" \
        k8s.io/kubernetes/cmd/kubectl)
    mv "$dir/kubectl.partial" "$dir/kubectl"
    echo "kubectl: built in $(( $(date +%s) - started )) s" >&2
fi
echo "$dir"
