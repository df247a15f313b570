"""Add-ons every tenant gets besides its network and storage: metrics and volume snapshots.

- `metrics-server` (after cilium): `kubectl top` and CPU/memory HorizontalPodAutoscalers read the
  metrics API it serves.
- `snapshot-crds` then `snapshot-controller`, both from the Piraeus `snapshot-controller` chart (its
  `installCRDs` switch renders the external-snapshotter CRDs as ordinary objects): the first release
  carries only the CRDs, so the controller and a VolumeSnapshotClass apply once their kinds exist, and
  an uninstall of the controller never takes the CRDs with it. The CRDs also carry
  `helm.sh/resource-policy: keep` (a post-render patch), as Cozystack stamps on its `vsnap-crd`
  package: deleting them would delete every VolumeSnapshotContent, the only reference to a snapshot
  held on the storage backend.
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.addons import CILIUM, TenantAddon
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.substrates import Substrate

__all__ = [
    "METRICS_SERVER",
    "SNAPSHOT_CLASS",
    "SNAPSHOT_CONTROLLER",
    "SNAPSHOT_CRDS",
    "STANDARD_ADDON_IMAGES",
    "VELERO_SNAPSHOT_CLASS_LABEL",
    "metrics_server_values",
    "snapshot_controller_values",
    "standard_addons",
]

METRICS_SERVER, SNAPSHOT_CRDS, SNAPSHOT_CONTROLLER = "metrics-server", "snapshot-crds", "snapshot-controller"
SNAPSHOT_CLASS = "tenantctl-snapshots"
# Catalogue images these releases' values set (listed by `tenantctl images`).
STANDARD_ADDON_IMAGES = ("metrics-server", "snapshot-controller")
# Velero's CSI support picks the VolumeSnapshotClass of a driver by this label.
VELERO_SNAPSHOT_CLASS_LABEL = "velero.io/csi-volumesnapshot-class"
_SNAPSHOT_NAMESPACE = "snapshot-controller"
_KEEP_CRDS: dict[str, Any] = {
    "target": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
    "patch": (
        "apiVersion: apiextensions.k8s.io/v1\n"
        "kind: CustomResourceDefinition\n"
        "metadata:\n"
        "  name: any\n"
        "  annotations:\n"
        "    helm.sh/resource-policy: keep\n"
    ),
}


def metrics_server_values(images: ImagesSpec) -> dict[str, Any]:
    """Talos kubelets serve a self-signed certificate (no serving-certificate approver runs in the tenant),
    so metrics-server skips verifying it, as Cozystack's tenant package does; it still authenticates to
    the kubelet with its ServiceAccount token."""
    ref = images.ref("metrics-server")
    return {
        "image": {"repository": ref.repository, "tag": ref.tag_and_digest},
        "defaultArgs": [
            "--cert-dir=/tmp",
            "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
            "--kubelet-use-node-status-port",
            "--metric-resolution=15s",
            "--kubelet-insecure-tls",
        ],
        "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}, "limits": {"memory": "500Mi"}},
    }


def snapshot_controller_values(snapshot_driver: str | None, images: ImagesSpec) -> dict[str, Any]:
    """The controller, and a VolumeSnapshotClass where the substrate's CSI driver takes snapshots."""
    ref = images.ref("snapshot-controller")
    classes: list[dict[str, Any]] = []
    if snapshot_driver is not None:
        classes.append(
            {
                "name": SNAPSHOT_CLASS,
                "driver": snapshot_driver,
                "deletionPolicy": "Delete",
                "annotations": {"snapshot.storage.kubernetes.io/is-default-class": "true"},
                "labels": {VELERO_SNAPSHOT_CLASS_LABEL: "true"},
            }
        )
    return {
        "installCRDs": False,
        "controller": {"image": {"repository": ref.repository, "tag": ref.tag_and_digest}},
        "volumeSnapshotClasses": classes,
    }


def standard_addons(substrate: Substrate) -> tuple[TenantAddon, ...]:
    """metrics-server, then the snapshot CRDs and controller; rendered by `render_addons` like cilium."""
    crds_only = {"installCRDs": True, "controller": {"enabled": False}, "webhook": {"enabled": False}}
    driver = substrate.snapshot_driver
    return (
        TenantAddon(
            METRICS_SERVER, "metrics-server", "kube-system",
            lambda _cluster, _observed, images: metrics_server_values(images),
            depends_on=(CILIUM,),
        ),
        TenantAddon(
            SNAPSHOT_CRDS, "snapshot-controller", _SNAPSHOT_NAMESPACE,
            lambda _cluster, _observed, _images: crds_only,
            post_renderers=({"kustomize": {"patches": [_KEEP_CRDS]}},),
        ),
        TenantAddon(
            SNAPSHOT_CONTROLLER, "snapshot-controller", _SNAPSHOT_NAMESPACE,
            lambda _cluster, _observed, images: snapshot_controller_values(driver, images),
            depends_on=(CILIUM, SNAPSHOT_CRDS),
        ),
    )  # fmt: skip
