"""Optional tenant add-ons (`TenantCluster.spec.addons`) as one table: chart, namespace, values, order.

Each enabled entry becomes a `TenantAddon`, so a HelmRelease `<cluster>-<add-on in kebab case>` built by
the same `render_helm_release` as cilium (same retry strategy, same kubeconfig), and its chart source
(`chart_sources.OPTIONAL_CHARTS`, overridable in `Platform.spec.charts`) is rendered while in use. The user's
`valuesOverride` deep-merges over the values here; the spec refuses overrides of the keys listed in
`spec.addons.OWNED_VALUES`, and a test holds every such key to be one these values set.

Order is data: `depends_on` names the releases each waits for; today only always-on ones (cilium,
metrics-server, snapshot-controller), so no dependency can name a release a cluster lacks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.render.addons import CILIUM, TenantAddon
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import INGRESS_NODE_LABEL
from tenantctl.render.plain import plain_copy
from tenantctl.render.standard_addons import METRICS_SERVER, SNAPSHOT_CONTROLLER
from tenantctl.spec import AddonSpec, AddonsSpec, ObservedState, TenantCluster

__all__ = [
    "OPTIONAL_ADDONS",
    "OptionalAddon",
    "deep_merge",
    "enabled_addons",
    "kebab",
    "optional_addons",
]


@dataclass(frozen=True)
class OptionalAddon:
    name: str  # the spec.addons key, camelCase
    namespace: str
    values: Mapping[str, Any]
    depends_on: tuple[str, ...]

    @property
    def release(self) -> str:
        return kebab(self.name)

    @property
    def chart(self) -> str:
        """The chart source key: the release's own name (`cert-manager`, `ingress-nginx`, ...)."""
        return self.release


def kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


OPTIONAL_ADDONS: tuple[OptionalAddon, ...] = (
    # The jetstack chart templates its CRDs (`crds.enabled`); Helm installs CRDs before everything else
    # of a release, so they precede the controllers within it; `keep` spares every Certificate and
    # Issuer when the release is uninstalled. No chart that serves only these CRDs is published.
    OptionalAddon("certManager", "cert-manager", {"crds": {"enabled": True, "keep": True}}, (CILIUM,)),
    OptionalAddon(
        "ingressNginx",
        "ingress-nginx",
        {"controller": {"kind": "DaemonSet", "nodeSelector": {INGRESS_NODE_LABEL: ""}}},
        (CILIUM,),
    ),
    # The recommender reads the metrics API: without metrics-server it recommends nothing.
    OptionalAddon(
        "verticalPodAutoscaler", "vertical-pod-autoscaler", {"crds": {"enabled": True}}, (CILIUM, METRICS_SERVER)
    ),
    # CSI snapshots through EnableCSI and the VolumeSnapshotClass labelled for velero (standard_addons).
    # velero chart 12.0.3: `snapshotsEnabled` (default true) only gates templates/volumesnapshotlocation.yaml,
    # whose default entry has `provider: ""`, which the API server refuses (provider is required): with
    # it on, the release fails to install. Off, no VolumeSnapshotLocation is rendered; CSI needs none.
    OptionalAddon(
        "velero",
        "velero",
        {"snapshotsEnabled": False, "configuration": {"features": "EnableCSI"}},
        (CILIUM, SNAPSHOT_CONTROLLER),
    ),
    # Talos is immutable: the driver and container toolkit come from the NVIDIA system extensions in the
    # Talos schematic, not from the operator's driver containers. ccManager and vgpuDeviceManager stay
    # off as Cozystack pins them (confidential-computing mode flip; crashloop without mdev parents).
    OptionalAddon(
        "gpuOperator",
        "gpu-operator",
        {
            "driver": {"enabled": False},
            "toolkit": {"enabled": False},
            "ccManager": {"enabled": False},
            "vgpuDeviceManager": {"enabled": False},
        },
        (CILIUM,),
    ),
)  # fmt: skip



def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`override` over `base`: mappings merge key by key, anything else replaces (lists included)."""
    out = plain_copy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = plain_copy(value)
    return out


# Wire name (as OPTIONAL_ADDONS names an add-on) -> the AddonsSpec attribute holding it.
_FIELD_OF: Mapping[str, str] = {info.alias or f: f for f, info in AddonsSpec.model_fields.items()}


def _spec_of(cluster: TenantCluster, name: str) -> AddonSpec:
    spec: AddonSpec = getattr(cluster.spec.addons, _FIELD_OF[name])
    return spec


def enabled_addons(cluster: TenantCluster) -> list[OptionalAddon]:
    return [a for a in OPTIONAL_ADDONS if _spec_of(cluster, a.name).enabled]


def _fixed(values: Mapping[str, Any]) -> Callable[[TenantCluster, ObservedState, ImagesSpec], Mapping[str, Any]]:
    return lambda _cluster, _observed, _images: values


def optional_addons(cluster: TenantCluster) -> tuple[TenantAddon, ...]:
    """The cluster's enabled add-ons, their values with the user's override merged in."""
    return tuple(
        TenantAddon(
            addon.release,
            addon.chart,
            addon.namespace,
            _fixed(deep_merge(addon.values, _spec_of(cluster, addon.name).values_override)),
            depends_on=addon.depends_on,
        )
        for addon in enabled_addons(cluster)
    )
