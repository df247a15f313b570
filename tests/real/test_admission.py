"""The real API server as the judge of what tenantctl renders and of what its CRDs refuse.

- Every render of the examples (both substrates, a spread pool, the objects applied inside the tenant,
  the Platform's provider packages, the operator's own install) is admitted by server-side apply
  with `dryRun=All`: schema, pruning, defaulting and every CEL rule of the CRDs it meets.
- Every refusal case that docs/admission.md places in the CRD (schema or CEL) is refused by the real
  server, at the case's field; and each one's example, unmutated, is admitted. The project's own
  validator is held to the same cases in tests/spec/test_crd_admission.py: the two agree.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from real_api import Api, APIRefusal
from tenant_support import EXAMPLES, clone, load_example
from tenantctl.cli import app
from tenantctl.operator.install.objects import Topology, install_objects
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.spec import parse_observed, parse_tenant_documents

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spec"))

from test_crd_admission import _crd_cases, _object_at, _own_suites, _without_nulls

RENDERED = [("proxmox.yaml", "observed-proxmox.yaml"), ("kubevirt.yaml", "observed-kubevirt.yaml"),
            ("proxmox-spread.yaml", None)]


def _ref(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{obj['kind']}/{meta.get('namespace', '')}/{meta['name']}"


def _refused_on_dry_run(api: Api, objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    refused = {}
    for obj in objects:
        if obj["metadata"].get("namespace"):
            api.namespace(obj["metadata"]["namespace"])
        try:
            api.apply(obj, manager="tenantctl", dry_run=True)
        except (APIRefusal, KeyError) as exc:
            refused[_ref(obj)] = str(exc)
    return refused


@pytest.mark.parametrize(("example", "observed"), RENDERED, ids=[e for e, _ in RENDERED])
def test_every_render_is_admitted_by_server_side_apply(
    example: str, observed: str | None, installed: Any, admin: Api, shared_tenant_admin: Api,
) -> None:
    tenant = parse_tenant_documents(load_example(example))
    states = parse_observed(load_example(observed)) if observed else None
    objects = render_tenant(tenant, states)
    assert len(objects) >= 15
    assert _refused_on_dry_run(admin, objects) == {}
    if states:
        cluster = tenant.clusters[0]
        inside = render_tenant_bootstrap(cluster, states[(cluster.metadata.namespace, cluster.metadata.name)])
        assert inside
        assert _refused_on_dry_run(shared_tenant_admin, inside) == {}, "the objects applied inside the tenant"


@pytest.mark.parametrize("example", ["proxmox.yaml", "kubevirt.yaml", "proxmox-spread.yaml"])
def test_every_example_tenant_is_admitted_as_written(example: str, installed: Any, admin: Api) -> None:
    """Red on the real server before the fix: memoryAdjustment's maximum 2**63-1, read as a float64 by the
    API server, wrapped to -2**63 and refused every value."""
    docs = [d for d in load_example(example) if d["kind"] in ("TenantCluster", "NodePool")]
    assert docs
    assert _refused_on_dry_run(admin, docs) == {}


def test_the_platforms_provider_packages_are_admitted(installed: Any, admin: Api) -> None:
    result = CliRunner().invoke(app, ["providers", "render", "-f", str(EXAMPLES / "platform.yaml")])
    assert result.exit_code == 0, result.output
    objects = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert {o["kind"] for o in objects} >= {"CoreProvider", "BootstrapProvider", "ControlPlaneProvider",
                                            "InfrastructureProvider", "IPAMProvider"}
    assert _refused_on_dry_run(admin, objects) == {}


def test_the_install_for_several_shards_is_admitted(installed: Any, admin: Api) -> None:
    objects = install_objects(namespace="tenantctl-system", topology=Topology(shards=3, replicas=2))
    assert sum(o["kind"] == "StatefulSet" for o in objects) == 3
    assert _refused_on_dry_run(admin, objects) == {}


def _field_of(path: str) -> str:
    """`NodePool/md0.spec.labels['a.b/c']` → `spec.labels.a.b/c`, as the API server's schema errors name a
    field (a map key after a dot, a list index in brackets)."""
    field = path.split(".", 1)[1] if "." in path else ""
    return re.sub(r"\['([^']*)'\]", r".\1", field)


def _names(refusal: APIRefusal, want: str) -> bool:
    """Whether the refusal is at the field `want`: a cause at it, at an item or map holding it, or below
    it (a rule of an object names its fieldPath). Server-side apply refuses what it cannot merge (a
    field not in the schema, a duplicate key of a set or map list) with a 500 before validation, naming
    the field in its message only."""
    fields = [str(c.get("field", "")) for c in refusal.causes]
    if any(f == want or want.startswith((f + ".", f + "[")) or f.startswith(want) for f in fields if f):
        return True
    top = re.sub(r"\[\d+\].*$", "", want)
    return refusal.status == 500 and f".{top}" in str(refusal)


def _case_objects() -> dict[str, tuple[dict[str, Any], str]]:
    """Every CRD-layer refusal as (the one mutated object, the field the server must name)."""
    out: dict[str, tuple[dict[str, Any], str]] = {}
    for name, case in _crd_cases().items():
        docs = clone(load_example(case.example))
        case.mutate(docs)
        out[name] = (_without_nulls(_object_at(docs, case.path)), case.path)
    for name, (docs, paths) in _own_suites().items():
        for path in paths:
            out[f"{name} @ {path}"] = (_without_nulls(_object_at(docs, path)), path)
    return out


CASES = _case_objects()


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_real_server_refuses_what_the_crds_are_said_to_refuse(
    case: tuple[dict[str, Any], str], installed: Any, admin: Api,
) -> None:
    obj, path = case
    admin.namespace(obj["metadata"]["namespace"])
    with pytest.raises(APIRefusal) as refused:
        admin.apply(obj, manager="tenantctl", dry_run=True)
    assert refused.value.status in (422, 500), refused.value
    want = _field_of(path)
    assert _names(refused.value, want), (path, want, refused.value.causes, str(refused.value))
