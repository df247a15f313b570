"""What deploys the operator: CRDs, ServiceAccount, least-privilege RBAC, a Deployment and its webhook.

The operator runs as one StatefulSet per shard (`--shards`), each with `--replicas` pods. A
StatefulSet, not a Deployment, because kopf peering is not a lease: it pauses an operator that sees
a live peer of *higher* priority and lets equal priorities run side by side. Pod ordinals are the
stable, distinct priorities that need (ordinal 0 active, the others standing by), and a Deployment's
pods have none. Each shard has its own ClusterKopfPeering, so the shards do not pause each other.

Its rights are two tables (`rights.py`, each right with why): reads cluster-wide, writes in a ClusterRole
the operator binds in a namespace only once a TenantCluster is there, and admission policies that refuse
its writes anywhere else (`admission_policy.py`). The add-ons' management rights are shared ClusterRoles
rendered here once (`render/addon_roles.py`), which the operator may bind but does not hold.
TalosConfigTemplate `delete` is in neither: each tenant gets a Role naming exactly its own templates
(`resourceNames`), which is the one delete the replace-on-immutable step needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.config.identity import OPERATOR, OPERATOR_LABELS, TENANT_ROLE, Subject
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard, peering_name
from tenantctl.operator.config.tuning import PEERING_ENV, SHARD_ENV, TUNABLES
from tenantctl.operator.install.admission_policy import admission_policies
from tenantctl.operator.install.image import DEFAULT_IMAGE, IMAGE_REPOSITORY
from tenantctl.operator.install.rights import cluster_rules, tenant_rules
from tenantctl.operator.install.webhook import CERT_DIR, PORT, TLS_VOLUME, tls_volume, webhook_args, webhook_objects
from tenantctl.operator.phases.rights import rights_binding
from tenantctl.providers.platform import tenantctl_crds
from tenantctl.render import Names
from tenantctl.render.addon_roles import addon_cluster_roles
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.durations import format_seconds

__all__ = [
    "DEFAULT_IMAGE",
    "IMAGE_REPOSITORY",
    "METRICS_PORT",
    "NAME",
    "PEERING_GROUP",
    "PEERING_VERSION",
    "SHARDS_LABEL",
    "Topology",
    "install_objects",
    "tenant_rbac",
]

NAME = OPERATOR
METRICS_PORT = 9090
SHARD_LABEL = "tenantctl.io/shard"
SHARDS_LABEL = "tenantctl.io/shards"
"""On the operator's workloads and peerings: the layout they belong to, so another layout's can be selected."""
PEERING_GROUP, PEERING_VERSION = "kopf.dev", "v1"
_LABELS = OPERATOR_LABELS
_RBAC = "rbac.authorization.k8s.io"
_RESTRICTED = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "audit", "warn")}
"""Every Pod of the operator's namespace passes `restricted`; the label makes the API server hold it to that."""
HEALTH_PORT = 8080


def tenant_rbac(cluster: TenantCluster, pools: Sequence[NodePool], namespace: str) -> list[dict[str, Any]]:
    """The Role that lets the operator delete exactly this tenant's TalosConfigTemplates, and its binding."""
    names = Names(cluster)
    role = f"{NAME}-tct-{names.cluster}"
    templates = sorted(names.talos_config_template(p) for p in pools)
    meta = {"name": role, "namespace": names.namespace, "labels": dict(_LABELS)}
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta,
            "rules": [
                {
                    "apiGroups": ["bootstrap.cluster.x-k8s.io"],
                    "resources": ["talosconfigtemplates"],
                    "resourceNames": templates,
                    "verbs": ["delete"],
                }
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": dict(meta),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}],
        },
    ]


@dataclass(frozen=True)
class Topology:
    """How many shards the tenants are split into, and how many replicas stand for each shard."""

    shards: int = 1
    replicas: int = 1

    def __post_init__(self) -> None:
        if self.shards < 1 or self.replicas < 1:
            raise ValueError(f"shards and replicas must be at least 1, not {self.shards} and {self.replicas}")

    def workload(self, index: int) -> str:
        return NAME if self.shards == 1 else f"{NAME}-shard-{index}"


def _bounds_env() -> list[dict[str, Any]]:
    """Every tunable bound as an environment variable, at its default, for an admin to edit in place."""
    defaults = OperatorSettings()
    return [
        {"name": t.env, "value": format_seconds(round(getattr(defaults, t.field) * 1_000_000_000))}
        for t in TUNABLES
    ]


def _statefulset(namespace: str, image: str, topology: Topology, index: int) -> dict[str, Any]:
    name = topology.workload(index)
    selected = {"app.kubernetes.io/name": NAME, SHARD_LABEL: str(index)}
    labels = {**_LABELS, SHARD_LABEL: str(index)}
    env: list[dict[str, Any]] = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": SHARD_ENV, "value": f"{index}/{topology.shards}"},
        {"name": PEERING_ENV, "value": peering_name(Shard(index, topology.shards))},
        *_bounds_env(),
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace, "labels": {**labels, SHARDS_LABEL: str(topology.shards)}},
        "spec": {
            "replicas": topology.replicas,
            "serviceName": f"{NAME}-metrics",
            # Standbys start with the active one; peering, not start order, decides who works.
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": selected},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": NAME,
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [_operator_container(image, env)],
                    "volumes": [
                        {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}},
                        tls_volume(NAME),
                    ],
                },
            },
        },
    }


