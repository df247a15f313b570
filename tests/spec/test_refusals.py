"""Every refusal of the spec, demonstrated from the CLI: exit 2, the field path and the value named.

Each case mutates a valid example in one way; removing the check it guards turns the case red.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example, refused
from tenantctl.cli import app
from tenantctl.spec import parse_tenant_documents

Docs = list[dict[str, Any]]


@dataclass(frozen=True)
class Case:
    example: str
    mutate: Callable[[Docs], None]
    path: str
    fragment: str


def tc(docs: Docs) -> dict[str, Any]:
    return doc(docs, "TenantCluster")


def pool(docs: Docs, name: str = "md0") -> dict[str, Any]:
    return doc(docs, "NodePool", name)


def px(docs: Docs) -> dict[str, Any]:
    return tc(docs)["spec"]["proxmox"]


def ppx(docs: Docs) -> dict[str, Any]:
    return pool(docs)["spec"]["proxmox"]


def _set(getter: Callable[[Docs], dict[str, Any]], key: str, value: Any) -> Callable[[Docs], None]:
    def mutate(docs: Docs) -> None:
        getter(docs)[key] = value

    return mutate


def _drop(getter: Callable[[Docs], dict[str, Any]], key: str) -> Callable[[Docs], None]:
    def mutate(docs: Docs) -> None:
        getter(docs).pop(key)

    return mutate


def _ipv4(key: str, value: Any) -> Callable[[Docs], None]:
    return _set(lambda d: px(d)["ipv4Config"], key, value)


def _rename_cluster(name: str) -> Callable[[Docs], None]:
    def mutate(docs: Docs) -> None:
        tc(docs)["metadata"]["name"] = name
        for p in docs[1:]:
            p["spec"]["cluster"] = name

    return mutate


def _storage_classes(classes: list[dict[str, Any]]) -> Callable[[Docs], None]:
    return _set(lambda d: px(d)["csi"], "storageClasses", classes)


def _both_template_selectors(docs: Docs) -> None:
    ppx(docs)["templateID"] = 9000


def _no_template_selector(docs: Docs) -> None:
    ppx(docs).pop("templateTags")


def _orphan_pool(docs: Docs) -> None:
    pool(docs)["spec"]["cluster"] = "nope"


def _long_names(docs: Docs) -> None:
    tc(docs)["metadata"]["name"] = "a" * 40
    pool(docs)["spec"]["cluster"] = "a" * 40
    pool(docs)["metadata"]["name"] = "b" * 12


def _too_many_replicas(docs: Docs) -> None:
    pool(docs)["spec"]["replicas"] = 51


def _too_many_replicas_at_prefix_0(docs: Docs) -> None:
    _too_many_replicas(docs)
    px(docs)["ipv4Config"]["prefix"] = 0


def _ipv6_pool_smaller_than_ipv4(docs: Docs) -> None:
    """Dual-stack: each machine claims an address of each family; the IPv4 pool has 51, the IPv6 one 2."""
    px(docs)["ipv6Config"] = {"addresses": ["2001:db8:100::10-2001:db8:100::11"], "prefix": 64,
                              "gateway": "2001:db8:100::1"}


def _kubevirt_only_cpu(docs: Docs) -> None:
    pool(docs, "big")["spec"]["resources"] = {"cpu": "4"}


def _autoscale_inverted(docs: Docs) -> None:
    pool(docs)["spec"].update(minReplicas=5, maxReplicas=3)


def _autoscale_and_replicas(docs: Docs) -> None:
    pool(docs)["spec"].update(replicas=2, minReplicas=1, maxReplicas=3)


_GPU = {"name": "gpu1", "deviceName": "nvidia.com/GA102GL_A10"}


def _addon(name: str, override: Any) -> Callable[[Docs], None]:
    def mutate(docs: Docs) -> None:
        tc(docs)["spec"]["addons"] = {name: {"enabled": True, "valuesOverride": override}}

    return mutate


def _nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        node = {"k": node}
    return node


def _health(key: str, value: Any) -> Callable[[Docs], None]:
    return _set(lambda d: pool(d)["spec"], "healthCheck", {key: value})


def _labels(labels: dict[str, str]) -> Callable[[Docs], None]:
    return _set(lambda d: pool(d)["spec"], "labels", labels)


def _taints(taints: list[dict[str, str]]) -> Callable[[Docs], None]:
    return _set(lambda d: pool(d)["spec"], "taints", taints)


CASES: dict[str, Case] = {
    "unknown field with suggestion": Case(
        "proxmox.yaml", _set(px, "dnsServer", ["192.0.2.53"]), "TenantCluster/acme.spec.proxmox.dnsServer",
        "did you mean 'dnsServers'",
    ),
    "unknown field in a pool": Case(
        "proxmox.yaml", _set(ppx, "templateTag", ["talos"]), "NodePool/md0.spec.proxmox.templateTag",
        "did you mean 'templateTags'",
    ),
    "unknown substrate": Case(
        "proxmox.yaml", _set(lambda d: tc(d)["spec"], "substrate", "vmware"), "TenantCluster/acme.spec.substrate",
        "'vmware' is not a substrate",
    ),
    "patchUpgrades Automatic without a window": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"], "patchUpgrades", {"policy": "Automatic"}),
        "TenantCluster/demo.spec.patchUpgrades.window", "required with policy Automatic",
    ),
    "patchUpgrades window duration outside 30m..24h": Case(
        "kubevirt.yaml",
        _set(lambda d: tc(d)["spec"], "patchUpgrades",
             {"policy": "Automatic", "window": {"start": "02:00", "duration": "48h"}}),
        "TenantCluster/demo.spec.patchUpgrades.window.duration", "'48h' is outside 30m..24h",
    ),
    "patchUpgrades window start not HH:MM": Case(
        "kubevirt.yaml",
        _set(lambda d: tc(d)["spec"], "patchUpgrades",
             {"policy": "Automatic", "window": {"start": "2am", "duration": "2h"}}),
        "TenantCluster/demo.spec.patchUpgrades.window.start", "pattern",
    ),
    "unknown Kubernetes minor": Case(
        "proxmox.yaml", _set(lambda d: tc(d)["spec"], "version", "v1.99"), "TenantCluster/acme.spec.version",
        "unknown Kubernetes minor 'v1.99'",
    ),
    "Kubernetes minor outside the Talos window": Case(
        "proxmox.yaml", _set(lambda d: tc(d)["spec"], "version", "v1.30"), "TenantCluster/acme.spec.version",
        "outside the support window of Talos v1.13 (v1.31…v1.36",
    ),
    "Talos minor unknown": Case(
        "proxmox.yaml", _set(lambda d: tc(d)["spec"]["talos"], "version", "v1.9.0"),
        "TenantCluster/acme.spec.talos.version", "unknown Talos minor 'v1.9' (known: v1.11, v1.12, v1.13)",
    ),
    "missing proxmox block": Case(
        "proxmox.yaml", _drop(lambda d: tc(d)["spec"], "proxmox"), "TenantCluster/acme.spec.proxmox",
        "required on substrate proxmox",
    ),
    "missing credentialsSecretName": Case(
        "proxmox.yaml", _drop(px, "credentialsSecretName"), "TenantCluster/acme.spec.proxmox.credentialsSecretName",
        "required on substrate proxmox",
    ),
    "missing allowedNodes": Case(
        "proxmox.yaml", _drop(px, "allowedNodes"), "TenantCluster/acme.spec.proxmox.allowedNodes", "required",
    ),
    "missing ipv4Config": Case(
        "proxmox.yaml", _drop(px, "ipv4Config"), "TenantCluster/acme.spec.proxmox.ipv4Config", "no DHCP mode",
    ),
    "missing dnsServers": Case(
        "proxmox.yaml", _drop(px, "dnsServers"), "TenantCluster/acme.spec.proxmox.dnsServers",
        "cannot reach the management cluster's DNS",
    ),
    "empty dnsServers": Case(
        "proxmox.yaml", _set(px, "dnsServers", []), "TenantCluster/acme.spec.proxmox.dnsServers", "required",
    ),
    "dnsServers with a substitution": Case(
        "proxmox.yaml", _set(px, "dnsServers", ["192.0.2.53", "$(reboot)"]),
        "TenantCluster/acme.spec.proxmox.dnsServers[1]", "'$(reboot)' is not a literal",
    ),
    "dnsServers with a backtick": Case(
        "proxmox.yaml", _set(px, "dnsServers", ["`id`"]), "TenantCluster/acme.spec.proxmox.dnsServers[0]",
        "not a literal",
    ),
    "dnsServers with a space": Case(
        "proxmox.yaml", _set(px, "dnsServers", ["192.0.2.53 192.0.2.54"]),
        "TenantCluster/acme.spec.proxmox.dnsServers[0]", "not a literal",
    ),
    "dnsServers hostname": Case(
        "proxmox.yaml", _set(px, "dnsServers", ["dns.example.com"]), "TenantCluster/acme.spec.proxmox.dnsServers[0]",
        "'dns.example.com' is not a literal",
    ),
    "dnsServers IPv6-shaped with a substitution": Case(
        "proxmox.yaml", _set(px, "dnsServers", ["2001:db8::$x"]), "TenantCluster/acme.spec.proxmox.dnsServers[0]",
        "not a literal",
    ),
    "gateway outside the prefix": Case(
        "proxmox.yaml", _ipv4("gateway", "198.51.100.1"), "TenantCluster/acme.spec.proxmox.ipv4Config.gateway",
        "gateway 198.51.100.1 is outside the /24",
    ),
    "address entry not IP/CIDR/range": Case(
        "proxmox.yaml", _ipv4("addresses", ["192.0.2.100-192.0.2.150", "pool-a"]),
        "TenantCluster/acme.spec.proxmox.ipv4Config.addresses[1]", "'pool-a' is not an IPv4 address, CIDR or a-b range",
    ),
    "prefix above 32": Case(
        "proxmox.yaml", _ipv4("prefix", 33), "TenantCluster/acme.spec.proxmox.ipv4Config.prefix", "33 is outside 0–32",
    ),
    "prefix below 0": Case(
        "proxmox.yaml", _ipv4("prefix", -1), "TenantCluster/acme.spec.proxmox.ipv4Config.prefix", "-1 is outside 0–32",
    ),
    "osImage on proxmox": Case(
        "proxmox.yaml", _set(lambda d: tc(d)["spec"], "osImage", "https://example.org/talos.raw.xz"),
        "TenantCluster/acme.spec.osImage", "spec.talos.version and spec.talos.schematicID",
    ),
    "storage with a linked clone": Case(
        "proxmox.yaml", _set(ppx, "storage", "local-zfs"), "NodePool/md0.spec.proxmox.storage",
        "storage 'local-zfs' needs full: true; with full: false (a linked clone) "
        "the disk lives on the template's storage",
    ),
    "format with a linked clone": Case(
        "proxmox.yaml", _set(ppx, "format", "qcow2"), "NodePool/md0.spec.proxmox.format",
        "format 'qcow2' needs full: true",
    ),
    "templateTags and templateID": Case(
        "proxmox.yaml", _both_template_selectors, "NodePool/md0.spec.proxmox.templateTags", "are exclusive",
    ),
    "neither templateTags nor templateID": Case(
        "proxmox.yaml", _no_template_selector, "NodePool/md0.spec.proxmox.templateTags", "exactly one of",
    ),
    "proxmox pool without sizing": Case(
        "proxmox.yaml", _drop(lambda d: pool(d)["spec"], "resources"), "NodePool/md0.spec.resources",
        "a proxmox pool needs resources.cpu and/or resources.memory to size its VMs (numCores, memoryMiB)",
    ),
    "kubevirt pool with only cpu": Case(
        "kubevirt.yaml", _kubevirt_only_cpu, "NodePool/big.spec.resources", "cpu and memory together or neither",
    ),
    "minReplicas above maxReplicas": Case(
        "kubevirt.yaml", _autoscale_inverted, "NodePool/md0.spec.minReplicas",
        "minReplicas (5) is greater than maxReplicas (3)",
    ),
    "replicas with autoscaling": Case(
        "proxmox.yaml", _autoscale_and_replicas, "NodePool/md0.spec.replicas", "exclusive",
    ),
    "pool of a cluster not in the input": Case(
        "proxmox.yaml", _orphan_pool, "NodePool/md0.spec.cluster", "no TenantCluster 'nope'",
    ),
    "names overflowing a label": Case(
        "proxmox.yaml", _long_names, "NodePool/" + "b" * 12 + ".metadata.name", "over the 63-character label limit",
    ),
    "IP pool too small for max replicas + surge": Case(
        "proxmox.yaml", _too_many_replicas, "TenantCluster/acme.spec.proxmox.ipv4Config.addresses",
        "51 usable addresses, but the node pools can claim 52",
    ),
    "IP pool too small for max replicas + surge at prefix 0": Case(
        "proxmox.yaml", _too_many_replicas_at_prefix_0, "TenantCluster/acme.spec.proxmox.ipv4Config.addresses",
        "51 usable addresses, but the node pools can claim 52",
    ),
    "IP pool too small for max replicas + surge in IPv6": Case(
        "proxmox.yaml", _ipv6_pool_smaller_than_ipv4, "TenantCluster/acme.spec.proxmox.ipv6Config.addresses",
        "2 usable addresses, but the node pools can claim 3",
    ),
    "missing CCM credentials": Case(
        "proxmox.yaml", _set(px, "ccm", {}), "TenantCluster/acme.spec.proxmox.ccm.credentialsSecretName",
        "uninitialized taint",
    ),
    "missing CSI credentials while enabled": Case(
        "proxmox.yaml", _set(px, "csi", {"enabled": True}), "TenantCluster/acme.spec.proxmox.csi.credentialsSecretName",
        "required while spec.proxmox.csi.enabled is true",
    ),
    "cluster name not a DNS label": Case(
        "kubevirt.yaml", _rename_cluster("Demo_1"), "TenantCluster/Demo_1.metadata.name", "must be a DNS label",
    ),
    "namespace not a DNS label": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["metadata"], "namespace", "Tenant Demo"),
        "TenantCluster/demo.metadata.namespace", "'Tenant Demo' must be a DNS label",
    ),
    "version not shaped like one": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"], "version", "latest"), "TenantCluster/demo.spec.version",
        "'latest' is not a Kubernetes version",
    ),
    "talos version not shaped like one": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"]["talos"], "version", "1.13"),
        "TenantCluster/demo.spec.talos.version", "'1.13' is not a Talos version",
    ),
    "schematic id not 64 hex": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"]["talos"], "schematicID", "abc"),
        "TenantCluster/demo.spec.talos.schematicID", "'abc' is not an Image Factory schematic ID",
    ),
    "pod CIDR not a network": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"].setdefault("network", {}), "podCIDR", "10.243.0.1/16"),
        "TenantCluster/demo.spec.network.podCIDR", "'10.243.0.1/16' is not a network CIDR",
    ),
    "pod and service CIDRs overlap": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"].setdefault("network", {}), "serviceCIDR", "10.243.0.0/20"),
        "TenantCluster/demo.spec.network", "overlap",
    ),
    "service CIDR too small for cluster DNS": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"].setdefault("network", {}), "serviceCIDR", "10.95.0.0/29"),
        "TenantCluster/demo.spec.network.serviceCIDR", "too small",
    ),
    "credentials Secret name invalid": Case(
        "proxmox.yaml", _set(px, "credentialsSecretName", "Capmox_Acme"),
        "TenantCluster/acme.spec.proxmox.credentialsSecretName", "'Capmox_Acme' is not a valid Secret name",
    ),
    "CCM Secret name invalid": Case(
        "proxmox.yaml", _set(lambda d: px(d)["ccm"], "credentialsSecretName", "root@pam!leak"),
        "TenantCluster/acme.spec.proxmox.ccm.credentialsSecretName", "'root@pam!leak' is not a valid Secret name",
    ),
    "CSI Secret name invalid": Case(
        "proxmox.yaml", _set(lambda d: px(d)["csi"], "credentialsSecretName", "PVE CSI"),
        "TenantCluster/acme.spec.proxmox.csi.credentialsSecretName", "'PVE CSI' is not a valid Secret name",
    ),
    "two default StorageClasses": Case(
        "proxmox.yaml", _storage_classes([{"name": "a", "storage": "s", "default": True},
                                          {"name": "b", "storage": "s", "default": True}]),
        "TenantCluster/acme.spec.proxmox.csi.storageClasses[1].default",
        "more than one default StorageClass ([0] 'a', [1] 'b')",
    ),
    "duplicate StorageClass names": Case(
        "proxmox.yaml", _storage_classes([{"name": "a", "storage": "s"}, {"name": "a", "storage": "t"}]),
        "TenantCluster/acme.spec.proxmox.csi.storageClasses[1].name", "duplicate StorageClass name 'a'",
    ),
    "StorageClass name invalid": Case(
        "proxmox.yaml", _storage_classes([{"name": "Fast SSD", "storage": "s"}]),
        "TenantCluster/acme.spec.proxmox.csi.storageClasses[0].name", "'Fast SSD' is not a valid object name",
    ),
    "gateway not an address": Case(
        "proxmox.yaml", _ipv4("gateway", "router"), "TenantCluster/acme.spec.proxmox.ipv4Config.gateway",
        "'router' is not an IPv4 address",
    ),
    "no addresses": Case(
        "proxmox.yaml", _ipv4("addresses", []), "TenantCluster/acme.spec.proxmox.ipv4Config.addresses",
        "at least one address",
    ),
    "autoscaled pool without maxReplicas": Case(
        "kubevirt.yaml", _set(lambda d: pool(d)["spec"], "maxReplicas", None),
        "NodePool/md0.spec.maxReplicas", "needs both minReplicas and maxReplicas",
    ),
    "rolling update that cannot progress": Case(
        "proxmox.yaml", _set(lambda d: pool(d)["spec"], "rollingUpdate", {"maxSurge": 0, "maxUnavailable": 0}),
        "NodePool/md0.spec.rollingUpdate", "cannot both be 0",
    ),
    "cpu not a quantity": Case(
        "proxmox.yaml", _set(lambda d: pool(d)["spec"]["resources"], "cpu", "two"),
        "NodePool/md0.spec.resources.cpu", "'two' is not a Kubernetes quantity",
    ),
    "memory not positive": Case(
        "proxmox.yaml", _set(lambda d: pool(d)["spec"]["resources"], "memory", "0"),
        "NodePool/md0.spec.resources.memory", "'0' must be positive",
    ),
    "cpu beyond any VM": Case(
        "kubevirt.yaml", _set(lambda d: pool(d, "big")["spec"]["resources"], "cpu", "1e9"),
        "NodePool/big.spec.resources.cpu", "'1e9' is more than a VM can be given (1024 cores)",
    ),
    "memory beyond any VM": Case(
        "proxmox.yaml", _set(lambda d: pool(d)["spec"]["resources"], "memory", "17Ti"),
        "NodePool/md0.spec.resources.memory", "'17Ti' is more than a VM can be given (16Ti)",
    ),
    "memory beyond any VM with cpu left to the default": Case(
        "kubevirt.yaml",
        _set(lambda d: pool(d)["spec"], "resources", {"memory": "17Ti"}),
        "NodePool/md0.spec.resources.memory", "'17Ti' is more than a VM can be given (16Ti)",
    ),
    "proxmox pool without a proxmox block": Case(
        "proxmox.yaml", _drop(lambda d: pool(d)["spec"], "proxmox"), "NodePool/md0.spec.proxmox",
        "runs on substrate 'proxmox'",
    ),
    "empty templateTags": Case(
        "proxmox.yaml", _set(ppx, "templateTags", []), "NodePool/md0.spec.proxmox.templateTags", "must not be empty",
    ),
    "templateTags entry not a Proxmox tag": Case(
        "proxmox.yaml", _set(ppx, "templateTags", ["talos", "Bad Tag"]),
        "NodePool/md0.spec.proxmox.templateTags[1]", "'Bad Tag' is not a Proxmox tag",
    ),
    "templateTags entry naming a Talos version the spec does not run": Case(
        "proxmox.yaml", _set(ppx, "templateTags", ["talos", "v1.13.5"]),
        "NodePool/md0.spec.proxmox.templateTags[1]",
        "'v1.13.5' selects a Talos v1.13.5 template but spec.talos.version is v1.13.6",
    ),
    "duplicate allowedNodes": Case(
        "proxmox.yaml", _set(px, "allowedNodes", ["pve1", "pve2", "pve1"]),
        "TenantCluster/acme.spec.proxmox.allowedNodes[2]", "duplicate entry 'pve1' (already at index 0)",
    ),
    "empty sourceNode": Case(
        "proxmox.yaml", _set(ppx, "sourceNode", " "), "NodePool/md0.spec.proxmox.sourceNode", "must not be empty",
    ),
    "maxUnhealthy not a count or percent": Case(
        "proxmox.yaml", _set(lambda d: pool(d)["spec"], "healthCheck", {"maxUnhealthy": "half"}),
        "NodePool/md0.spec.healthCheck.maxUnhealthy", "'half' must be an integer or an integer percentage",
    ),
    "health timeout without a unit": Case(
        "proxmox.yaml", _health("readyUnknownTimeout", "90"), "NodePool/md0.spec.healthCheck.readyUnknownTimeout",
        "'90' is not a Go duration",
    ),
    "health timeout with a trailing space": Case(
        "proxmox.yaml", _health("readyFalseTimeout", "10m "), "NodePool/md0.spec.healthCheck.readyFalseTimeout",
        "'10m ' is not a Go duration",
    ),
    "zero Ready=False timeout": Case(
        "proxmox.yaml", _health("readyFalseTimeout", "0s"), "NodePool/md0.spec.healthCheck.readyFalseTimeout",
        "'0s' must be a positive duration: a new node reports Ready=False until its CNI runs",
    ),
    "negative Ready=Unknown timeout": Case(
        "proxmox.yaml", _health("readyUnknownTimeout", "-5m"), "NodePool/md0.spec.healthCheck.readyUnknownTimeout",
        "'-5m' must be a positive duration",
    ),
    "zero node startup timeout": Case(
        "kubevirt.yaml", _health("nodeStartupTimeout", "0"), "NodePool/md0.spec.healthCheck.nodeStartupTimeout",
        "'0' must be a positive duration",
    ),
    "node startup timeout under CAPI's 30s": Case(
        "kubevirt.yaml", _health("nodeStartupTimeout", "29.9s"), "NodePool/md0.spec.healthCheck.nodeStartupTimeout",
        "'29.9s' is under 30s",
    ),
    "maxUnhealthy negative": Case(
        "proxmox.yaml", _health("maxUnhealthy", -1), "NodePool/md0.spec.healthCheck.maxUnhealthy",
        "-1 must not be negative",
    ),
    "maxUnhealthy negative string": Case(
        "proxmox.yaml", _health("maxUnhealthy", "-1"), "NodePool/md0.spec.healthCheck.maxUnhealthy",
        "'-1' must be an integer or an integer percentage",
    ),
    "maxUnhealthy fractional percent": Case(
        "proxmox.yaml", _health("maxUnhealthy", "12.5%"), "NodePool/md0.spec.healthCheck.maxUnhealthy",
        "'12.5%' must be an integer or an integer percentage",
    ),
    "maxUnhealthy over 100%": Case(
        "proxmox.yaml", _health("maxUnhealthy", "101%"), "NodePool/md0.spec.healthCheck.maxUnhealthy",
        "'101%' is more than 100%",
    ),
    "maxUnhealthy with a newline": Case(
        "proxmox.yaml", _health("maxUnhealthy", "50%\n"), "NodePool/md0.spec.healthCheck.maxUnhealthy",
        "must be an integer or an integer percentage",
    ),
    **{
        f"label in reserved domain {key}": Case(
            "kubevirt.yaml", _labels({key: "x"}), f"NodePool/md0.spec.labels[{key!r}]",
            f"label key {key!r} is in the reserved domain {domain!r}",
        )
        for key, domain in (
            ("kubernetes.io/hostname", "kubernetes.io"),
            ("topology.kubernetes.io/zone", "kubernetes.io"),
            ("x.node-role.kubernetes.io/infra", "kubernetes.io"),
            ("k8s.io/x", "k8s.io"),
            ("storage.k8s.io/x", "k8s.io"),
            ("tenantctl.io/nodepool", "tenantctl.io"),
            ("a.tenantctl.io/x", "tenantctl.io"),
        )
    },
    **{
        f"label key {key!r}": Case(
            "kubevirt.yaml", _labels({key: "x"}), f"NodePool/md0.spec.labels[{key!r}]", fragment,
        )
        for key, fragment in (
            ("bad key", "name 'bad key' must be ≤63 characters"),
            ("-tier", "name '-tier' must be"),
            ("tier-", "name 'tier-' must be"),
            ("a" * 64, "must be ≤63 characters"),
            ("Example.com/tier", "prefix 'Example.com' is not a DNS subdomain"),
            ("a/b/c", "prefix 'a/b' is not a DNS subdomain"),
            ("example.com/", "has an empty name"),
            ("/tier", "has an empty prefix"),
            ("tier\n", "must be ≤63 characters"),
        )
    },
    **{
        f"label value {value!r}": Case(
            "kubevirt.yaml", _labels({"example.com/tier": value}), "NodePool/md0.spec.labels['example.com/tier']",
            f"value {value!r} must be empty or ≤63 characters",
        )
        for value in ("two words", "-x", "x.", "a" * 64, "gold\n", "é")
    },
    "taint effect unknown": Case(
        "kubevirt.yaml", _taints([{"key": "example.com/gpu", "effect": "NoEvict"}]),
        "NodePool/md0.spec.taints[0].effect", "'NoEvict' is not one of NoSchedule, PreferNoSchedule, NoExecute",
    ),
    "taint effect missing": Case(
        "kubevirt.yaml", _taints([{"key": "example.com/gpu"}]), "NodePool/md0.spec.taints[0].effect",
        "required field is missing",
    ),
    "taint key and effect twice": Case(
        "kubevirt.yaml",
        _taints([
            {"key": "example.com/gpu", "value": "a", "effect": "NoSchedule"},
            {"key": "example.com/gpu", "value": "b", "effect": "NoExecute"},
            {"key": "example.com/gpu", "value": "c", "effect": "NoSchedule"},
        ]),
        "NodePool/md0.spec.taints[2]", "duplicate taint 'example.com/gpu' with effect 'NoSchedule' (also taints[0])",
    ),
    "taint key in a reserved domain": Case(
        "kubevirt.yaml", _taints([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        "NodePool/md0.spec.taints[0].key",
        "taint key 'node.kubernetes.io/unschedulable' is in the reserved domain 'kubernetes.io'",
    ),
    "taint key not a qualified name": Case(
        "kubevirt.yaml", _taints([{"key": "gpu card", "effect": "NoSchedule"}]), "NodePool/md0.spec.taints[0].key",
        "taint key 'gpu card' name 'gpu card' must be",
    ),
    "taint value not a label value": Case(
        "kubevirt.yaml", _taints([{"key": "example.com/gpu", "value": "a b", "effect": "NoSchedule"}]),
        "NodePool/md0.spec.taints[0].value", "'a b' must be empty or ≤63 characters",
    ),
    "duplicate NodePool": Case(
        "proxmox.yaml", lambda d: d.append(clone([pool(d)])[0]), "NodePool/md0.metadata.name",
        "appears more than once",
    ),
    "unsupported kind": Case(
        "proxmox.yaml", lambda d: d.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        "ConfigMap/x.kind", "unsupported apiVersion/kind v1/ConfigMap",
    ),
    "unknown add-on with the closest name": Case(
        "kubevirt.yaml", _set(lambda d: tc(d)["spec"], "addons", {"certManger": {"enabled": True}}),
        "TenantCluster/demo.spec.addons.certManger", "did you mean 'certManager'?",
    ),
    "valuesOverride of certManager crds.keep": Case(
        "kubevirt.yaml", _addon("certManager", {"crds": {"keep": False}}),
        "TenantCluster/demo.spec.addons.certManager.valuesOverride.crds.keep", "would change 'crds.keep'",
    ),
    "valuesOverride of the ingressNginx node selector": Case(
        "kubevirt.yaml", _addon("ingressNginx", {"controller": {"nodeSelector": {"any": "node"}}}),
        "TenantCluster/demo.spec.addons.ingressNginx.valuesOverride.controller.nodeSelector",
        "would change 'controller.nodeSelector'",
    ),
    "valuesOverride replacing an owned key's parent": Case(
        "kubevirt.yaml", _addon("ingressNginx", {"controller": None}),
        "TenantCluster/demo.spec.addons.ingressNginx.valuesOverride.controller",
        "would change 'controller.nodeSelector'",
    ),
    "valuesOverride of the verticalPodAutoscaler CRDs": Case(
        "kubevirt.yaml", _addon("verticalPodAutoscaler", {"crds": {"enabled": False}}),
        "TenantCluster/demo.spec.addons.verticalPodAutoscaler.valuesOverride.crds.enabled",
        "would change 'crds.enabled'",
    ),
    "valuesOverride of velero snapshots": Case(
        "kubevirt.yaml", _addon("velero", {"snapshotsEnabled": True}),
        "TenantCluster/demo.spec.addons.velero.valuesOverride.snapshotsEnabled", "would change 'snapshotsEnabled'",
    ),
    "valuesOverride of the gpuOperator driver": Case(
        "kubevirt.yaml", _addon("gpuOperator", {"driver": {"enabled": True}}),
        "TenantCluster/demo.spec.addons.gpuOperator.valuesOverride.driver.enabled", "would change 'driver.enabled'",
    ),
    "valuesOverride too deep": Case(
        "kubevirt.yaml", _addon("velero", _nested(17)),
        "TenantCluster/demo.spec.addons.velero.valuesOverride", "nested 17 levels deep, over the limit of 16",
    ),
    "valuesOverride too large": Case(
        "kubevirt.yaml", _addon("velero", {"blob": "x" * 70_000}),
        "TenantCluster/demo.spec.addons.velero.valuesOverride", "over the 65536-byte limit",
    ),
    "gpuOperator on proxmox": Case(
        "proxmox.yaml", _set(lambda d: tc(d)["spec"], "addons", {"gpuOperator": {"enabled": True}}),
        "TenantCluster/acme.spec.addons.gpuOperator.enabled", "refused on substrate proxmox",
    ),
    "gpus on a proxmox pool": Case(
        "proxmox.yaml", _set(lambda d: pool(d)["spec"], "kubevirt", {"gpus": [_GPU]}),
        "NodePool/md0.spec.kubevirt.gpus",
        "1 GPU(s) refused on substrate proxmox: tenantctl passes GPUs only into kubevirt worker VMs",
    ),
    "gpu deviceName not a resource name": Case(
        "kubevirt.yaml", _set(lambda d: pool(d)["spec"]["kubevirt"], "gpus", [{"name": "gpu1", "deviceName": "A10"}]),
        "NodePool/md0.spec.kubevirt.gpus[0].deviceName", "'A10' is not a host device resource name",
    ),
    "gpu name not a DNS label": Case(
        "kubevirt.yaml", _set(lambda d: pool(d)["spec"]["kubevirt"], "gpus", [{**_GPU, "name": "GPU_1"}]),
        "NodePool/md0.spec.kubevirt.gpus[0].name", "'GPU_1' must be a DNS label",
    ),
    "duplicate gpu names": Case(
        "kubevirt.yaml", _set(lambda d: pool(d)["spec"]["kubevirt"], "gpus", [_GPU, dict(_GPU)]),
        "NodePool/md0.spec.kubevirt.gpus[1].name", "duplicate GPU name 'gpu1'",
    ),
    "two default kubevirt StorageClasses": Case(
        "kubevirt.yaml",
        _set(lambda d: tc(d)["spec"], "kubevirt", {"storageClasses": [
            {"name": "fast", "default": True}, {"name": "slow"}, {"name": "bulk", "default": True}]}),
        "TenantCluster/demo.spec.kubevirt.storageClasses[2].default", "more than one default StorageClass",
    ),
    "wrong type": Case(
        "proxmox.yaml", _set(lambda d: pool(d)["spec"], "replicas", "two"), "NodePool/md0.spec.replicas",
        "unable to parse string as an integer (got 'two')",
    ),
}


def run_cli(tmp_path: Path, docs: Docs, *args: str) -> Any:
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    return CliRunner().invoke(app, [*args, "-f", str(spec)])


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_refusal_from_the_cli(case: Case, tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    docs = clone(load_example(case.example))
    case.mutate(docs)
    result = run_cli(tmp_path, docs, "render")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    line = next((ln for ln in result.stderr.splitlines() if ln.startswith(case.path + ":")), None)
    assert line is not None, f"no problem at {case.path}:\n{result.stderr}"
    assert case.fragment in line
    assert "Traceback" not in result.output
    assert result.stderr.replace(str(tmp_path), "<tmp>") == snapshot, "every problem, word for word"


@pytest.mark.parametrize("example", ["proxmox.yaml", "kubevirt.yaml"])
def test_unmutated_examples_render(example: str, tmp_path: Path) -> None:
    result = run_cli(tmp_path, load_example(example), "render")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""


def test_every_problem_is_reported_in_one_pass(tmp_path: Path) -> None:
    docs = clone(load_example("proxmox.yaml"))
    for case in ("unknown field with suggestion", "dnsServers hostname", "storage with a linked clone",
                 "osImage on proxmox", "gateway outside the prefix"):
        CASES[case].mutate(docs)
    result = run_cli(tmp_path, docs, "render")
    assert result.exit_code == 2
    paths = {ln.split(": ")[0] for ln in result.stderr.splitlines()}
    assert {
        "TenantCluster/acme.spec.proxmox.dnsServer",
        "TenantCluster/acme.spec.proxmox.dnsServers[0]",
        "NodePool/md0.spec.proxmox.storage",
        "TenantCluster/acme.spec.osImage",
        "TenantCluster/acme.spec.proxmox.ipv4Config.gateway",
    } <= paths


def test_proxmox_fields_on_a_kubevirt_cluster_are_a_warning(tmp_path: Path) -> None:
    docs = clone(load_example("kubevirt.yaml"))
    tc(docs)["spec"]["proxmox"] = {"allowedNodes": ["pve1"]}
    pool(docs)["spec"]["proxmox"] = {"sourceNode": "pve1"}
    result = run_cli(tmp_path, docs, "render")
    assert result.exit_code == 0
    assert "warning: TenantCluster/demo.spec.proxmox: ignored" in result.stderr
    assert "warning: NodePool/md0.spec.proxmox: ignored" in result.stderr
    assert "ProxmoxMachineTemplate" not in result.stdout


def test_an_ingress_label_with_a_value_is_a_warning_naming_the_pool() -> None:
    """The controller's DaemonSet selects the label's empty value: `true` matches nothing."""
    docs = clone(load_example("kubevirt.yaml"))
    tc(docs)["spec"].setdefault("addons", {})["ingressNginx"] = {"enabled": True}
    pool(docs)["spec"]["labels"] = {"node-role.kubernetes.io/ingress": "true"}
    warned = {w.path: w.message for w in parse_tenant_documents(docs).warnings}
    assert warned["NodePool/md0.spec.labels.node-role.kubernetes.io/ingress"] == (
        "'true': the ingress controller selects the value \"\" and will not run on this pool")
    assert "TenantCluster/demo.spec.addons.ingressNginx.enabled" in warned, "and then no pool has it"


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("apiVersion: tenantctl.io/v1alpha1\nkind: TenantCluster\nmetadata: {name: [\n")
    result = CliRunner().invoke(app, ["render", "-f", str(spec)])
    assert result.exit_code == 2
    assert f"{spec}:4:" in result.stderr
    assert "malformed YAML" in result.stderr


def test_a_patch_version_is_judged_by_its_minor() -> None:
    """`v1.34.2` is Kubernetes 1.34 to the versions table and to the Talos window; 1.99.3 is still unknown."""
    docs = clone(load_example("proxmox.yaml"))
    tc(docs)["spec"]["version"] = "v1.34.2"
    parse_tenant_documents(docs)
    tc(docs)["spec"]["version"] = "v1.99.3"
    assert refused(docs)["TenantCluster/acme.spec.version"].startswith("unknown Kubernetes minor 'v1.99' (known:")
    tc(docs)["spec"]["version"] = "v1.30.2"
    assert refused(docs)["TenantCluster/acme.spec.version"].startswith(
        "Kubernetes v1.30 is outside the support window of Talos v1.13")


def test_a_pool_may_have_the_largest_vm_but_no_more() -> None:
    docs = clone(load_example("proxmox.yaml"))
    pool(docs)["spec"]["resources"] = {"cpu": "1024", "memory": "16Ti"}
    parse_tenant_documents(docs)
    pool(docs)["spec"]["resources"] = {"cpu": "1025", "memory": "16Ti"}
    assert set(refused(docs)) == {"NodePool/md0.spec.resources.cpu"}


def test_a_registry_mirror_is_refused_at_its_host_and_endpoint() -> None:
    docs = clone(load_example("proxmox.yaml"))
    tc(docs)["spec"]["talos"]["registryMirrors"] = {
        "docker.io": {"endpoints": ["https://mirror.example.org", "ftp://mirror.example.org"]},
        "ghcr.io": {"endpoints": []},
    }
    mirrors = "TenantCluster/acme.spec.talos.registryMirrors"
    errors = refused(docs)
    assert set(errors) == {f"{mirrors}.docker.io.endpoints[1]", f"{mirrors}.ghcr.io.endpoints"}
    assert errors[f"{mirrors}.docker.io.endpoints[1]"].startswith(
        "'ftp://mirror.example.org' is not a registry endpoint")
    assert errors[f"{mirrors}.ghcr.io.endpoints"].startswith("at least one endpoint")


@pytest.mark.parametrize(("inside", "too_deep"), [(14, False), (15, True)])
def test_a_list_in_an_override_is_one_level(inside: int, too_deep: bool) -> None:
    """`{x: [<n levels>]}`: x is level 1, the list's item level 2, so 14 levels inside are 16 in all."""
    docs = clone(load_example("kubevirt.yaml"))
    _addon("velero", {"x": [_nested(inside)]})(docs)
    base = "TenantCluster/demo.spec.addons.velero.valuesOverride"
    if too_deep:
        assert refused(docs) == {base: "nested 17 levels deep, over the limit of 16"}
    else:
        parse_tenant_documents(docs)


