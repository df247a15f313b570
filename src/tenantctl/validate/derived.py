"""The objects a controller builds from ours, judged as that controller will build them.

A template is admitted by its own CRD, yet the object cloned from it is judged by another CRD, often with
rules the template's lacks: capmox v0.7.7's ProxmoxMachine refuses `sourceNode` beside `templateSelector`
while its ProxmoxMachineTemplate accepts both, so every clone failed and no worker was ever created.
`derived_objects` builds each derived object from its source the way its controller does (the source's
`spec.template.spec` as the derived spec, its `spec.template.metadata` as labels and annotations), and
`validate_objects` judges them with their CRDs, naming the source's field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DERIVATIONS", "Derivation", "Derived", "derived_objects"]


@dataclass(frozen=True)
class Derivation:
    """One source kind and what its controller builds from it."""

    kind: str
    """The derived object's kind (same group and version as the source)."""
    plural: str
    """Its resource name: the operator reads its CRD, `<plural>.<group>`."""
    builder: str
    """Who builds it, as the message says it."""
    carries_secrets: bool = False
    """Its spec holds credentials (a TalosConfig's patches carry the machine token and cluster secrets):
    a refusal names the field and the rule's kind, never the value, since it may reach a condition."""


# (group, source kind) → what is built from it. Cluster API v1.10.1 clones a machine's infrastructure and
# bootstrap templates (controllers/external.CreateFromTemplate: the template's `spec.template.spec` and
# its `spec.template.metadata`), and its MachineSet builds each Machine from the MachineDeployment's
# `spec.template` (computeDesiredMachine; its clusterName is the deployment's, which Cluster API's webhook
# keeps equal to the template's, so a problem of it is the deployment's own and is said there once).
DERIVATIONS: dict[tuple[str, str], Derivation] = {
    ("cluster.x-k8s.io", "MachineDeployment"): Derivation("Machine", "machines", "Cluster API's MachineSet builds"),
    ("infrastructure.cluster.x-k8s.io", "ProxmoxMachineTemplate"): Derivation(
        "ProxmoxMachine", "proxmoxmachines", "Cluster API clones"),
    ("infrastructure.cluster.x-k8s.io", "KubevirtMachineTemplate"): Derivation(
        "KubevirtMachine", "kubevirtmachines", "Cluster API clones"),
    ("bootstrap.cluster.x-k8s.io", "TalosConfigTemplate"): Derivation(
        "TalosConfig", "talosconfigs", "Cluster API clones", carries_secrets=True),
}


@dataclass(frozen=True)
class Derived:
    """A derived object and where its content comes from in the source (`label`, a field path)."""

    obj: dict[str, Any]
    label: str
    """`<SourceKind>/<name>.spec.template`: a problem at the derived `spec.x` reads `….spec.template.spec.x`."""
    derivation: Derivation

    @property
    def why(self) -> str:
        """`the ProxmoxMachine Cluster API clones from it`."""
        return f"the {self.derivation.kind} {self.derivation.builder} from it"


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def derived_objects(obj: Mapping[str, Any], label: str) -> Iterator[Derived]:
    """What a controller builds from `obj` (nothing when no controller derives from its kind)."""
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    derivation = DERIVATIONS.get((_group(api_version), kind))
    if derivation is None:
        return
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
        return  # the source's own CRD refuses it; nothing could be built from it
    source_meta = _mapping(obj.get("metadata"))
    template_meta = _mapping(template.get("metadata"))
    metadata: dict[str, Any] = {"name": source_meta.get("name")}
    if source_meta.get("namespace") is not None:
        metadata["namespace"] = source_meta["namespace"]
    for key in ("labels", "annotations"):
        if template_meta.get(key):
            metadata[key] = dict(template_meta[key])
    yield Derived(
        {"apiVersion": api_version, "kind": derivation.kind, "metadata": metadata, "spec": dict(template["spec"])},
        f"{label}.spec.template",
        derivation,
    )
