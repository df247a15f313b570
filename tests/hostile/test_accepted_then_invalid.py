"""Values that were accepted and then rendered invalid or wrong: refused now, with the field named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hostile_support import dump, invoke
from tenant_support import clone, doc, load_example
from tenantctl.spec import patterns

Docs = list[dict[str, Any]]
KV, PX = "kubevirt.yaml", "proxmox.yaml"


def _at(kind: str, *path: str | int, name: str | None = None) -> Callable[[Docs, Any], None]:
    def mutate(docs: Docs, value: Any) -> None:
        node = doc(docs, kind, name)
        for part in path[:-1]:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
        node[path[-1]] = value

    return mutate


# (example, where, mutation): each field once took a trailing newline into a name or an image.
NEWLINE_CASES = [
    (KV, "TenantCluster/demo.metadata.namespace", _at("TenantCluster", "metadata", "namespace")),
    (KV, "NodePool/md0.metadata.name", _at("NodePool", "metadata", "name", name="md0")),
    (KV, "TenantCluster/demo.spec.version", _at("TenantCluster", "spec", "version")),
    (KV, "TenantCluster/demo.spec.talos.version", _at("TenantCluster", "spec", "talos", "version")),
    (KV, "TenantCluster/demo.spec.talos.schematicID", _at("TenantCluster", "spec", "talos", "schematicID")),
    (PX, "TenantCluster/acme.spec.proxmox.credentialsSecretName",
     _at("TenantCluster", "spec", "proxmox", "credentialsSecretName")),
    (PX, "TenantCluster/acme.spec.proxmox.csi.storageClasses[0].name",
     lambda d, v: doc(d, "TenantCluster")["spec"]["proxmox"]["csi"]["storageClasses"][0].__setitem__("name", v)),
    (PX, "NodePool/md0.spec.proxmox.templateTags[0]",
     lambda d, v: doc(d, "NodePool", "md0")["spec"]["proxmox"].__setitem__("templateTags", [v])),
    (KV, "NodePool/md0.spec.healthCheck.readyFalseTimeout",
     _at("NodePool", "spec", "healthCheck", "readyFalseTimeout", name="md0")),
    (KV, "NodePool/md0.spec.healthCheck.maxUnhealthy", _at("NodePool", "spec", "healthCheck", "maxUnhealthy",
                                                           name="md0")),
    (KV, "TenantCluster/demo.spec.network.clusterDomain", _at("TenantCluster", "spec", "network", "clusterDomain")),
    (KV, "NodePool/md0.spec.kubevirt.diskSize", _at("NodePool", "spec", "kubevirt", "diskSize", name="md0")),
    (KV, "NodePool/md0.spec.kubevirt.storageClass", _at("NodePool", "spec", "kubevirt", "storageClass", name="md0")),
]


@pytest.mark.parametrize(("example", "where", "mutate"), NEWLINE_CASES, ids=[w for _, w, _ in NEWLINE_CASES])
def test_a_trailing_newline_is_refused(example: str, where: str, mutate: Callable[[Docs, Any], None],
                                       tmp_path: Path) -> None:
    docs = clone(load_example(example))
    values = {
        "namespace": "tenant-demo", "name": "md0", "version": "v1.33", "talos.version": "v1.13.6",
        "schematicID": "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba",
        "credentialsSecretName": "capmox-credentials", "storageClasses[0].name": "fast",
        "templateTags[0]": "talos", "readyFalseTimeout": "10m", "maxUnhealthy": "50%",
        "clusterDomain": "cluster.local", "diskSize": "20Gi", "storageClass": "replicated",
    }
    value = next(v for k, v in values.items() if where.endswith(k))
    mutate(docs, value + "\n")
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path)
    expected = where.replace("NodePool/md0.metadata", "NodePool/'md0\\n'.metadata")
    assert "\\n'" in out.refusal_at(expected)


@pytest.mark.parametrize("pattern", [v for k, v in vars(patterns).items() if k.isupper() and isinstance(v, str)])
def test_every_shared_pattern_refuses_a_trailing_newline(pattern: str) -> None:
    sample = {
        patterns.DNS_LABEL: "a", patterns.DNS_SUBDOMAIN: "a.b", patterns.KUBE_VERSION: "v1.33",
        patterns.TALOS_VERSION: "v1.13.6", patterns.SEMVER_TAG: "v1.2.3", patterns.SCHEMATIC_ID: "0" * 64,
        patterns.PERCENT_OR_INT: "50%", patterns.PVE_TAG: "talos",
        patterns.LITERAL_IP_CHARS: "10.0.0.1", patterns.FLUX_INTERVAL: "1h", patterns.URL: "https://x.example/a",
        patterns.TALOS_MACHINE_TOKEN: "abcdef.0123456789abcdef", patterns.BOOTSTRAP_TOKEN_ID: "abcdef",
        patterns.BOOTSTRAP_TOKEN_SECRET: "0123456789abcdef", patterns.BASE64: "YWJj",
    }[pattern]
    assert patterns.full_match(pattern, sample)
    assert not patterns.full_match(pattern, sample + "\n")


def test_a_lone_surrogate_is_refused_in_a_free_text_field(tmp_path: Path) -> None:
    docs = clone(load_example(KV))
    doc(docs, "TenantCluster")["metadata"]["annotations"] = {"note": "PLACEHOLDER"}
    text = dump(docs).replace("PLACEHOLDER", '"ok \\udcff"')
    assert "surrogate" in invoke(["render", "-f", "t.yaml"], {"t.yaml": text}, tmp_path).refusal_at("t.yaml:")


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("diskSize", "-5Gi", "positive"),
        ("diskSize", "0", "positive"),
        ("diskSize", "lots", "not a Kubernetes quantity"),
        ("instanceType", "U1 Medium", "not a valid object name"),
    ],
)
def test_kubevirt_pool_fields_rendered_verbatim(field: str, value: str, fragment: str, tmp_path: Path) -> None:
    docs = clone(load_example(KV))
    doc(docs, "NodePool", "md0")["spec"]["kubevirt"][field] = value
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path)
    assert fragment in out.refusal_at(f"NodePool/md0.spec.kubevirt.{field}")


@pytest.mark.parametrize(("domain", "fragment"), [
    ("Cluster.Local", "'Cluster.Local' is not a DNS domain"),
    ("a..b", "'a..b' is not a DNS domain"),
    ("-a.local", "'-a.local' is not a DNS domain"),
    ("x" * 254, "at most 253 characters"),
])
def test_cluster_domain_is_a_dns_domain(domain: str, fragment: str, tmp_path: Path) -> None:
    docs = clone(load_example(KV))
    doc(docs, "TenantCluster")["spec"]["network"] = {"clusterDomain": domain}
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path)
    assert fragment in out.refusal_at("TenantCluster/demo.spec.network.clusterDomain")


def test_memory_adjustment_is_bounded_by_the_crd_int64(tmp_path: Path) -> None:
    docs = clone(load_example(PX))
    doc(docs, "TenantCluster")["spec"]["proxmox"]["schedulerHints"] = {"memoryAdjustment": 2**63}
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path)
    assert "64-bit" in out.refusal_at("t.yaml:")
    from tenantctl.spec.tenant import SchedulerHintsSpec

    with pytest.raises(ValueError, match="less than or equal to 9223372036854775807"):
        SchedulerHintsSpec(memory_adjustment=2**63)


OBSERVED_CASES = [
    ("talosSecrets.bootstrapTokenID", "q1w2e3\n"),
    ("talosSecrets.bootstrapTokenID", "Q1W2E3"),
    ("talosSecrets.bootstrapTokenSecret", "short"),
    ("talosSecrets.token", "abcdef.0123456789abcdef\n"),
    ("talosSecrets.clusterID", "not base64!"),
    ("talosSecrets.clusterSecret", "a b"),
    ("kubernetesCA", "-----BEGIN CERTIFICATE-----"),
    ("talosCA", "x" * 70_000),
    ("endpoint", "192.0.2.10\n"),
    ("endpoint", "https://x"),
    ("managementClusterDomain", "Cluster.Local"),
    ("metadata.name", "Acme"),
]


@pytest.mark.parametrize(("field", "value"), OBSERVED_CASES, ids=[f"{f}={v[:12]!r}" for f, v in OBSERVED_CASES])
def test_every_observed_state_field_is_checked(field: str, value: str, tmp_path: Path) -> None:
    observed = clone(load_example("observed-proxmox.yaml"))
    node = observed[0]
    *parents, last = field.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    out = invoke(["render", "-f", "t.yaml", "--observed", "o.yaml"],
                 {"t.yaml": dump(load_example(PX)), "o.yaml": dump(observed)}, tmp_path)
    out.refusal_at(f".{field}")


def test_cluster_dns_is_a_literal_ip(tmp_path: Path) -> None:
    observed = clone(load_example("observed-kubevirt.yaml"))
    observed[0]["clusterDNS"] = "kube-dns.kube-system"
    out = invoke(["render", "-f", "t.yaml", "--observed", "o.yaml"],
                 {"t.yaml": dump(load_example(KV)), "o.yaml": dump(observed)}, tmp_path)
    assert "literal IP" in out.refusal_at("ObservedState/demo.clusterDNS")


def test_a_kubevirt_endpoint_must_be_an_ip(tmp_path: Path) -> None:
    observed = clone(load_example("observed-kubevirt.yaml"))
    observed[0]["endpoint"] = "apiserver.example"
    out = invoke(["render", "-f", "t.yaml", "--observed", "o.yaml"],
                 {"t.yaml": dump(load_example(KV)), "o.yaml": dump(observed)}, tmp_path)
    assert "literal IP on kubevirt" in out.refusal_at("ObservedState/demo.endpoint")


PLATFORM_CASES = [
    ("namespace", "Tenantctl System"),
    ("namespace", "tenantctl-system\n"),
    ("sources.coredns.url", "https://coredns.github.io/helm\n"),
    ("sources.coredns.url", "ftp://x"),
    ("sources.coredns.interval", "1 hour"),
    ("sources.coredns.interval", "1h\n"),
    ("sources.coredns.version", "1.43.0\n"),
    ("sources.coredns.chart", "core dns"),
]


@pytest.mark.parametrize(("field", "value"), PLATFORM_CASES, ids=[f"{f}={v!r}" for f, v in PLATFORM_CASES])
def test_platform_chart_fields_rendered_verbatim(field: str, value: str, tmp_path: Path) -> None:
    platform = clone(load_example("platform.yaml"))
    charts = doc(platform, "Platform")["spec"].setdefault("charts", {})
    charts.setdefault("sources", {})["coredns"] = {
        "kind": "HelmRepository", "url": "https://coredns.github.io/helm", "chart": "coredns", "version": "1.43.0",
    }
    node = charts
    *parents, last = field.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    files = {"t.yaml": dump(load_example(KV)), "p.yaml": dump(platform)}
    for command in (["render", "-f", "t.yaml", "--platform", "p.yaml"], ["providers", "render", "-f", "p.yaml"]):
        invoke(command, files, tmp_path).refusal_at(f"spec.charts.{field}")
