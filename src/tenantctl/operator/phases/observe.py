"""Read the runtime inputs of a tenant from the management cluster: address, CAs, Talos secrets.

The Talos secrets are the one thing generated here: once, when absent, and never overwritten —
a new token or cluster secret orphans every node that already joined.
"""

from __future__ import annotations

import base64
import secrets
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.kube.client import APIError, KubeClient
from tenantctl.operator.phases.conditions import Reason
from tenantctl.operator.phases.events import Recorder
from tenantctl.render import Names, cluster_labels
from tenantctl.spec import API_VERSION, ObservedState, TalosSecrets, TenantCluster
from tenantctl.spec.names import is_dns_subdomain

__all__ = [
    "Observation",
    "decode_secret",
    "ensure_talos_secrets",
    "generate_talos_secrets",
    "management_domain_from_resolv_conf",
    "observe",
    "service_address",
    "talos_secrets_from",
]

_TOKEN_ALPHABET = string.ascii_lowercase + string.digits
# Secret key -> TalosSecrets field: the keys other tools (and the seeds' Jobs) read.
_SECRET_KEYS = {
    "token": "token",
    "clusterID": "cluster_id",
    "clusterSecret": "cluster_secret",
    "bootstrapTokenID": "bootstrap_token_id",
    "bootstrapTokenSecret": "bootstrap_token_secret",
}


@dataclass(frozen=True)
class Observation:
    """What the renderer may use now; `waiting` says what is still missing when `observed` is None."""

    observed: ObservedState | None
    endpoint: str | None
    waiting: Reason | None
    message: str


def _token(length: int) -> str:
    return "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(length))


def generate_talos_secrets() -> dict[str, str]:
    """Fresh Talos cluster secrets in the formats Talos and kubeadm-style bootstrap tokens expect."""
    return {
        "token": f"{_token(6)}.{_token(16)}",
        "clusterID": base64.b64encode(secrets.token_bytes(32)).decode(),
        "clusterSecret": base64.b64encode(secrets.token_bytes(32)).decode(),
        "bootstrapTokenID": _token(6),
        "bootstrapTokenSecret": _token(16),
    }


def decode_secret(secret: Mapping[str, Any]) -> dict[str, str]:
    """A Secret's values as text, whether the server returned `data` or kept `stringData`."""
    out = {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}
    out.update(secret.get("stringData") or {})
    return out


async def ensure_talos_secrets(api: KubeClient, cluster: TenantCluster, recorder: Recorder) -> TalosSecrets:
    """The cluster's Talos secrets; created with `create` (not apply) so a racing writer never wins twice."""
    names = Names(cluster)
    res = await api.require("v1", "Secret")
    current = await api.get(res, names.talos_secrets, names.namespace, ours=True)  # labelled below
    if current is None:
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {
                "name": names.talos_secrets,
                "namespace": names.namespace,
                "labels": cluster_labels(cluster.metadata.name),
            },
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in generate_talos_secrets().items()},
        }
        try:
            current = await api.create(res, body)
        except APIError as exc:
            if exc.status != 409:
                raise
            current = await api.get(res, names.talos_secrets, names.namespace)
            if current is None:
                raise
        else:
            recorder.info(str(Reason.APPLIED), f"generated Talos secrets {names.talos_secrets}")
    return talos_secrets_from(decode_secret(current))


def talos_secrets_from(values: Mapping[str, str]) -> TalosSecrets:
    """The Talos secrets held in the Secret's decoded values; a missing key reads as empty."""
    return TalosSecrets(**{field: values.get(key, "") for key, field in _SECRET_KEYS.items()})


def service_address(service: Mapping[str, Any] | None, substrate: str) -> str | None:
    """Proxmox VMs dial the LoadBalancer address; KubeVirt workers reach the ClusterIP."""
    if service is None:
        return None
    if substrate == "proxmox":
        ingress = (service.get("status") or {}).get("loadBalancer", {}).get("ingress") or []
        first = ingress[0] if ingress else {}
        return first.get("ip") or first.get("hostname") or None
    ip = (service.get("spec") or {}).get("clusterIP")
    return ip if ip and ip != "None" else None


def management_domain_from_resolv_conf(text: str) -> str | None:
    """The cluster domain in a pod's resolv.conf: the kubelet writes `search <ns>.svc.<domain>
    svc.<domain> <domain>` (ClusterFirst); the last `search` line is the one the resolver uses."""
    searches = [line.split()[1:] for line in text.splitlines() if line.split()[:1] == ["search"]]
    for entry in searches[-1] if searches else []:
        domain = entry.rstrip(".").removeprefix("svc.")
        if entry.startswith("svc.") and is_dns_subdomain(domain):
            return domain
    return None


async def observe(api: KubeClient, cluster: TenantCluster, talos: TalosSecrets, management_domain: str) -> Observation:
    """Everything the TalosConfigTemplate needs, or which input is still missing."""
    names = Names(cluster)
    ns = names.namespace
    services = await api.require("v1", "Service")
    secrets_res = await api.require("v1", "Secret")
    endpoint = service_address(await api.get(services, names.apiserver_service, ns), cluster.spec.substrate)
    if endpoint is None:
        where = "LoadBalancer ingress" if cluster.spec.substrate == "proxmox" else "clusterIP"
        return Observation(
            None, None, Reason.WAITING_FOR_ENDPOINT, f"Service {ns}/{names.apiserver_service} has no {where} yet"
        )
    missing: list[str] = []
    kube_ca = await api.get(secrets_res, names.kubernetes_ca, ns)
    kube_ca_crt = (kube_ca or {}).get("data", {}).get("ca.crt")
    if not kube_ca_crt:
        missing.append(f"Secret {names.kubernetes_ca} (ca.crt)")
    talos_ca = await api.get(secrets_res, names.talos_ca, ns)
    talos_ca_crt = (talos_ca or {}).get("data", {}).get("tls.crt")
    if not talos_ca_crt:
        missing.append(f"Secret {names.talos_ca} (tls.crt)")
    cluster_dns: str | None = None
    if cluster.spec.substrate == "kubevirt":
        cluster_dns = service_address(await api.get(services, "kube-dns", "kube-system"), "kubevirt")
        if cluster_dns is None:
            missing.append("Service kube-system/kube-dns (clusterIP)")
    if missing or not kube_ca_crt or not talos_ca_crt:
        return Observation(None, endpoint, Reason.WAITING_FOR_CA, "waiting for " + ", ".join(missing))
    observed = ObservedState(
        api_version=API_VERSION,
        kind="ObservedState",
        metadata={"name": names.cluster, "namespace": ns},
        endpoint=endpoint,
        kubernetes_ca=kube_ca_crt,
        talos_ca=talos_ca_crt,
        talos_secrets=talos,
        cluster_dns=cluster_dns,
        management_cluster_domain=management_domain,
    )
    return Observation(observed, endpoint, None, f"apiserver at {endpoint}")
