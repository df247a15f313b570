"""Whether the tenant's running apiserver carries the extra flags tenantctl gave its KamajiControlPlane,
and none it dropped.

Kamaji merges them into the TenantControlPlane's Deployment; a Kamaji before 26.6.2-edge starts that
merge from what runs (spec.kamaji_flags), so a flag the spec dropped keeps running, and the tenant keeps
an old authentication or audit setting while every object says otherwise. One read of the Deployment,
only for a tenant that has or had extra flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.phases.conditions import Reason
from tenantctl.render import Names
from tenantctl.render.kamaji import apiserver_flags
from tenantctl.spec import TenantCluster
from tenantctl.spec.compat import KamajiRelease
from tenantctl.spec.kamaji_flags import DROPS_FLAGS_FROM, flag_name, stranded_flags

__all__ = ["APISERVER", "KAMAJI_APISERVER_FLAGS", "FlagsCheck", "check_flags", "running_flags"]

APISERVER = "kube-apiserver"

KAMAJI_APISERVER_FLAGS = frozenset({
    "--advertise-address", "--allow-privileged", "--authorization-mode", "--client-ca-file",
    "--enable-admission-plugins", "--enable-bootstrap-token-auth", "--service-cluster-ip-range",
    "--kubelet-client-certificate", "--kubelet-client-key", "--kubelet-preferred-address-types",
    "--proxy-client-cert-file", "--proxy-client-key-file", "--requestheader-allowed-names",
    "--requestheader-client-ca-file", "--requestheader-extra-headers-prefix", "--requestheader-group-headers",
    "--requestheader-username-headers", "--secure-port", "--service-account-issuer", "--service-account-key-file",
    "--service-account-signing-key-file", "--tls-cert-file", "--tls-private-key-file",
    "--etcd-compaction-interval", "--etcd-prefix", "--etcd-servers", "--etcd-cafile", "--etcd-certfile",
    "--etcd-keyfile", "--etcd-servers-overrides", "--egress-selector-config-file",
})
"""The apiserver flags Kamaji 26.3.6-edge sets itself (internal/builders/controlplane/deployment.go
`buildKubeAPIServerCommand`, konnectivity's egress selector): any other flag of the container came from
an extra flag. Only read for releases that keep dropped flags, which are no newer than that."""


@dataclass(frozen=True)
class FlagsCheck:
    ok: bool
    reason: Reason
    message: str


def running_flags(deployment: Mapping[str, Any]) -> list[str]:
    for container in ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []:
        if container.get("name") == APISERVER:
            return [str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]]
    return []


def judge(wanted: list[str], deployment: Mapping[str, Any] | None, kamaji: KamajiRelease) -> FlagsCheck | None:
    if deployment is None:
        return None
    running = running_flags(deployment)[1:]  # the command itself first
    extra = [f for f in running if f.startswith("--") and flag_name(f) not in KAMAJI_APISERVER_FLAGS]
    stranded = stranded_flags(kamaji.release, extra, wanted)
    if not wanted and not stranded:
        return None
    carried = set(running)
    missing = [flag for flag in wanted if flag not in carried]
    if missing:
        return FlagsCheck(False, Reason.FLAGS_NOT_APPLIED,
                          f"the running apiserver lacks {', '.join(missing)}: Kamaji has not rolled it yet")
    if stranded:
        return FlagsCheck(False, Reason.FLAGS_NOT_APPLIED,
                          f"the running apiserver still carries {', '.join(stranded)}, which the spec no longer "
                          f"sets: Kamaji {kamaji.release} keeps every flag a change drops; upgrade Kamaji to "
                          f"{DROPS_FLAGS_FROM} or later, or set the flag to its default value instead of dropping it")
    return FlagsCheck(True, Reason.FLAGS_APPLIED, f"the apiserver runs with all {len(wanted)} extra flags")


async def check_flags(api: KubeClient, cluster: TenantCluster, kamaji: KamajiRelease,
                      reported: bool = False) -> FlagsCheck | None:
    """`reported`: the tenant's status has the condition already, so a tenant whose spec dropped its last
    flag is still read until its apiserver carries none of them."""
    wanted = apiserver_flags(cluster)
    if not wanted and not reported:
        return None
    names = Names(cluster)
    deployment = await api.get(await api.require("apps/v1", "Deployment"), names.control_plane, names.namespace)
    return judge(wanted, deployment, kamaji)
