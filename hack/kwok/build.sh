#!/usr/bin/env bash
# Builds KWOK (pinned by this module's go.mod and go.sum) and kube-scheduler of the real control plane's
# Kubernetes release (hack/envtest/kube's pins) into a cache outside the clone keyed by those pins, and
# copies KWOK's own stage definitions (node readiness and heartbeat, pod ready/complete/delete) from the
# same module version beside them. Prints the directory on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kube="$here/../envtest/kube"
cache_root="${TENANTCTL_KWOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tenantctl/kwok}"
pinned() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == m) ? $2 : $3; exit }' "$1/go.mod"; }
kwok_version="$(pinned "$here" sigs.k8s.io/kwok)"
kube_version="$(pinned "$kube" k8s.io/kubernetes)"
pins="$(cat "$here/go.mod" "$here/go.sum" "$kube/go.mod" "$kube/go.sum" "$0" | sha256sum | cut -c1-12)"
dir="$cache_root/kwok-$kwok_version-kube-$kube_version-$pins"
mkdir -p "$dir"
started=$(date +%s)
built_any=0
if [ ! -x "$dir/kwok" ]; then
    built_any=1
    echo "kwok: building kwok $kwok_version" >&2
    (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/kwok.partial" sigs.k8s.io/kwok/cmd/kwok)
    mv "$dir/kwok.partial" "$dir/kwok"
fi
if [ ! -x "$dir/kube-scheduler" ]; then
    built_any=1
    minor="${kube_version#v1.}"; minor="${minor%%.*}"
    echo "kwok: building kube-scheduler $kube_version" >&2
    (cd "$kube" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
        -o "$dir/kube-scheduler.partial" k8s.io/kubernetes/cmd/kube-scheduler)
    mv "$dir/kube-scheduler.partial" "$dir/kube-scheduler"
fi
if [ ! -d "$dir/stages" ]; then
    module="$(cd "$here" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
    mkdir -p "$dir/stages.partial"
    for stage in node/fast/node-initialize node/heartbeat/node-heartbeat pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
        cp "$module/kustomize/stage/$stage.yaml" "$dir/stages.partial/$(basename "$stage").yaml"
    done
    chmod -R u+w "$dir/stages.partial"
    mv "$dir/stages.partial" "$dir/stages"
fi
if [ "$built_any" = 1 ]; then
    echo "kwok: built in $(( $(date +%s) - started )) s" >&2
fi
echo "$dir"
