"""Small CRDs for the judge's own tests, built around the one schema a test is about; and the upstream
CRDs served as `tenantctl crds pull` downloads them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pytest_httpserver import HTTPServer

from tenantctl.validate.upstream import sources


def example_crd(kind: str, spec_schema: str) -> str:
    """A one-version, namespaced example.com CRD whose objects' `spec` has the schema `spec_schema` (YAML)."""
    plural = f"{kind.lower()}s"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "metadata": {"type": "object"}, "spec": yaml.safe_load(spec_schema)},
            }}}],
        },
    }
    return yaml.safe_dump(crd, sort_keys=False)


def mappings(node: Any, skip: frozenset[str] = frozenset()) -> Iterator[dict[str, Any]]:
    """Every mapping of a JSON document (a CRD, a schema), depth first; the values of `skip` keys are not
    entered (a `default` or an `example` is data, not schema)."""
    if isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key not in skip:
                yield from mappings(value, skip)
    elif isinstance(node, list):
        for item in node:
            yield from mappings(item, skip)


def serve_upstream_crds(httpserver: HTTPServer, shared: Path, tampered: str | None = None) -> str:
    """A mirror for `crds pull --mirror`: each pinned file of ../shared/crds (the files at the pinned tags)
    at its upstream path, `/<repository>/<ref>/<directory>/<name>`; `tampered` gets a line more. Its URL."""
    for source in sources():
        for name, _ in source.files:
            data = (shared / "crds" / source.folder / name).read_bytes()
            if name == tampered:
                data += b"# one more line\n"
            path = source.url(name).removeprefix("https://raw.githubusercontent.com")
            httpserver.expect_request(path).respond_with_data(data)
    return httpserver.url_for("/")
