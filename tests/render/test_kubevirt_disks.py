"""KubeVirt worker disks and virt-launcher pods as the production chart learned to render them
(Cozystack `templates/cluster.yaml`); each assert pins one rendered line."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

Docs = list[dict[str, Any]]
Validator = Callable[[Iterable[Mapping[str, Any]]], None]


def render(docs: Docs, observed: str | None = None) -> list[dict[str, Any]]:
    obs = parse_observed(load_example(observed)) if observed else None
    return render_tenant(parse_tenant_documents(docs), obs)


def by_pool(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["labels"]["tenantctl.io/nodepool"]: o for o in objects if o["kind"] == kind}


def vm_spec(template: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = template["spec"]["template"]["spec"]["virtualMachineTemplate"]["spec"]
    return spec


@pytest.mark.parametrize("pool", ["md0", "big"])
def test_kubevirt_system_disk_presents_512_logical_4096_physical(kubevirt_docs: Docs, pool: str) -> None:
    spec = vm_spec(by_pool(render(kubevirt_docs), "KubevirtMachineTemplate")[pool])
    (disk,) = spec["template"]["spec"]["domain"]["devices"]["disks"]
    assert disk == {
        "name": "system",
        "disk": {"bus": "virtio"},
        "blockSize": {"custom": {"logical": 512, "physical": 4096}},
    }


@pytest.mark.parametrize("pool", ["md0", "big"])
def test_kubevirt_data_volume_skips_the_cdi_populator(kubevirt_docs: Docs, pool: str) -> None:
    (dv,) = vm_spec(by_pool(render(kubevirt_docs), "KubevirtMachineTemplate")[pool])["dataVolumeTemplates"]
    assert dv["metadata"] == {
        "name": "disk-system",
        "annotations": {"cdi.kubevirt.io/storage.usePopulator": "false"},
    }


@pytest.mark.parametrize("pool", ["md0", "big"])
def test_virt_launcher_requests_and_limits_2gi_ephemeral_storage(kubevirt_docs: Docs, pool: str) -> None:
    domain = vm_spec(by_pool(render(kubevirt_docs), "KubevirtMachineTemplate")[pool])["template"]["spec"]["domain"]
    assert domain["resources"] == {"requests": {"ephemeral-storage": "2Gi"}, "limits": {"ephemeral-storage": "2Gi"}}


def test_kubevirt_render_validates_against_capk(kubevirt_docs: Docs, assert_valid: Validator) -> None:
    assert_valid(render(kubevirt_docs, "observed-kubevirt.yaml"))
