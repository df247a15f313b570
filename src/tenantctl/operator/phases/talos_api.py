"""Publish trustd on the tenant's apiserver Service by applying one field of Kamaji's TenantControlPlane.

Once per pass: ask whether the installed Kamaji knows `additionalPorts` (its TenantControlPlane CRD,
judged once per interval for every tenant), then read the tenant's TenantControlPlane (has the
provider created it?), and apply the port only when the live object lacks it. The provider's updates
carry our field along, so an idle pass writes nothing; a field someone removed comes back on the next
pass. Nothing here fails a pass: every outcome is the `TalosAPI` condition.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tenantctl.operator.kube.client import APIError, KubeClient, Resource
from tenantctl.operator.phases.apply import covers
from tenantctl.operator.phases.conditions import Reason
from tenantctl.render.talos_api import (
    ADDITIONAL_PORTS_PATH,
    KAMAJI_RELEASE_WITH_ADDITIONAL_PORTS,
    TENANT_CONTROL_PLANE_API,
    TRUSTD_PORT,
    trustd_service_port,
)
from tenantctl.spec import TenantCluster
from tenantctl.spec.compat import DEFAULT_KAMAJI, KamajiRelease
from tenantctl.spec.versions import kamaji_key

__all__ = [
    "CRD_NAME",
    "KAMAJI_SELECTOR",
    "KamajiSchema",
    "TalosAPIResult",
    "kamaji_release_of",
    "publish_trustd",
    "schema_has_additional_ports",
]

CRD_NAME = "tenantcontrolplanes.kamaji.clastix.io"
_CRDS = Resource("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False)
DEPLOYMENTS = Resource("apps/v1", "Deployment", "deployments", True)
KAMAJI_SELECTOR = {"app.kubernetes.io/name": "kamaji"}
"""The label Kamaji's Helm chart puts on its controller Deployment."""


def _is_kamaji(deployment: Mapping[str, Any]) -> bool:
    meta = deployment.get("metadata") or {}
    labels = meta.get("labels") or {}
    return meta.get("name") == "kamaji" or all(labels.get(k) == v for k, v in KAMAJI_SELECTOR.items())


def kamaji_release_of(deployments: list[dict[str, Any]]) -> KamajiRelease | None:
    """The Kamaji release its controller Deployment runs (labelled as Kamaji's chart does, or named `kamaji`),
    read from the image tag; None when no image says one.

    Sites that build Kamaji themselves (Cozystack tags its build with its own version) name no Kamaji
    release in the tag: for them the release is declared (Platform, --kamaji-version).
    """
    kamaji = [d for d in deployments if _is_kamaji(d)]
    for deployment in sorted(kamaji, key=lambda d: str(d.get("metadata", {}).get("name"))):
        containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")
        for container in containers or []:
            image = str(container.get("image") or "").partition("@")[0]
            repository, _, tag = image.rpartition(":")
            if "/" in tag or not repository or kamaji_key(tag) is None:
                continue
            meta = deployment.get("metadata") or {}
            return KamajiRelease(tag, f"observed: Deployment {meta.get('namespace')}/{meta.get('name')} runs {image}")
    return None


@dataclass(frozen=True)
class TalosAPIResult:
    ok: bool
    reason: Reason
    message: str
    applied: bool = False


def schema_has_additional_ports(crd: Mapping[str, Any]) -> bool:
    """Whether the served version of the TenantControlPlane CRD declares the field."""
    version = TENANT_CONTROL_PLANE_API.rpartition("/")[2]
    for served in (crd.get("spec") or {}).get("versions") or []:
        if served.get("name") != version or not served.get("served"):
            continue
        node: Any = ((served.get("schema") or {}).get("openAPIV3Schema")) or {}
        for key in ADDITIONAL_PORTS_PATH:
            node = (node.get("properties") or {}).get(key) if isinstance(node, Mapping) else None
        return isinstance(node, Mapping)
    return False


