"""Validation speed: every test validates its renders, so a warm `validate_objects` must stay cheap.

    .venv/bin/python benchmarks/validate_speed.py [--iterations N] [--crds DIR]

Corpus: the objects rendered from both examples (with their observed inputs) plus hand-written built-in
objects, about 40 in all. Prints the cold costs (parsing the CRD directory, first validation, which
converts schemas and compiles CEL rules) and the warm median; exits 1 when the warm target is missed.
CRDs come from --crds, else $TENANTCTL_SHARED/crds, else ../shared/crds beside the checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tenantctl.validate import SchemaCatalog, validate_objects

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
TARGET_WARM_MS = 300.0


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


def rendered_examples() -> list[dict[str, Any]]:
    """What the examples render to; empty (with a note) when rendering itself is broken."""
    try:
        from tenantctl.render import render_tenant
        from tenantctl.spec import parse_observed, parse_tenant_documents

        objects: list[dict[str, Any]] = []
        for example, observed in (
            ("kubevirt.yaml", "observed-kubevirt.yaml"),
            ("proxmox.yaml", "observed-proxmox.yaml"),
        ):
            tenant = parse_tenant_documents(_docs(example))
            objects.extend(render_tenant(tenant, parse_observed(_docs(observed))))
        return objects
    except Exception as exc:  # a benchmark of validation should still run when rendering is mid-change
        print(f"note: examples not rendered ({type(exc).__name__}: {exc}); hand-written objects only")
        return []


def built_in_objects(count: int) -> list[dict[str, Any]]:
    """Secrets, ConfigMaps, RBAC and a Deployment per tenant, like the operator applies."""
    objects: list[dict[str, Any]] = []
    for i in range(count):
        ns = f"tenant-{i}"
        labels = {"app.kubernetes.io/managed-by": "tenantctl", "tenantctl.io/tenant": f"t{i}"}
        objects += [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}},
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "creds", "namespace": ns, "labels": labels},
                "stringData": {"token": "x"},
            },
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": ns}, "data": {"a": "b"}},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "agent", "namespace": ns}},
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "agent", "namespace": ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": ns}],
            },
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "agent", "namespace": ns, "labels": labels},
                "spec": {
                    "selector": {"matchLabels": {"app": "agent"}},
                    "template": {
                        "metadata": {"labels": {"app": "agent"}},
                        "spec": {
                            "containers": [{"name": "agent", "image": "agent:1", "ports": [{"containerPort": 8080}]}]
                        },
                    },
                },
            },
        ]
    return objects


def crd_dir(option: str | None) -> Path | None:
    if option:
        return Path(option)
    shared = Path(os.environ.get("TENANTCTL_SHARED", REPO.parent / "shared"))
    return shared / "crds" if (shared / "crds").is_dir() else None


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--crds", help="CRD directory (default: the shared CRDs beside the checkout)")
    args = parser.parse_args()

    directory = crd_dir(args.crds)
    start = time.perf_counter()
    catalog = SchemaCatalog.from_dirs([directory]) if directory else None
    load_ms = ms(start)
    if catalog is None:
        print("note: no CRD directory found; custom kinds are skipped (planning mode)")

    objects = rendered_examples()
    if len(objects) < 40:
        objects += built_in_objects(-(-(40 - len(objects)) // 6))
    custom = sum(1 for o in objects if catalog is not None and catalog.has(o["apiVersion"], o["kind"]))

    start = time.perf_counter()
    problems = validate_objects(objects, catalog)
    first_ms = ms(start)

    samples = []
    for _ in range(args.iterations):
        start = time.perf_counter()
        validate_objects(objects, SchemaCatalog.from_dirs([directory]) if directory else None)
        samples.append(ms(start))
    warm = statistics.median(samples)

    print(f"objects: {len(objects)} ({custom} custom, {len(objects) - custom} built-in), problems: {len(problems)}")
    print(f"catalog load (cold):        {load_ms:8.1f} ms")
    print(f"first validation (cold):    {first_ms:8.1f} ms  schema conversion, CEL compilation, core schemas")
    print(f"warm validation (median):   {warm:8.1f} ms  of {args.iterations}, target {TARGET_WARM_MS:.0f} ms")
    print(f"warm per object:            {warm / len(objects):8.2f} ms")
    return 0 if warm <= TARGET_WARM_MS else 1


if __name__ == "__main__":
    sys.exit(main())
