"""`TenantCluster.spec.addons`: optional tenant add-ons, each `{enabled, valuesOverride}`.

A user's `valuesOverride` deep-merges over the values tenantctl renders, so it can tune a chart but
must not take back what tenantctl relies on: the keys in `OWNED_VALUES` are refused with their path.
Overrides are bounded in size and depth: they travel inside a HelmRelease, an etcd object of the
management cluster, and a runaway document there harms every tenant.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec.base import SpecModel

__all__ = [
    "ADDON_NAMES",
    "INGRESS_NODE_LABEL",
    "MAX_OVERRIDE_BYTES",
    "MAX_OVERRIDE_DEPTH",
    "OWNED_VALUES",
    "AddonSpec",
    "AddonsSpec",
    "check_addons",
]

# The ingressNginx controller runs on the Nodes of pools labelled so (`NodePool.spec.labels`, value ""):
# a node-role label, which Cluster API copies to the Node with its own credentials.
INGRESS_NODE_LABEL = "node-role.kubernetes.io/ingress"
MAX_OVERRIDE_BYTES = 64 * 1024
MAX_OVERRIDE_DEPTH = 16


class AddonSpec(SpecModel):
    enabled: bool = Field(default=False, description="Install the add-on into the tenant.")
    values_override: dict[str, Any] = Field(
        default_factory=dict, description="Chart values deep-merged over tenantctl's (owned keys refused)."
    )


class AddonsSpec(SpecModel):
    """One field per add-on: an unknown name is refused with the closest valid one."""

    cert_manager: AddonSpec = Field(default_factory=AddonSpec, description="cert-manager (CRDs kept on uninstall).")
    ingress_nginx: AddonSpec = Field(
        default_factory=AddonSpec, description="ingress-nginx on pools labelled `node-role.kubernetes.io/ingress`."
    )
    vertical_pod_autoscaler: AddonSpec = Field(
        default_factory=AddonSpec, description="Vertical Pod Autoscaler (recommender, updater, admission)."
    )
    velero: AddonSpec = Field(default_factory=AddonSpec, description="Velero backups with CSI snapshots.")
    gpu_operator: AddonSpec = Field(
        default_factory=AddonSpec, description="NVIDIA GPU operator for kubevirt pools with `gpus`."
    )


# Wire name (camelCase, as the user writes it) of every add-on, in the order they render.
ADDON_NAMES: tuple[str, ...] = tuple(
    f.alias or n for n, f in AddonsSpec.model_fields.items()
)

# Dotted value paths tenantctl sets and depends on, per add-on; the reason is in the README section.
OWNED_VALUES: Mapping[str, tuple[str, ...]] = {
    "certManager": ("crds.enabled", "crds.keep"),
    "ingressNginx": ("controller.nodeSelector", "controller.kind"),
    "verticalPodAutoscaler": ("crds.enabled",),
    "velero": ("snapshotsEnabled",),
    "gpuOperator": ("driver.enabled", "toolkit.enabled"),
}


def _depths(value: Any, depth: int) -> Iterator[int]:
    """The depth of every key in a values document: a mapping key is one level, a list item one more."""
    if isinstance(value, Mapping):
        for sub in value.values():
            yield depth + 1
            yield from _depths(sub, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _depths(item, depth + 1)


def _owned_conflicts(override: Mapping[str, Any], owned: str) -> Iterator[str]:
    """Override paths that would change the owned path: the path itself, anything under it (a deep
    merge adds to it), or a parent given as a non-mapping (a merge replaces the whole subtree)."""
    node: Any = override
    parts = owned.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, Mapping) or part not in node:
            return
        node = node[part]
        here = ".".join(parts[: i + 1])
        if i == len(parts) - 1:
            yield here
        elif not isinstance(node, Mapping):
            yield here
            return


def check_addons(at: str, addons: AddonsSpec, problems: Problems) -> None:
    """Owned keys, size and depth of every valuesOverride, enabled or not (it may be enabled later)."""
    for field, name in zip(AddonsSpec.model_fields, ADDON_NAMES, strict=True):
        override = getattr(addons, field).values_override
        if not override:  # most add-ons of most tenants: nothing to measure or to conflict
            continue
        base = f"{at}.spec.addons.{name}.valuesOverride"
        size = len(json.dumps(override, separators=(",", ":"), default=str))
        if size > MAX_OVERRIDE_BYTES:
            problems.error(base, f"{size} bytes of values, over the {MAX_OVERRIDE_BYTES}-byte limit")
            continue
        deepest = max(_depths(override, 0), default=0)
        if deepest > MAX_OVERRIDE_DEPTH:
            problems.error(base, f"nested {deepest} levels deep, over the limit of {MAX_OVERRIDE_DEPTH}")
            continue
        for owned in OWNED_VALUES[name]:
            for path in _owned_conflicts(override, owned):
                problems.error(
                    f"{base}.{path}",
                    f"would change {owned!r}, which tenantctl sets for {name} (see docs/rendering.md, {name})",
                )