def _has_port(live: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """The live list holds our entry (it may hold others': the list is atomic, we add to nothing)."""
    node: Any = live
    for key in ADDITIONAL_PORTS_PATH:
        node = node.get(key) if isinstance(node, Mapping) else None
    entry = wanted["spec"]["controlPlane"]["service"]["additionalPorts"][0]
    return isinstance(node, list) and any(covers(port, entry) for port in node)


async def _schema_refusal(api: KubeClient) -> TalosAPIResult | None:
    """Why the installed Kamaji cannot take the port, or None when it can."""
    crd = await api.get(_CRDS, CRD_NAME, cached=False)
    if crd is None:
        return TalosAPIResult(False, Reason.KAMAJI_MISSING,
                              f"the management cluster has no {CRD_NAME} CRD; install Kamaji "
                              f"{KAMAJI_RELEASE_WITH_ADDITIONAL_PORTS} or later")
    if not schema_has_additional_ports(crd):
        return TalosAPIResult(False, Reason.KAMAJI_TOO_OLD,
                              f"the installed Kamaji's TenantControlPlane has no spec.controlPlane.service."
                              f"additionalPorts, so trustd ({TRUSTD_PORT}) cannot be published and workers "
                              f"have no Talos API; upgrade Kamaji to {KAMAJI_RELEASE_WITH_ADDITIONAL_PORTS} "
                              "or later")
    return None


@dataclass
class KamajiSchema:
    """The installed Kamaji's verdict, read at most once per `ttl` seconds and shared by every tenant.

    The CRD is the same for all tenants and large (about 600 KiB with descriptions): judging it in
    every pass, or holding every CRD of the cluster in the watch cache, costs far more than the answer
    is worth. A Kamaji upgrade is seen within `ttl`; a failed read is not remembered.
    """

    ttl: float = 0.0
    _judged: tuple[float, TalosAPIResult | None] | None = None
    _release: tuple[float, KamajiRelease] | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def release(self, api: KubeClient, declared: str | None) -> KamajiRelease:
        """The management cluster's Kamaji release: `declared` (--kamaji-version), else its controller's
        image tag (read at most once per `ttl`), else the tested default. A failed read is not remembered."""
        if declared is not None:
            return KamajiRelease(declared, "the operator's --kamaji-version")
        async with self._lock:
            now = asyncio.get_running_loop().time()
            if self._release is None or now - self._release[0] >= self.ttl:
                try:
                    listed = await api.list(DEPLOYMENTS, None, KAMAJI_SELECTOR, cached=False)
                except APIError:
                    return self._release[1] if self._release is not None else DEFAULT_KAMAJI
                self._release = (now, kamaji_release_of(listed) or DEFAULT_KAMAJI)
            return self._release[1]

    async def refusal(self, api: KubeClient) -> TalosAPIResult | None:
        async with self._lock:  # the first passes of a thousand tenants share one read
            now = asyncio.get_running_loop().time()
            if self._judged is None or now - self._judged[0] >= self.ttl:
                self._judged = (now, await _schema_refusal(api))
            return self._judged[1]


async def publish_trustd(api: KubeClient, cluster: TenantCluster, schema: KamajiSchema | None = None) -> TalosAPIResult:
    """Apply the trustd port on the tenant's TenantControlPlane when the installed Kamaji supports it."""
    wanted = trustd_service_port(cluster)
    ns, name = wanted["metadata"]["namespace"], wanted["metadata"]["name"]
    where = f"TenantControlPlane {ns}/{name}"
    try:
        refusal = await (schema or KamajiSchema()).refusal(api)
        if refusal is not None:
            return refusal
        res = await api.resource(TENANT_CONTROL_PLANE_API, "TenantControlPlane")
        live = await api.get(res, name, ns) if res is not None else None
        if live is None:
            return TalosAPIResult(False, Reason.WAITING_FOR_TENANT_CONTROL_PLANE,
                                  f"{where} not created by the control-plane provider yet")
        assert res is not None
        if _has_port(live, wanted):
            return TalosAPIResult(True, Reason.TRUSTD_PUBLISHED, f"{where} publishes trustd on {TRUSTD_PORT}")
        await api.apply(res, wanted)
    except APIError as exc:
        return TalosAPIResult(False, Reason.API_ERROR, f"{where}: {exc}")
    return TalosAPIResult(True, Reason.TRUSTD_PUBLISHED, f"{where} publishes trustd on {TRUSTD_PORT}", applied=True)
