"""A tenant's scheduled backup in the management cluster: a CronJob running `tenantctl backup run` with
tenantctl's own image, and exactly the privilege that needs.

Its ServiceAccount may `get`, by name and nothing else: the tenant's TenantCluster and TenantControlPlane
(which driver holds its data), the tenant's apiserver Deployment (its `--etcd-servers`: the endpoints
that hold this tenant's data, overrides included), the datastore certificate and config Kamaji issued
the tenant (its own etcd user or database login: it cannot read another tenant), the Kamaji PKI Secrets
the tenant needs to come back (`<tcp>-ca`, `-sa-certificate`, `-front-proxy-ca-certificate`), the S3
credentials and the encryption key. Not the DataStore: it may hold the datastore's root key inline.
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import Names, kamaji_ca, object_meta
from tenantctl.render.plain import plain_copy
from tenantctl.spec import TenantCluster
from tenantctl.spec.backup import BackupSpec

__all__ = ["BACKUP_PKI_SUFFIXES", "backup_name", "datastore_certificate", "job_account", "job_pod", "pki_secret",
           "render_backup", "secrets_read"]

_RBAC_API = "rbac.authorization.k8s.io/v1"
# Kamaji 26.3.6-edge internal/resources: the Secrets whose keys give a tenant its identity back (the CA its
# kubeconfigs and kubelets trust, the service-account signing key, the front-proxy CA). Leaf certificates
# are issued again from these.
BACKUP_PKI_SUFFIXES = ("ca", "sa-certificate", "front-proxy-ca-certificate")
_WORKDIR = "/tmp/tenantctl"
"""Inside the Job's container, not on any machine: an emptyDir mounted there, the one writable path under
its read-only root filesystem."""
_POD_SECURITY: dict[str, Any] = {
    "runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"},
}
_CONTAINER_SECURITY: dict[str, Any] = {
    "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
}
# A tenant of 10,000 objects is tens of MiB of keys, held once in memory and once sealed.
_RESOURCES: dict[str, Any] = {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}


def backup_name(cluster: str) -> str:
    return f"{cluster}-backup"


def datastore_certificate(control_plane: str) -> str:
    """The Secret holding the tenant's etcd client certificate (Kamaji: `<tcp>-datastore-certificate`)."""
    return f"{control_plane}-datastore-certificate"


def pki_secret(control_plane: str, suffix: str) -> str:
    """The name Kamaji gives a PKI Secret of the tenant (`AddTenantPrefix`)."""
    return kamaji_ca(control_plane) if suffix == "ca" else f"{control_plane}-{suffix}"


def secrets_read(names: Names, backup: BackupSpec) -> list[str]:
    """The Secrets a backup or restore Job reads: the tenant's datastore login, its PKI, the bucket's and the key."""
    tcp = names.control_plane
    pki = [pki_secret(tcp, s) for s in BACKUP_PKI_SUFFIXES]
    return sorted({datastore_certificate(tcp), f"{tcp}-datastore-config", *pki,
                   backup.s3.credentials_secret_name, backup.encryption.key_secret_name})


def job_account(names: Names, name: str, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A Job's ServiceAccount, its Role of exactly `rules`, and the binding between them, all named `name`."""
    ns = names.namespace
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": object_meta(name, ns, names.cluster)},
        {"apiVersion": _RBAC_API, "kind": "Role", "metadata": object_meta(name, ns, names.cluster), "rules": rules},
        {
            "apiVersion": _RBAC_API, "kind": "RoleBinding", "metadata": object_meta(name, ns, names.cluster),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
        },
    ]


def _rbac(cluster: TenantCluster, backup: BackupSpec) -> list[dict[str, Any]]:
    names = Names(cluster)
    return job_account(names, backup_name(names.cluster), [
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": secrets_read(names, backup), "verbs": ["get"]},
        {"apiGroups": ["tenantctl.io"], "resources": ["tenantclusters"], "resourceNames": [names.cluster],
         "verbs": ["get"]},
        {"apiGroups": ["kamaji.clastix.io"], "resources": ["tenantcontrolplanes"],
         "resourceNames": [names.control_plane], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": [names.control_plane],
         "verbs": ["get"]},
    ])


def job_pod(name: str, args: list[str], images: ImagesSpec) -> dict[str, Any]:
    """The Pod of a backup or restore Job: tenantctl's image as a non-root user with a read-only root,
    its ServiceAccount's token (it talks to the management API), the certificate files in memory only."""
    container = {
        "name": "tenantctl",
        "image": str(images.ref("tenantctl")),
        "imagePullPolicy": "IfNotPresent",
        "args": [*args, "--workdir", _WORKDIR],
        "volumeMounts": [{"name": "work", "mountPath": _WORKDIR}],
        "resources": plain_copy(_RESOURCES),
        "securityContext": plain_copy(_CONTAINER_SECURITY),
    }
    return {
        "metadata": {"labels": {"app.kubernetes.io/name": name}},
        "spec": {
            "serviceAccountName": name,
            "automountServiceAccountToken": True,
            "enableServiceLinks": False,
            "restartPolicy": "Never",
            "securityContext": plain_copy(_POD_SECURITY),
            "containers": [container],
            "volumes": [{"name": "work", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}}],
        },
    }


def _cron_job(cluster: TenantCluster, backup: BackupSpec, images: ImagesSpec) -> dict[str, Any]:
    names = Names(cluster)
    name = backup_name(names.cluster)
    args = ["backup", "run", "--namespace", names.namespace, names.cluster]
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": object_meta(name, names.namespace, names.cluster),
        "spec": {
            "schedule": backup.schedule,
            "timeZone": "Etc/UTC",
            "suspend": backup.suspend,
            # Two exports of one tenant at once would only race each other's prune.
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 3600,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "jobTemplate": {
                "spec": {"backoffLimit": 2, "activeDeadlineSeconds": 3600, "template": job_pod(name, args, images)},
            },
        },
    }


def render_backup(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    """The backup's objects, or none when the tenant asks for no backup."""
    backup = cluster.spec.backup
    if backup is None:
        return []
    return [*_rbac(cluster, backup), _cron_job(cluster, backup, images)]
