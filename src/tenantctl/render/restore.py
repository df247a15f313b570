"""A tenant that starts from a backup (`spec.restore`): the restore Job, its privilege, and what the
operator holds back until the restore has finished.

The restore runs in phases the operator records in `status.restore.phase`:

1. `Importing`: the KamajiControlPlane at zero replicas (Kamaji still sets up the datastore user, its
   certificate and the PKI), and the restore Job (`tenantctl backup restore`), which with `mode:
   replace` puts the source's PKI over Kamaji's, then imports the keys into the empty prefix;
2. `Scrubbing`: the control plane at its replicas; the operator deletes the restored Nodes and
   bootstrap tokens and sets every PersistentVolume to Retain through the tenant's API;
3. `Done`: everything as the spec says.

Until `Done`, the management-cluster Deployments (CSI controller, cloud-controller-manager,
autoscaler) and the tenant's add-on HelmReleases are not rendered: a CSI controller that met a restored
PersistentVolume with `Delete` before the scrub could delete a volume another tenant still uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from tenantctl.render.backup import BACKUP_PKI_SUFFIXES, job_account, job_pod, pki_secret, secrets_read
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import Names, object_meta
from tenantctl.spec import TenantCluster

__all__ = ["HELD_KINDS", "RestorePhase", "hold_for_restore", "restore_name"]

# What acts on the tenant's volumes, nodes or machines from outside before the scrub could.
HELD_KINDS = frozenset({"Deployment", "HelmRelease"})


class RestorePhase(StrEnum):
    IMPORTING = "Importing"
    SCRUBBING = "Scrubbing"
    DONE = "Done"
    FAILED = "Failed"


def restore_name(cluster: str) -> str:
    return f"{cluster}-restore"


def _objects(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    names = Names(cluster)
    restore, backup = cluster.spec.restore, cluster.spec.backup
    assert restore is not None and backup is not None
    name, ns, tcp = restore_name(names.cluster), names.namespace, names.control_plane
    pki = [pki_secret(tcp, s) for s in BACKUP_PKI_SUFFIXES]
    rules: list[dict[str, Any]] = [
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": secrets_read(names, backup), "verbs": ["get"]},
    ]
    if restore.mode == "replace":
        rules.append({"apiGroups": [""], "resources": ["secrets"], "resourceNames": pki, "verbs": ["patch"]})
    clusters = [names.cluster]
    if (restore.from_.namespace or ns) == ns:
        clusters.append(restore.from_.name)  # the replace refusal, where the Role can reach the source
    rules += [
        {"apiGroups": ["tenantctl.io"], "resources": ["tenantclusters"], "resourceNames": sorted(clusters),
         "verbs": ["get"]},
        {"apiGroups": ["kamaji.clastix.io"], "resources": ["tenantcontrolplanes"], "resourceNames": [tcp],
         "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": [tcp], "verbs": ["get"]},
    ]
    args = ["backup", "restore", "--namespace", ns, names.cluster]
    return [
        *job_account(names, name, rules),
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": object_meta(name, ns, names.cluster),
            # Retried with backoff while Kamaji has not set up the datastore yet (the command also waits).
            "spec": {"backoffLimit": 6, "activeDeadlineSeconds": 3600, "template": job_pod(name, args, images)},
        },
    ]


def hold_for_restore(cluster: TenantCluster, objects: Sequence[dict[str, Any]], phase: RestorePhase | None,
                     images: ImagesSpec) -> list[dict[str, Any]]:
    """The render as the restore phase allows it (the module says what each phase holds)."""
    if cluster.spec.restore is None or phase is RestorePhase.DONE:
        return list(objects)
    held = []
    for obj in objects:
        if obj["kind"] in HELD_KINDS:
            continue
        if obj["kind"] == "KamajiControlPlane" and phase in (None, RestorePhase.IMPORTING, RestorePhase.FAILED):
            obj = {**obj, "spec": {**obj["spec"], "replicas": 0}}
        held.append(obj)
    return [*held, *_objects(cluster, images)]
