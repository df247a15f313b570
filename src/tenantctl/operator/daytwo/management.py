"""`tenantctl doctor management`: is this management cluster able to run tenants, before one is created?

A missing piece never fails loudly later: a tenant whose KamajiControlPlane kind is not served waits in
`Provisioning`, one whose Kamaji is too old never gets a control plane, one without cert-manager never
gets the webhook's certificate. Each check here reads the cluster (discovery, a few lists) and says
what it saw and what to do, in the report `doctor proxmox` prints; it writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.kube.client import APIError, KubeClient, Resource
from tenantctl.operator.phases.talos_api import (
    CRD_NAME,
    DEPLOYMENTS,
    kamaji_release_of,
    schema_has_additional_ports,
)
from tenantctl.proxmox.report import Report, Row, Status
from tenantctl.render.talos_api import KAMAJI_RELEASE_WITH_ADDITIONAL_PORTS
from tenantctl.spec.compat import DEFAULT_KAMAJI, KamajiRelease
from tenantctl.spec.versions import KUBERNETES, kamaji_serves, minor_key

__all__ = ["CONTROLLERS", "NEEDS", "Need", "doctor_management"]

Obj = dict[str, Any]
PASS, WARN, FAIL = Status.PASS, Status.WARN, Status.FAIL


@dataclass(frozen=True)
class Need:
    """Kinds tenantctl renders or reads, served by one component at one API version."""

    component: str
    api_version: str
    kinds: tuple[str, ...]
    advice: str
    substrate: str | None = None
    """Needed only by tenants of this substrate: a missing one is a warning, not a failure."""


_PROVIDER = "install its capi-operator provider (`tenantctl providers render -f platform.yaml`)"
_FLUX = "install Flux's helm-controller and source-controller"
NEEDS: tuple[Need, ...] = (
    Need("tenantctl", "tenantctl.io/v1alpha1", ("TenantCluster", "NodePool", "Platform"),
         "run `tenantctl install --apply`"),
    Need("Cluster API core (v1.10)", "cluster.x-k8s.io/v1beta1", ("Cluster", "MachineDeployment",
                                                                  "MachineHealthCheck"), _PROVIDER),
    Need("CABPT (Talos bootstrap, v0.6)", "bootstrap.cluster.x-k8s.io/v1alpha3", ("TalosConfigTemplate",), _PROVIDER),
    Need("Kamaji control-plane provider (v0.19)", "controlplane.cluster.x-k8s.io/v1alpha1", ("KamajiControlPlane",),
         _PROVIDER),
    Need("Kamaji", "kamaji.clastix.io/v1alpha1", ("TenantControlPlane", "DataStore"),
         "install Kamaji (26.3.6-edge tested)"),
    Need("capmox (v0.7)", "infrastructure.cluster.x-k8s.io/v1alpha1", ("ProxmoxCluster", "ProxmoxMachineTemplate"),
         _PROVIDER, "proxmox"),
    Need("CAIP (in-cluster IPAM, v1.0)", "ipam.cluster.x-k8s.io/v1alpha2", ("InClusterIPPool",), _PROVIDER, "proxmox"),
    Need("CAPK (v0.1)", "infrastructure.cluster.x-k8s.io/v1alpha1", ("KubevirtCluster", "KubevirtMachineTemplate"),
         _PROVIDER, "kubevirt"),
    Need("Flux helm-controller", "helm.toolkit.fluxcd.io/v2", ("HelmRelease",), _FLUX),
    Need("Flux source-controller", "source.toolkit.fluxcd.io/v1", ("HelmRepository", "OCIRepository"), _FLUX),
    Need("cert-manager", "cert-manager.io/v1", ("Issuer", "Certificate"), "install cert-manager (v1.21 tested)"),
)
"""Every kind tenantctl renders or reads, by the component that serves it (versions as tested, shared/crds)."""

CONTROLLERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Flux helm-controller", ("helm-controller",), "install Flux (helm-controller and source-controller)"),
    ("Flux source-controller", ("source-controller",), "install Flux (helm-controller and source-controller)"),
    ("cert-manager", ("cert-manager", "cert-manager-webhook"),
     "install cert-manager: the operator's webhook certificate and every tenant's Talos CA come from it"),
    ("Kamaji", ("kamaji",), "install Kamaji (its Helm chart names the Deployment `kamaji`)"),
)
"""Controllers not installed through capi-operator: (component, Deployment names, what to do)."""

_PROVIDER_KINDS = ("CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider",
                   "IPAMProvider")
_OPERATOR_API = "operator.cluster.x-k8s.io/v1alpha2"
_DATASTORES = Resource("kamaji.clastix.io/v1alpha1", "DataStore", "datastores", False)
_CRDS = Resource("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False)


async def _served(api: KubeClient) -> list[Row]:
    rows: list[Row] = []
    for need in NEEDS:
        missing = [k for k in need.kinds if await api.resource(need.api_version, k) is None]
        subject = f"{need.api_version} {', '.join(need.kinds)}"
        if not missing:
            rows.append(Row("crds", subject, PASS, f"{need.component}: served"))
        elif need.substrate is not None:
            rows.append(Row("crds", subject, WARN, f"{need.component}: {', '.join(missing)} not served",
                            f"needed by {need.substrate} tenants only: {need.advice}"))
        else:
            rows.append(Row("crds", subject, FAIL, f"{need.component}: {', '.join(missing)} not served",
                            need.advice))
    return rows


def _ready(deployment: Mapping[str, Any]) -> tuple[int, int]:
    status, spec = deployment.get("status") or {}, deployment.get("spec") or {}
    return int(status.get("availableReplicas") or 0), int(spec.get("replicas", 1) or 0)


def _controllers(deployments: Sequence[Obj]) -> list[Row]:
    by_name: dict[str, list[Obj]] = {}
    for d in deployments:
        by_name.setdefault(str(d["metadata"]["name"]), []).append(d)
    rows: list[Row] = []
    for component, names, advice in CONTROLLERS:
        for name in names:
            found = by_name.get(name, [])
            if not found:
                rows.append(Row("controllers", f"Deployment {name}", FAIL, f"{component}: no Deployment {name}",
                                advice))
                continue
            available, wanted = _ready(found[0])
            where = f"{found[0]['metadata'].get('namespace')}/{name}"
            if available < max(wanted, 1):
                rows.append(Row("controllers", f"Deployment {where}", FAIL,
                                f"{component}: {available}/{wanted} replicas available",
                                f"kubectl -n {found[0]['metadata'].get('namespace')} describe deployment {name}"))
            else:
                rows.append(Row("controllers", f"Deployment {where}", PASS,
                                f"{component}: {available}/{wanted} replicas available"))
    return rows


async def _providers(api: KubeClient) -> list[Row]:
    rows: list[Row] = []
    seen_any = False
    for kind in _PROVIDER_KINDS:
        res = await api.resource(_OPERATOR_API, kind)
        if res is None:
            continue
        seen_any = True
        for provider in await api.list(res, None, cached=False):
            meta = provider["metadata"]
            subject = f"{kind} {meta.get('namespace')}/{meta['name']}"
            conditions = (provider.get("status") or {}).get("conditions") or []
            ready: Mapping[str, Any] = next((c for c in conditions if c.get("type") == "Ready"), {})
            if ready.get("status") == "True":
                version = (provider.get("status") or {}).get("installedVersion") or "?"
                rows.append(Row("providers", subject, PASS, f"Ready, {version}"))
            else:
                why = f"{ready.get('reason') or 'no Ready condition'} {ready.get('message') or ''}".rstrip()
                rows.append(Row("providers", subject, FAIL, f"not Ready: {why}",
                                f"kubectl -n {meta.get('namespace')} describe {kind.lower()} {meta['name']}"))
    if not seen_any:
        rows.append(Row("providers", _OPERATOR_API, WARN, "capi-operator is not installed",
                        "providers installed another way are checked by their CRDs only"))
    return rows


async def _kamaji(api: KubeClient, deployments: Sequence[Obj], declared: KamajiRelease | None) -> list[Row]:
    rows: list[Row] = []
    observed = kamaji_release_of(list(deployments))
    release = declared or observed
    if release is None:
        rows.append(Row("kamaji", "release", WARN,
                        f"the Kamaji controller's image names no release; tenantctl assumes {DEFAULT_KAMAJI.release}",
                        "declare it in Platform spec.kamaji.version (or the operator's --kamaji-version)"))
        release = DEFAULT_KAMAJI
    else:
        newest = kamaji_serves(release.release)
        known = max(KUBERNETES, key=minor_key)
        status = PASS if newest == known else WARN
        rows.append(Row("kamaji", "release", status,
                        f"Kamaji {release.release} ({release.source}) serves Kubernetes up to {newest}",
                        "" if status is PASS else f"tenants above {newest} are refused; {known} needs "
                        f"Kamaji {KUBERNETES[known].kamaji}"))
    crd = await api.get(_CRDS, CRD_NAME, cached=False)
    if crd is None:
        rows.append(Row("kamaji", CRD_NAME, FAIL, "no TenantControlPlane CRD", "install Kamaji"))
    elif not schema_has_additional_ports(crd):
        rows.append(Row("kamaji", CRD_NAME, FAIL, "TenantControlPlane has no spec.controlPlane.service.additionalPorts",
                        f"upgrade Kamaji to {KAMAJI_RELEASE_WITH_ADDITIONAL_PORTS} or later: without it workers "
                        "get no Talos API (trustd)"))
    else:
        rows.append(Row("kamaji", CRD_NAME, PASS, "serves spec.controlPlane.service.additionalPorts (trustd)"))
    if await api.resource(_DATASTORES.api_version, _DATASTORES.kind) is not None:
        stores = await api.list(_DATASTORES, None, cached=False)
        if stores:
            names = ", ".join(sorted(str(s["metadata"]["name"]) for s in stores))
            rows.append(Row("kamaji", "DataStores", PASS, f"{len(stores)}: {names}"))
        else:
            rows.append(Row("kamaji", "DataStores", FAIL, "no DataStore",
                            "create one (Kamaji's chart installs `default`): control planes keep their state there"))
    return rows


async def doctor_management(api: KubeClient, declared: KamajiRelease | None = None) -> Report:
    """Every check of the management cluster, in the order a platform engineer fixes them."""
    report = Report()
    report.extend(await _served(api))
    try:
        deployments = await api.list(DEPLOYMENTS, None, cached=False)
    except APIError as exc:
        report.extend([Row("controllers", "apps/v1 Deployments", WARN, f"cannot list: {exc}",
                           "grant list on deployments cluster-wide, or check the controllers by hand")])
        deployments = []
    report.extend(_controllers(deployments))
    report.extend(await _providers(api))
    report.extend(await _kamaji(api, deployments, declared))
    return report
