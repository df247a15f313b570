"""The hosted control plane: requests and limits on every container, a locked-down sidecar, extra flags."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from tenant_support import REPO, clone, doc, load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.quantity import parse_quantity
from tenantctl.spec.resource_presets import presets_markdown

Validator = Callable[[Iterable[Mapping[str, Any]]], None]
Docs = list[dict[str, Any]]


def _control_plane(docs: Docs, control_plane: dict[str, Any] | None = None) -> dict[str, Any]:
    docs = clone(docs)
    if control_plane is not None:
        doc(docs, "TenantCluster")["spec"]["controlPlane"] = control_plane
    return next(o for o in render_tenant(parse_tenant_documents(docs)) if o["kind"] == "KamajiControlPlane")


def _containers(kcp: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every container Kamaji runs for the tenant, with the resources the render gives it."""
    spec = kcp["spec"]
    return {
        "apiServer": spec["apiServer"],
        "controllerManager": spec["controllerManager"],
        "scheduler": spec["scheduler"],
        "konnectivity": spec["addons"]["konnectivity"]["server"],
        "talos-csr-signer": next(
            c for c in spec["deployment"]["extraContainers"] if c["name"] == "talos-csr-signer"
        ),
    }


@pytest.mark.parametrize("example", ["proxmox.yaml", "kubevirt.yaml"])
def test_no_container_of_the_control_plane_is_best_effort(example: str, assert_valid: Validator) -> None:
    """Without requests every tenant's apiserver is BestEffort: evicted first, refused under a quota."""
    kcp = _control_plane(load_example(example))
    for name, container in _containers(kcp).items():
        requests, limits = container["resources"]["requests"], container["resources"]["limits"]
        assert set(requests) == set(limits) == {"cpu", "memory"}, name
        for resource in ("cpu", "memory"):
            assert parse_quantity(limits[resource]) >= parse_quantity(requests[resource]) > 0, name
    assert_valid([kcp])


def test_defaults_are_cozystacks_presets(proxmox_docs: Docs) -> None:
    containers = _containers(_control_plane(proxmox_docs))
    assert containers["apiServer"]["resources"] == {
        "requests": {"cpu": "200m", "memory": "2Gi"},
        "limits": {"cpu": "2", "memory": "2Gi"},
    }
    for name in ("controllerManager", "scheduler", "konnectivity"):
        assert containers[name]["resources"] == {
            "requests": {"cpu": "50m", "memory": "256Mi"},
            "limits": {"cpu": "500m", "memory": "256Mi"},
        }
    assert containers["talos-csr-signer"]["resources"] == {
        "requests": {"cpu": "10m", "memory": "32Mi"},
        "limits": {"cpu": "200m", "memory": "128Mi"},
    }


def test_a_preset_override_reaches_its_component_only(proxmox_docs: Docs, assert_valid: Validator) -> None:
    kcp = _control_plane(proxmox_docs, {"resources": {"apiServer": {"preset": "s1.large"}}})
    containers = _containers(kcp)
    assert containers["apiServer"]["resources"] == {
        "requests": {"cpu": "400m", "memory": "8Gi"},
        "limits": {"cpu": "4", "memory": "8Gi"},
    }
    assert containers["scheduler"]["resources"]["limits"] == {"cpu": "500m", "memory": "256Mi"}
    assert_valid([kcp])


def test_explicit_values_are_rendered_as_given(proxmox_docs: Docs, assert_valid: Validator) -> None:
    kcp = _control_plane(
        proxmox_docs,
        {
            "resources": {
                "controllerManager": {"requests": {"cpu": "100m", "memory": "300Mi"}, "limits": {"memory": "1Gi"}},
                "konnectivity": {"limits": {"cpu": 1, "memory": "512Mi"}},
            }
        },
    )
    containers = _containers(kcp)
    assert containers["controllerManager"]["resources"] == {
        "requests": {"cpu": "100m", "memory": "300Mi"},
        "limits": {"memory": "1Gi"},
    }
    assert containers["konnectivity"]["resources"] == {"limits": {"cpu": "1", "memory": "512Mi"}}
    assert_valid([kcp])


def test_the_csr_signer_runs_restricted(proxmox_docs: Docs) -> None:
    """It only reads its mounted Secrets and serves 50001: no root, no capability, no writable root."""
    sidecar = _containers(_control_plane(proxmox_docs))["talos-csr-signer"]
    assert sidecar["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert all(m["readOnly"] for m in sidecar["volumeMounts"])
    assert all(p["containerPort"] > 1024 for p in sidecar["ports"])


def test_extra_args_reach_the_apiserver_sorted(proxmox_docs: Docs, assert_valid: Validator) -> None:
    kcp = _control_plane(
        proxmox_docs, {"apiServer": {"extraArgs": {"v": "2", "feature-gates": "A=true,B=false", "profiling": ""}}}
    )
    assert kcp["spec"]["apiServer"]["extraArgs"] == ["--feature-gates=A=true,B=false", "--profiling", "--v=2"]
    assert_valid([kcp])


def test_no_extra_args_renders_none(proxmox_docs: Docs) -> None:
    assert "extraArgs" not in _control_plane(proxmox_docs)["spec"]["apiServer"]


def test_the_documented_preset_table_is_generated_from_the_data() -> None:
    text = (REPO / "docs" / "rendering.md").read_text()
    match = re.search(r"<!-- presets:start -->\n(.*?)<!-- presets:end -->", text, re.S)
    assert match and match.group(1) == presets_markdown()
