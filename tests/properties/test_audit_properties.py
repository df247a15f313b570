"""Random valid specs on both substrates, rendered with observations: `audit` finds nothing.

Each example is a whole input (one or two clusters, their pools, add-ons and bootstrap objects),
so one run covers hundreds of renders; a second property shows that sharing a Secret only warns.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenant_support import example_ca
from tenantctl.audit import audit_tenant
from tenantctl.problems import Severity
from tenantctl.spec import parse_observed, parse_tenant_documents

API = "tenantctl.io/v1alpha1"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
# A DNS label of 1–11 characters, built directly: from_regex would dominate the run time.
label = st.builds(
    lambda head, tail: head + tail.rstrip("-"),
    st.sampled_from(_LOWER),
    st.text(_LOWER + "0123456789-", max_size=10),
)


@st.composite
def storage_classes(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(label, min_size=0, max_size=3, unique=True))
    default = draw(st.sampled_from([None, *names]))
    return [
        {
            "name": name,
            "storage": draw(label),
            "default": name == default,
            "reclaimPolicy": draw(st.sampled_from(["Delete", "Retain"])),
            "fstype": draw(st.sampled_from(["ext4", "xfs"])),
        }
        for name in names
    ]


@st.composite
def cluster_docs(
    draw: st.DrawFn, namespace: str, name: str, secrets: tuple[str, str, str], index: int = 0
) -> list[dict[str, Any]]:
    substrate = draw(st.sampled_from(["kubevirt", "proxmox"]))
    # Each cluster its own subnet: two tenants on one bridge sharing addresses are refused.
    third = draw(st.integers(0, 99)) + 100 * index
    spec: dict[str, Any] = {
        "version": draw(st.sampled_from(["v1.33", "v1.34"])),
        "substrate": substrate,
        "talos": {"version": "v1.13.6"},
        "network": {
            "serviceCIDR": f"10.{draw(st.integers(96, 120))}.0.0/{draw(st.sampled_from([16, 20, 24]))}",
            "clusterDomain": draw(st.sampled_from(["cluster.local", f"{name}.internal"])),
        },
    }
    pool: dict[str, Any] = {"cluster": name, "replicas": draw(st.integers(1, 3))}
    if substrate == "proxmox":
        csi_enabled = draw(st.booleans())
        csi: dict[str, Any] = {"enabled": csi_enabled, "storageClasses": draw(storage_classes())}
        if csi_enabled:
            csi["credentialsSecretName"] = secrets[2]
        spec["proxmox"] = {
            "credentialsSecretName": secrets[0],
            "allowedNodes": draw(st.lists(label, min_size=1, max_size=3, unique=True)),
            "dnsServers": ["192.0.2.53"],
            "ipv4Config": {"addresses": [f"192.0.{third}.10-192.0.{third}.60"], "prefix": 24,
                           "gateway": f"192.0.{third}.1"},
            "insecure": draw(st.booleans()),
            "ccm": {"credentialsSecretName": secrets[1]},
            "csi": csi,
        }
        pool |= {
            "resources": {"cpu": str(draw(st.integers(1, 8))), "memory": f"{draw(st.integers(2, 32))}Gi"},
            "proxmox": {"sourceNode": draw(label), "templateID": draw(st.integers(100, 9999)),
                        "pool": draw(st.one_of(st.none(), label))},
        }
    pool_meta = {"name": f"{name}-w", "namespace": namespace}
    return [
        {"apiVersion": API, "kind": "TenantCluster", "metadata": {"name": name, "namespace": namespace}, "spec": spec},
        {"apiVersion": API, "kind": "NodePool", "metadata": pool_meta, "spec": pool},
    ]


CA = example_ca()


def observed(namespace: str, name: str, endpoint: str) -> dict[str, Any]:
    return {
        "apiVersion": API, "kind": "ObservedState", "metadata": {"name": name, "namespace": namespace},
        "endpoint": endpoint, "clusterDNS": "10.96.0.10", "kubernetesCA": CA, "talosCA": CA,
        "talosSecrets": {"token": "abcdef.0123456789abcdef", "clusterID": "aWQ=", "clusterSecret": "c2VjcmV0",
                         "bootstrapTokenID": "q1w2e3", "bootstrapTokenSecret": "r4t5y6u7i8o9p0a1"},
    }


@st.composite
def tenants(draw: st.DrawFn, share: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    count = draw(st.integers(1, 2))
    keys = draw(st.lists(st.tuples(label, label), min_size=count, max_size=count, unique=True))
    docs: list[dict[str, Any]] = []
    observations: list[dict[str, Any]] = []
    for i, (namespace, name) in enumerate(keys):
        # Distinct from every name a rendered object carries, so a clean render is a clean audit.
        base = f"pve-{i}-{name}"
        secrets = (f"{base}-capmox", f"{base}-capmox" if share else f"{base}-ccm", f"{base}-csi")
        docs += draw(cluster_docs(namespace, name, secrets, i))
        observations.append(observed(namespace, name, f"192.0.2.{draw(st.integers(2, 250))}"))
    return docs, observations


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tenants())
def test_random_valid_specs_have_no_findings(case: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    docs, observations = case
    assert audit_tenant(parse_tenant_documents(docs), parse_observed(observations)) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tenants(share=True))
def test_a_shared_secret_only_warns(case: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    docs, observations = case
    tenant = parse_tenant_documents(docs)
    findings = audit_tenant(tenant, parse_observed(observations))
    proxmox = [c for c in tenant.clusters if c.spec.substrate == "proxmox"]
    assert all(f.severity is Severity.WARNING and "shared by" in f.message for f in findings)
    assert len(findings) == len(proxmox)
