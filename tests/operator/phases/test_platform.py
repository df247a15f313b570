"""The operator renders with the cluster's Platform exactly as `render --platform` does with its file.

A Platform with an image mirror, one image override and a chart mirror: every image reference and
chart URL the operator applies points where it says; an edit re-renders; the applied objects equal
the CLI's render of the same input object by object.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_emulator import KubeEmulator, path_of
from operator_support import condition, eventually, running_operator
from test_apply import PROXMOX, TC, seeded
from typer.testing import CliRunner

from tenant_support import load_example
from tenantctl.cli import app
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.operator.phases.apply import comparable, covers
from tenantctl.operator.phases.platform import platform_settings

pytestmark = [pytest.mark.timeout(30), pytest.mark.looptime]

PLATFORMS = "tenantctl.io/v1alpha1/platforms"
MIRROR = "mirror.example.org"
CHARTS = "oci://mirror.example.org/charts"
PLATFORM: dict[str, Any] = {
    "apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "default"},
    "spec": {
        "images": {"registryMirror": MIRROR, "overrides": {"proxmox-ccm": {"repository": "ccm.example.org/ccm"}}},
        "charts": {"mirror": {"oci": CHARTS}},
    },
}
SOURCES = {"HelmRepository": "helmrepositories", "OCIRepository": "ocirepositories"}


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def _images(obj: dict[str, Any]) -> list[str]:
    pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [c["image"] for key in ("initContainers", "containers") for c in pod.get(key, [])]


async def test_the_operator_renders_with_the_platform_as_render_platform_does(
    mgmt: KubeEmulator, tenant: KubeEmulator, tmp_path: Path
) -> None:
    seeded(mgmt, tenant)
    _real_cas(mgmt)
    mgmt.put(PLATFORMS, PLATFORM)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("status") == "True")
        applied = _applied(mgmt)
        images = [i for o in applied for i in _images(o)]
        assert images and all(i.startswith(f"{MIRROR}/") for i in images), images
        assert any(i.startswith(f"{MIRROR}/ccm.example.org/ccm:") for i in images), "the override, under the mirror"
        sources = [o for plural in SOURCES.values() for o in mgmt.live(plural)]
        assert sources and all(s["spec"]["url"].startswith(f"{CHARTS}/") for s in sources)
        kcp = mgmt.get("controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes", *PROXMOX)
        assert kcp is not None and kcp["spec"]["registry"].startswith(MIRROR)

        expected = await _cli_equivalent(mgmt, tmp_path, PLATFORM)
        for obj in expected:
            live = _live_of(mgmt, obj)
            assert live is not None, f"{obj['kind']}/{obj['metadata']['name']} rendered by the CLI, not applied"
            assert covers(comparable(live), comparable(obj)), f"{obj['kind']}/{obj['metadata']['name']} differs"
        rendered = {(o["kind"], o["metadata"]["name"]) for o in expected}
        ours = {(held.raw.get("kind") or info_kind(mgmt, res), name) for (res, _, name), held in mgmt.objects.items()
                if not held.deleted and _labels(held.raw).get("tenantctl.io/cluster") == "acme"}
        # The Talos secrets are generated once by the operator; the CLI takes them as an observed input.
        ours.discard(("Secret", "acme-talos-secrets"))
        assert ours <= rendered, f"applied but not rendered by the CLI: {sorted(ours - rendered)}"

        edited = copy.deepcopy(PLATFORM)
        edited["spec"]["images"]["registryMirror"] = "other.example.org"
        edited["metadata"]["resourceVersion"] = "edited"
        mgmt.put(PLATFORMS, edited)
        await eventually(lambda: any(i.startswith("other.example.org/") for o in _applied(mgmt) for i in _images(o)))
        assert ctx.passes[PROXMOX] >= 2


async def test_a_refused_platform_stops_every_pass_with_its_refusal(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    refused = copy.deepcopy(PLATFORM)
    refused["spec"]["images"]["overrides"] = {"no-such-image": {"tag": "v1"}}
    mgmt.put(PLATFORMS, refused)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("reason") == "InvalidSpec")
    message = condition(mgmt.get(TC, *PROXMOX), "Ready")["message"]
    assert message.startswith("the Platform is refused, nothing is rendered until it is fixed: Platform/default.spec")
    assert "no-such-image" in message
    assert not mgmt.live("kamajicontrolplanes"), "nothing applied past a refused Platform"


def test_a_platform_object_is_checked_as_its_file() -> None:
    settings = platform_settings({**PLATFORM, "metadata": {"name": "default", "uid": "x", "resourceVersion": "9"}})
    assert settings.refusal is None and settings.images is not None and settings.charts is not None
    assert settings.charts.mirror is not None and settings.charts.mirror.oci == CHARTS
    bad = platform_settings({**PLATFORM, "spec": {"kamaji": {"version": "latest"}}})
    assert bad.refusal is not None and "Platform/default.spec.kamaji.version" in bad.refusal


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def info_kind(mgmt: KubeEmulator, res: Any) -> str:
    return str(mgmt.resources[res].kind)


def _real_cas(mgmt: KubeEmulator) -> None:
    """The example's X.509 CAs in the Secrets Kamaji and cert-manager write (`render --observed` parses them)."""
    from tenantctl.render import Names
    from tenantctl.spec import parse_tenant_documents

    observed = load_example("observed-proxmox.yaml")[0]
    names = Names(parse_tenant_documents(load_example("proxmox.yaml")).clusters[0])
    for name, key, value in ((names.kubernetes_ca, "ca.crt", observed["kubernetesCA"]),
                             (names.talos_ca, "tls.crt", observed["talosCA"])):
        mgmt.put("v1/secrets", {"metadata": {"name": name, "namespace": PROXMOX[0]}, "data": {key: value}})


def _applied(mgmt: KubeEmulator) -> list[dict[str, Any]]:
    plurals = ("deployments", "kamajicontrolplanes", "helmreleases", "talosconfigtemplates")
    return [o for p in plurals for o in mgmt.live(p)]


def _live_of(mgmt: KubeEmulator, obj: dict[str, Any]) -> dict[str, Any] | None:
    path = path_of(mgmt, obj["apiVersion"], obj["kind"])
    assert path is not None, f"{obj['apiVersion']} {obj['kind']} is not served"
    meta = obj["metadata"]
    return mgmt.get(path, meta.get("namespace"), meta["name"])


async def _cli_equivalent(mgmt: KubeEmulator, tmp_path: Path, platform: dict[str, Any]) -> list[dict[str, Any]]:
    """The CLI's render with the Platform file and the ObservedState the operator read."""
    from tenantctl.operator.daytwo.plan import observe_read_only
    from tenantctl.spec import parse_tenant_documents

    docs = load_example("proxmox.yaml")
    cluster = parse_tenant_documents(docs).clusters[0]
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        observation = await observe_read_only(api, cluster)
    assert observation.observed is not None
    observed = observation.observed.model_dump(by_alias=True, exclude_none=True)
    (tmp_path / "tenant.yaml").write_text(yaml.safe_dump_all(docs))
    (tmp_path / "platform.yaml").write_text(yaml.safe_dump(platform))
    (tmp_path / "observed.yaml").write_text(yaml.safe_dump(observed))
    import asyncio

    result = await asyncio.to_thread(
        CliRunner().invoke, app,
        ["render", "-f", str(tmp_path / "tenant.yaml"), "--platform", str(tmp_path / "platform.yaml"),
         "--observed", str(tmp_path / "observed.yaml")],
    )
    assert result.exit_code == 0, result.output
    return [o for o in yaml.safe_load_all(result.stdout) if o]