def test_every_bad_address_entry_is_reported_not_only_the_first() -> None:
    docs = clone(load_example("proxmox.yaml"))
    px(docs)["ipv4Config"]["addresses"] = ["bogus", "192.0.2.100-192.0.2.150", "10.0.0.1", "also bogus"]
    base = "TenantCluster/acme.spec.proxmox.ipv4Config"
    errors = refused(docs)
    assert {path for path in errors if path.startswith(base)} == {
        f"{base}.addresses[0]", f"{base}.gateway", f"{base}.addresses[3]"}
    assert "outside the /24 of addresses[2] '10.0.0.1'" in errors[f"{base}.gateway"]


def test_a_proxmox_tenants_ignored_kubevirt_block_is_still_held_to_the_crds_syntax() -> None:
    """The API server refuses a bad name there whatever the substrate (found by tests/real/test_hostile.py):
    refused here too, with no semantics of an ignored list (no warning for an empty one)."""
    docs = clone(load_example("proxmox.yaml"))
    tc(docs)["spec"]["kubevirt"] = {"storageClasses": [{"name": "kubevirt\n"}, {"name": "a"}, {"name": "a"}]}
    assert refused(docs) == {
        "TenantCluster/acme.spec.kubevirt.storageClasses[0].name": "'kubevirt\\n' is not a valid object name",
        "TenantCluster/acme.spec.kubevirt.storageClasses[2].name": "duplicate StorageClass name 'a'",
    }
    tc(docs)["spec"]["kubevirt"] = {"storageClasses": []}
    assert not [w for w in parse_tenant_documents(docs).warnings if "kubevirt" in w.path]