def _operator_container(image: str, env: list[dict[str, Any]]) -> dict[str, Any]:
    """The operator's container: restricted (no root, no escalation, read-only root), probes and ports."""
    return {
        "name": "operator",
        "image": image,
        "args": [
            "operator",
            "--liveness",
            f"http://0.0.0.0:{HEALTH_PORT}/healthz",
            "--metrics-port",
            str(METRICS_PORT),
            "--log-format",
            "json",
            *webhook_args(),
        ],
        "env": env,
        "ports": [
            {"name": "health", "containerPort": HEALTH_PORT},
            {"name": "metrics", "containerPort": METRICS_PORT},
            {"name": "webhook", "containerPort": PORT},
        ],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "health"}, "periodSeconds": 30},
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"memory": "512Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsUser": 65532,
            "capabilities": {"drop": ["ALL"]},
        },
        # ssl loads a tenant's client certificate only from a file: a memory-backed
        # /tmp holds it for the moment of loading on the read-only root filesystem.
        "volumeMounts": [
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": TLS_VOLUME, "mountPath": CERT_DIR, "readOnly": True},
        ],
    }


def _peering_objects(topology: Topology, meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """kopf's ClusterKopfPeering CRD (kopf does not install it) and one peering object per shard."""
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"clusterkopfpeerings.{PEERING_GROUP}", **meta},
        "spec": {
            "scope": "Cluster",
            "group": PEERING_GROUP,
            "names": {"kind": "ClusterKopfPeering", "plural": "clusterkopfpeerings", "singular": "clusterkopfpeering"},
            "versions": [{
                "name": PEERING_VERSION,
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                }}},
            }],
        },
    }
    peerings = [
        {
            "apiVersion": f"{PEERING_GROUP}/{PEERING_VERSION}",
            "kind": "ClusterKopfPeering",
            "metadata": {"name": peering_name(Shard(i, topology.shards)),
                         "labels": {**meta["labels"], SHARDS_LABEL: str(topology.shards)}},
        }
        for i in range(topology.shards)
    ]
    return [crd, *peerings]


def _metrics_objects(namespace: str, service_monitor: bool, meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Service every shard's `/metrics` sits behind and, when asked, its Prometheus Operator ServiceMonitor."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"{NAME}-metrics", "namespace": namespace, **meta},
        "spec": {
            "selector": {"app.kubernetes.io/name": NAME},
            "ports": [{"name": "metrics", "port": METRICS_PORT, "targetPort": "metrics", "protocol": "TCP"}],
        },
    }
    if not service_monitor:
        return [service]
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": NAME, "namespace": namespace, **meta},
        "spec": {
            "selector": {"matchLabels": dict(_LABELS)},
            "namespaceSelector": {"matchNames": [namespace]},
            "endpoints": [{"port": "metrics", "path": "/metrics", "interval": "30s"}],
        },
    }
    return [service, monitor]


def install_objects(
    namespace: str = "tenantctl-system",
    image: str = DEFAULT_IMAGE,
    tenants: Iterable[tuple[TenantCluster, Sequence[NodePool]]] = (),
    topology: Topology | None = None,
    service_monitor: bool = False,
    tenant_namespaces: Iterable[str] = (),
    metrics_namespace: str = "monitoring",
) -> list[dict[str, Any]]:
    """Everything `tenantctl install` prints, in apply order. The namespaces of `tenants` and
    `tenant_namespaces` are opened to the operator (its tenant role bound there)."""
    meta: Mapping[str, Any] = {"labels": dict(_LABELS)}
    objects: list[dict[str, Any]] = [*tenantctl_crds()]
    topology = topology or Topology()
    peering = _peering_objects(topology, meta)
    objects.append(peering[0])
    objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": namespace, "labels": {**_LABELS, **_RESTRICTED}}})
    account = {"name": NAME, "namespace": namespace, **meta}
    objects.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": account})
    objects += _operator_rbac(namespace, meta)
    objects += addon_cluster_roles(dict(_LABELS))
    objects += admission_policies(namespace, dict(_LABELS))
    tenants = list(tenants)
    opened = sorted({c.metadata.namespace for c, _ in tenants} | set(tenant_namespaces))
    objects += [rights_binding(ns, Subject("ServiceAccount", NAME, namespace)) for ns in opened]
    for cluster, pools in tenants:
        objects += tenant_rbac(cluster, pools, namespace)
    objects += peering[1:]
    objects += _metrics_objects(namespace, service_monitor, meta)
    objects += [_statefulset(namespace, image, topology, i) for i in range(topology.shards)]
    objects += webhook_objects(NAME, namespace, dict(_LABELS))
    objects.append(_network_policy(namespace, metrics_namespace, meta))
    return objects


def _operator_rbac(namespace: str, meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Its cluster-wide ClusterRole and binding, and the tenant role it binds per namespace itself."""
    return [
        {"apiVersion": f"{_RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": NAME, **meta},
         "rules": cluster_rules()},
        {
            "apiVersion": f"{_RBAC}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": NAME, **meta},
            "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": NAME},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}],
        },
        # Bound per namespace, below and by `--apply` (every namespace that holds a TenantCluster).
        {"apiVersion": f"{_RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": TENANT_ROLE, **meta},
         "rules": tenant_rules()},
    ]


def _network_policy(namespace: str, metrics_namespace: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """Who reaches the operator's Pods: the webhook port from anywhere (the API server calls it, and its
    address is no Pod a policy can select), `/metrics` only from the monitoring namespace, the health port
    (kubelet's probe) from anywhere; nothing else, and no egress rule (it dials the management API and every
    tenant's). Enforced where the network plugin enforces NetworkPolicy."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": NAME, "namespace": namespace, **meta},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": NAME}},
            "policyTypes": ["Ingress"],
            "ingress": [
                {"ports": [{"protocol": "TCP", "port": PORT}, {"protocol": "TCP", "port": HEALTH_PORT}]},
                {"ports": [{"protocol": "TCP", "port": METRICS_PORT}],
                 "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": metrics_namespace}}}]},
            ],
        },
    }
