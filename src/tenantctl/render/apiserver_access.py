"""Who may reach the tenant's apiserver and what it records: the structured AuthenticationConfiguration
and the audit policy, as ConfigMaps in the tenant's namespace, mounted into Kamaji's apiserver container
with the flags that read them (`spec.controlPlane.apiServer.authentication` and `.audit`).

Kamaji's KamajiControlPlane takes extra flags and mounts for the apiserver container and extra volumes
and containers for its Pod (the Kamaji provider v0.19.0: `apiServer.extraArgs`/`extraVolumeMounts`,
`deployment.extraVolumes`/`extraContainers`); it merges them into the TenantControlPlane's Deployment.

- The authentication ConfigMap keeps its name and is mounted as a directory (no subPath), so a change
  reaches the running apiserver, which reloads the file (structured authentication reloads live); no Pod
  rolls for an issuer's new audience.
- The audit policy's ConfigMap is named by its content: the apiserver reads its policy once at start, so
  a changed policy must roll the apiserver Pods, and a changed name in the Pod template does exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import Names, content_hash, object_meta
from tenantctl.spec import TenantCluster
from tenantctl.spec.audit import AuditSpec, audit_rules
from tenantctl.spec.authentication import AuthenticationSpec, authn_api_version

__all__ = ["AUDIT_LOG", "AUDIT_POLICY_FILE", "AUTHN_FILE", "ApiServerAccess", "apiserver_access"]

_ROOT = "/etc/kubernetes/tenantctl"
AUTHN_DIR, AUTHN_FILE = f"{_ROOT}/authn", f"{_ROOT}/authn/config.yaml"
AUDIT_DIR, AUDIT_POLICY_FILE = f"{_ROOT}/audit", f"{_ROOT}/audit/policy.yaml"
AUDIT_LOG_DIR = "/var/log/kubernetes/audit"
AUDIT_LOG = f"{AUDIT_LOG_DIR}/audit.log"
# Volume names of our own: Kamaji reserves its (etc-kubernetes-pki, kine-*, konnectivity-*, ...).
_AUTHN_VOLUME, _AUDIT_VOLUME, _LOG_VOLUME = "tenantctl-authn", "tenantctl-audit-policy", "tenantctl-audit-log"
_SIDECAR_RESOURCES = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "200m", "memory": "64Mi"}}
# The apiserver writes its audit log 0600 as the user it runs as (root in Kamaji's Deployment): the sidecar
# reads it as that user, with no capability (no DAC override), on a read-only root, the log mounted read-only.
_SIDECAR_SECURITY = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "runAsUser": 0,
                     "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


@dataclass
class ApiServerAccess:
    """What the two blocks add: objects to apply, and the apiserver's flags, mounts, volumes and sidecars."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    mounts: list[dict[str, Any]] = field(default_factory=list)
    volumes: list[dict[str, Any]] = field(default_factory=list)
    containers: list[dict[str, Any]] = field(default_factory=list)


def _plain(value: Any) -> Any:
    """A model dump without the empty lists and Nones the API would not have written."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def authentication_configuration(authn: AuthenticationSpec, minor: str) -> dict[str, Any]:
    version = authn_api_version(minor)
    assert version is not None, minor  # refused by spec.authentication before a render
    doc: dict[str, Any] = {"apiVersion": f"apiserver.config.k8s.io/{version}", "kind": "AuthenticationConfiguration"}
    dumped: dict[str, Any] = _plain(authn.model_dump(by_alias=True))
    if authn.anonymous is not None:
        dumped["anonymous"] = {"enabled": authn.anonymous.enabled,
                               **({"conditions": dumped["anonymous"]["conditions"]}
                                  if authn.anonymous.conditions else {})}
    return doc | dumped


def audit_policy(audit: AuditSpec) -> dict[str, Any]:
    # RequestReceived duplicates every event's ResponseComplete; the apiserver's own examples omit it.
    return {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
            "rules": audit_rules(audit)}


def _config_map(names: Names, name: str, key: str, doc: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": object_meta(name, names.namespace, names.cluster),
            "data": {key: yaml.safe_dump(doc, sort_keys=False)}}


def _audit(names: Names, audit: AuditSpec, images: ImagesSpec, access: ApiServerAccess) -> None:
    policy = audit_policy(audit)
    name = f"{names.cluster}-audit-policy-{content_hash(policy)}"
    access.objects.append(_config_map(names, name, "policy.yaml", policy))
    access.volumes.append({"name": _AUDIT_VOLUME, "configMap": {"name": name}})
    access.mounts.append({"name": _AUDIT_VOLUME, "mountPath": AUDIT_DIR, "readOnly": True})
    access.args += [f"--audit-policy-file={AUDIT_POLICY_FILE}", "--audit-log-format=json"]
    if audit.shipping == "stdout":
        access.args.append("--audit-log-path=-")
        return
    access.args += [f"--audit-log-path={AUDIT_LOG}", f"--audit-log-maxsize={audit.max_size_mb}",
                    f"--audit-log-maxbackup={audit.max_backups}", f"--audit-log-maxage={audit.max_age_days}"]
    # The log and its rotated files, and room for one more being written.
    size = audit.max_size_mb * (audit.max_backups + 2)
    access.volumes.append({"name": _LOG_VOLUME, "emptyDir": {"sizeLimit": f"{size}Mi"}})
    access.mounts.append({"name": _LOG_VOLUME, "mountPath": AUDIT_LOG_DIR})
    access.containers.append({
        "name": "audit", "image": str(images.ref("audit-shipper")), "imagePullPolicy": "IfNotPresent",
        # -F follows the file across the apiserver's rotations; the events leave as this container's stream.
        "command": ["tail", "-n", "+1", "-F", AUDIT_LOG],
        "volumeMounts": [{"name": _LOG_VOLUME, "mountPath": AUDIT_LOG_DIR, "readOnly": True}],
        "resources": _SIDECAR_RESOURCES, "securityContext": _SIDECAR_SECURITY,
    })


def apiserver_access(cluster: TenantCluster, minor: str, images: ImagesSpec) -> ApiServerAccess:
    names = Names(cluster)
    api_server = cluster.spec.control_plane.api_server
    access = ApiServerAccess()
    if api_server.authentication is not None:
        config = authentication_configuration(api_server.authentication, minor)
        name = f"{names.cluster}-apiserver-authn"
        access.objects.append(_config_map(names, name, "config.yaml", config))
        access.volumes.append({"name": _AUTHN_VOLUME, "configMap": {"name": name}})
        access.mounts.append({"name": _AUTHN_VOLUME, "mountPath": AUTHN_DIR, "readOnly": True})
        access.args.append(f"--authentication-config={AUTHN_FILE}")
    if api_server.audit is not None:
        _audit(names, api_server.audit, images, access)
    return access
