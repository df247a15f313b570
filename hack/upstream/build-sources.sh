#!/usr/bin/env bash
# Builds the upstream managers the module proxy refuses (capmox, Kamaji, Kamaji's control-plane provider)
# from their repositories' trees at the tags pinned in sources.tsv (make upstream). Each tree comes from
# ../shared/upstream-src (TENANTCTL_SHARED) when that holds the archive, its SHA-256 checked against the pin
# before anything is unpacked; else it is cloned at the pinned tag and its commit checked. It says which.
# Trees and binaries live in a cache outside the clone keyed by the pins (hashes included); their
# dependencies come from the module proxy, verified by each tree's own go.sum. Prints the directory holding
# the binaries on its last line, and the trees under it in src/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache_root="${TENANTCTL_UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tenantctl/upstream}"
shared="${TENANTCTL_SHARED:-$here/../../../shared}"
pins="$(cat "$here/sources.tsv" "$0" | sha256sum | cut -c1-12)"
dir="$cache_root/sources-$pins"
mkdir -p "$dir/src"
exec 9>"$dir/.lock"
flock 9  # one build at a time: pytest-xdist's workers may each ask for the managers at once

column() { awk -F'\t' -v n="$1" -v c="$2" '$1 == n { print $c }' "$here/sources.tsv"; }

tree() {  # tree <name>: the unpacked or cloned tree of <name>, made once
    local name="$1" archive sha repo tag commit
    archive="$(column "$name" 2)"; sha="$(column "$name" 3)"; repo="$(column "$name" 4)"
    tag="$(column "$name" 5)"; commit="$(column "$name" 6)"
    local out="$dir/src/$name"
    if [ -f "$out/.tenantctl-source" ]; then echo "$out"; return 0; fi
    rm -rf "$out.partial" && mkdir -p "$out.partial"
    if [ -f "$shared/upstream-src/$archive" ]; then
        local got
        got="$(sha256sum "$shared/upstream-src/$archive" | cut -d' ' -f1)"
        if [ "$got" != "$sha" ]; then
            echo "upstream: $shared/upstream-src/$archive has SHA-256 $got, pinned $sha: not unpacked" >&2
            exit 1
        fi
        tar -xzf "$shared/upstream-src/$archive" -C "$out.partial" --strip-components=1
        echo "archive $archive sha256 $sha" > "$out.partial/.tenantctl-source"
        echo "upstream: $name from $shared/upstream-src/$archive (SHA-256 checked)" >&2
    else
        git clone --quiet --depth 1 --branch "$tag" "https://github.com/$repo" "$out.partial" >&2
        local head
        head="$(git -C "$out.partial" rev-parse HEAD)"
        if [ "$head" != "$commit" ]; then
            echo "upstream: $repo tag $tag is at $head, pinned $commit: not built" >&2
            exit 1
        fi
        rm -rf "$out.partial/.git"
        echo "clone $repo $tag $commit" > "$out.partial/.tenantctl-source"
        echo "upstream: $name cloned from $repo at $tag ($commit); no archive in $shared/upstream-src" >&2
    fi
    rm -rf "$out" && mv "$out.partial" "$out"
    echo "$out"
}

build() {  # build <name>
    local name="$1" src pkg binary
    src="$(tree "$name")"; pkg="$(column "$name" 7)"; binary="$(column "$name" 8)"
    if [ -x "$dir/$binary" ]; then return 0; fi
    echo "upstream: building $binary ($name $pkg)" >&2
    local started
    started=$(date +%s)
    (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/$binary.partial" "$pkg")
    mv "$dir/$binary.partial" "$dir/$binary"
    echo "upstream: $binary built in $(( $(date +%s) - started )) s" >&2
}

build capmox
build kamaji
# The provider requires a pseudo-version of Kamaji the proxy refuses: it is the very commit of the pinned
# Kamaji tag, so the Kamaji tree above stands for it (and go.sum takes the hashes of its dependencies).
provider="$(tree kamaji-cp)"
if ! grep -q "^replace github.com/clastix/kamaji " "$provider/go.mod"; then
    (cd "$provider" && go mod edit -replace "github.com/clastix/kamaji=$dir/src/kamaji")
fi
GOFLAGS=-mod=mod build kamaji-cp
echo "$dir"
