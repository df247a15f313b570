"""Hold a proxmox tenant's capmox Secret to its spec: the keys capmox needs, and `insecure` as the spec says.

Only key names and findings leave this module; the Secret's values are read in memory and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from tenantctl.credentials.capmox import check_capmox_secret, secret_data
from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.phases.conditions import Reason
from tenantctl.spec import TenantCluster

__all__ = ["CredentialsCheck", "check_credentials"]


@dataclass(frozen=True)
class CredentialsCheck:
    ok: bool
    reason: Reason
    message: str


async def check_credentials(api: KubeClient, cluster: TenantCluster) -> CredentialsCheck | None:
    """The verdict on the Secret `spec.proxmox.credentialsSecretName`; None for tenants that have none."""
    px = cluster.spec.proxmox
    if cluster.spec.substrate != "proxmox" or px is None or not px.credentials_secret_name:
        return None
    ns, name = cluster.metadata.namespace, px.credentials_secret_name
    where = f"Secret {ns}/{name} (spec.proxmox.credentialsSecretName)"
    secret = await api.get(await api.require("v1", "Secret"), name, ns)
    if secret is None:
        return CredentialsCheck(False, Reason.CREDENTIALS_NOT_FOUND,
                                f"{where} does not exist; create it with `tenantctl secret proxmox-cluster`")
    findings = check_capmox_secret(secret_data(secret), px.insecure)
    if findings:
        return CredentialsCheck(False, Reason(findings[0].finding.value),
                                f"{where}: " + "; ".join(f.message for f in findings))
    verify = "skips" if px.insecure else "verifies"
    return CredentialsCheck(True, Reason.CREDENTIALS_CHECKED, f"{where} has every key; capmox {verify} TLS")
