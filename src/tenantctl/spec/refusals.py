"""What is refused where: each refusal of the spec and the first place that stops it at `kubectl apply`.

Data, not prose: the tables of `docs/admission.md` and `docs/spec.md` are generated from `REFUSALS`, and the
tests hold each row to its word (a CRD row is refused by the generated CRDs alone, a webhook row by
the webhook handler). Whatever the row says, `tenantctl validate` and the operator (which marks the
object `Ready=False/InvalidSpec`) refuse it too: they run every check.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["LIVE_ONLY", "OWN_SUITES", "REFUSALS", "Layer", "Refusal", "markdown_table", "refusal_for"]


class Layer(StrEnum):
    SCHEMA = "CRD schema"
    CEL = "CRD CEL rule"
    TRANSITION = "CRD CEL transition rule"
    WEBHOOK = "webhook"
    API_SERVER = "API server itself"


@dataclass(frozen=True)
class Refusal:
    layer: Layer
    how: str


def _s(how: str) -> Refusal:
    return Refusal(Layer.SCHEMA, how)


def _c(how: str) -> Refusal:
    return Refusal(Layer.CEL, how)


def _w(how: str) -> Refusal:
    return Refusal(Layer.WEBHOOK, how)


_MAP_KEYS = "map keys: no CEL rule (a key's length cannot be bounded for the cost)"

# Keys are the refusal cases of the spec tests (or the start of a family of them, e.g. every
# "label key …" case), plus the refusals only a live object can have (`LIVE_ONLY`).
REFUSALS: dict[str, Refusal] = {
    "unknown field with suggestion": _s("no such property (kubectl's strict field validation; pruned otherwise)"),
    "unknown field in a pool": _s("no such property (kubectl's strict field validation; pruned otherwise)"),
    "unknown substrate": _s("`enum`"),
    "unknown Kubernetes minor": _c("the versions table as a CEL map"),
    "Kubernetes minor outside the Talos window": _c("the Talos support windows as a CEL map"),
    "Talos minor unknown": _c("the Talos support windows as a CEL map"),
    "missing proxmox block": _c("required on substrate proxmox"),
    "missing credentialsSecretName": _c("required on substrate proxmox"),
    "missing allowedNodes": _c("required on substrate proxmox"),
    "missing ipv4Config": _c("required on substrate proxmox"),
    "missing dnsServers": _c("required on substrate proxmox"),
    "empty dnsServers": _c("required on substrate proxmox"),
    "dnsServers with a substitution": _c("`isIP` on each item"),
    "dnsServers with a backtick": _c("`isIP` on each item"),
    "dnsServers with a space": _c("`isIP` on each item"),
    "dnsServers hostname": _c("`isIP` on each item"),
    "dnsServers IPv6-shaped with a substitution": _c("`isIP` on each item"),
    "gateway outside the prefix": _c("`cidr(gateway/prefix).containsIP/containsCIDR` over the entries"),
    "address entry not IP/CIDR/range": _c("`isIP`/`isCIDR` on each item"),
    "prefix above 32": _s("`maximum`"),
    "prefix below 0": _s("`minimum`"),
    "osImage on proxmox": _c("forbidden on substrate proxmox"),
    "storage with a linked clone": _c("`full || !has(storage)`"),
    "format with a linked clone": _c("`full || !has(format)`"),
    "templateTags and templateID": _c("exactly one of the two"),
    "templateTags entry naming a Talos version": _w("reads the cluster's spec.talos.version (another object)"),
    "patchUpgrades Automatic without a window": _w("not yet a CEL rule"),
    "patchUpgrades window duration outside 30m..24h": _w("parses the Go duration"),
    "patchUpgrades window start not HH:MM": _s("`pattern`"),
    "neither templateTags nor templateID": _c("exactly one of the two"),
    "proxmox pool without sizing": _w("reads the pool's cluster for its substrate"),
    "kubevirt pool with only cpu": _w("reads the pool's cluster for its substrate"),
    "minReplicas above maxReplicas": _c("`minReplicas <= maxReplicas`"),
    "replicas with autoscaling": _c("`replicas` xor `minReplicas`/`maxReplicas`"),
    "pool of a cluster not in the input": _w("reads the pool's cluster"),
    "names overflowing a label": _c("on the pool's root: `spec.cluster` and `metadata.name` lengths"),
    "IP pool too small for max replicas + surge": _w("sums every pool of the cluster"),
    "missing CCM credentials": _c("required on substrate proxmox"),
    "missing CSI credentials while enabled": _c("required while csi.enabled"),
    "cluster name not a DNS label": _c("on the root: `metadata.name`"),
    "namespace not a DNS label": Refusal(Layer.API_SERVER, "a Namespace name is a DNS label"),
    "version not shaped like one": _s("`pattern`"),
    "talos version not shaped like one": _s("`pattern`"),
    "schematic id not 64 hex": _s("`pattern`"),
    "pod CIDR not a network": _c("`isCIDR` and `cidr(self) == cidr(self).masked()`"),
    "pod and service CIDRs overlap": _c("`containsCIDR` both ways"),
    "service CIDR too small for cluster DNS": _c("`prefixLength()`"),
    "credentials Secret name invalid": _s("`pattern` (DNS subdomain)"),
    "CCM Secret name invalid": _s("`pattern` (DNS subdomain)"),
    "CSI Secret name invalid": _s("`pattern` (DNS subdomain)"),
    "two default StorageClasses": _c("`filter(c, c.default).size() <= 1`"),
    "duplicate StorageClass names": _s("`x-kubernetes-list-type: map` keyed by name"),
    "StorageClass name invalid": _s("`pattern` (DNS subdomain)"),
    "gateway not an address": _c("`isIP` and IPv4"),
    "no addresses": _s("`minItems`"),
    "autoscaled pool without maxReplicas": _c("both bounds or neither"),
    "rolling update that cannot progress": _c("`maxSurge > 0 || maxUnavailable > 0`"),
    "cpu not a quantity": _c("`isQuantity`"),
    "memory not positive": _c("`quantity(self).isGreaterThan(quantity('0'))`"),
    "cpu beyond any VM": _c("compared with the ceiling quantity"),
    "memory beyond any VM": _c("compared with the ceiling quantity"),
    "proxmox pool without a proxmox block": _w("reads the pool's cluster for its substrate"),
    "empty templateTags": _s("`minItems`"),
    "templateTags entry not a Proxmox tag": _s("`pattern` on each item"),
    "empty sourceNode": _c("`self.trim() != ''`"),
    "duplicate allowedNodes": _s("`x-kubernetes-list-type: set`"),
    "maxUnhealthy not a count or percent": _s("`pattern`"),
    "maxUnhealthy": _s("`pattern`, `minimum`; over 100%: a CEL rule"),
    "health timeout": _s("`pattern` (an unsigned Go duration)"),
    "zero Ready=False timeout": _c("`duration(self) > duration('0s')`"),
    "negative Ready=Unknown timeout": _s("`pattern` (an unsigned Go duration)"),
    "zero node startup timeout": _c("`duration(self) >= duration('30s')`"),
    "node startup timeout under CAPI's 30s": _c("`duration(self) >= duration('30s')`"),
    "label in reserved domain": _w(_MAP_KEYS),
    "label key": _w(_MAP_KEYS),
    "label value": _s("`pattern`, `maxLength` on the map's values"),
    "taint effect": _s("`enum`, `required`"),
    "taint key and effect twice": _s("`x-kubernetes-list-type: map` keyed by key and effect"),
    "taint key in a reserved domain": _w(
        "no CEL rule: run per item of an unbounded list, it exceeds the API server's cost budget"
    ),
    "taint key not a qualified name": _s("`pattern`"),
    "taint value": _s("`pattern`"),
    "unknown add-on with the closest name": _s("no such property (strict field validation; pruned otherwise)"),
    "valuesOverride": _w("walks the override against the owned keys, its depth and size"),
    "gpuOperator on proxmox": _w("not yet a CEL rule"),
    "gpus on a proxmox pool": _w("reads the pool's cluster for its substrate"),
    "gpu deviceName": _w("not yet a CEL rule"),
    "gpu name": _w("not yet a CEL rule"),
    "duplicate gpu names": _s("`x-kubernetes-list-type: map` keyed by name"),
    "two default kubevirt StorageClasses": _w("not yet a CEL rule"),
    "duplicate NodePool": Refusal(Layer.API_SERVER, "names are unique per namespace (AlreadyExists)"),
    "unsupported kind": Refusal(Layer.API_SERVER, "only the served kinds exist"),
    "wrong type": _s("`type`"),
    "spec.expose (every case of its own suite)": _c(
        "type from the substrate's default; fields per type; hostname, address, source ranges"
    ),
    "spec.controlPlane resources (cases of its own suite)": _c(
        "preset `enum`; preset xor requests/limits; positive quantities; limit not below its request"
    ),
    "spec.controlPlane.apiServer.extraArgs": _w(_MAP_KEYS),
    "NodePool spec.autoscaling (every case of its own suite)": _c(
        "Go-duration `pattern` and a positive `duration()`; only with minReplicas/maxReplicas"
    ),
    "NodePool spec.proxmox placement, VMIDs, tags and NICs (every case of its own suite)": _c(
        "node, tag and NIC-name `pattern`s, vmIDRange bounds and order, MTU, a pool per NIC, perNodeTemplates "
        "with spread; the node subset, sizes and overlaps across pools by `validate` and the operator only"
    ),
    "substrate changed on a live cluster": Refusal(Layer.TRANSITION, "`self == oldSelf` on spec.substrate"),
    "network changed on a live cluster": Refusal(Layer.TRANSITION, "`self == oldSelf` on spec.network"),
    "pool moved to another cluster": Refusal(Layer.TRANSITION, "`self == oldSelf` on spec.cluster"),
    "cluster deleted while pools remain": _w("lists the cluster's NodePools on DELETE"),
    "Kubernetes minor lowered on a live cluster": Refusal(
        Layer.TRANSITION, "the versions table as a CEL map: new minor >= old (Kamaji's webhook refuses a downgrade)"
    ),
    "Kubernetes minor skipped on a live cluster": Refusal(
        Layer.TRANSITION, "the versions table as a CEL map: new minor <= old + 1 (Kamaji's non-sequential mode)"
    ),
    "Talos minor lowered on a live cluster": Refusal(Layer.TRANSITION, "the Talos minors as a CEL map: new >= old"),
    "Kubernetes minor the management cluster's Kamaji cannot serve": _w(
        "knows the management cluster's Kamaji release (flag, observed image tag, tested default)"
    ),
    "address range that ends before it starts": _w("CEL has no order on IP addresses"),
}


OWN_SUITES = frozenset({
    "spec.controlPlane resources (cases of its own suite)",
    "spec.controlPlane.apiServer.extraArgs",
    "spec.expose (every case of its own suite)",
    "NodePool spec.autoscaling (every case of its own suite)",
    "NodePool spec.proxmox placement, VMIDs, tags and NICs (every case of its own suite)",
})
"""Rows standing for a refusal suite of their own (`tests/spec/test_*_refusals.py`)."""

LIVE_ONLY = frozenset({
    "substrate changed on a live cluster",
    "network changed on a live cluster",
    "pool moved to another cluster",
    "cluster deleted while pools remain",
    "address range that ends before it starts",
    "Kubernetes minor lowered on a live cluster",
    "Kubernetes minor skipped on a live cluster",
    "Talos minor lowered on a live cluster",
    "Kubernetes minor the management cluster's Kamaji cannot serve",
})


def refusal_for(case: str) -> Refusal:
    """The row of a refusal case: its own, else the longest family name it starts with (KeyError: none)."""
    if case in REFUSALS:
        return REFUSALS[case]
    family = max((name for name in REFUSALS if case.startswith(name + " ")), key=len, default=None)
    if family is None:
        raise KeyError(case)
    return REFUSALS[family]


def markdown_table() -> str:
    """The README/docs table: one row per refusal, grouped by where it is enforced."""
    rows = ["| Refusal | Enforced by | How |", "| --- | --- | --- |"]
    order = list(Layer)
    for name, refusal in sorted(REFUSALS.items(), key=lambda item: (order.index(item[1].layer), item[0].lower())):
        rows.append(f"| {name} | {refusal.layer} | {refusal.how} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
