"""What deploys the operator: CRDs, ServiceAccount, least-privilege RBAC, a Deployment and its webhook.

The operator runs as one StatefulSet per shard (`--shards`), each with `--replicas` pods. A
StatefulSet, not a Deployment, because kopf peering is not a lease: it pauses an operator that sees
a live peer of *higher* priority and lets equal priorities run side by side. Pod ordinals are the
stable, distinct priorities that need (ordinal 0 active, the others standing by), and a Deployment's
pods have none. Each shard has its own ClusterKopfPeering, so the shards do not pause each other.

The ClusterRole grants only the verbs the operator uses on the kinds it renders, prunes or tears
down, plus the rules it hands to the tenant's CCM/CSI Roles (Kubernetes lets a subject grant only
what it holds). TalosConfigTemplate `delete` is not in it: each tenant gets a Role naming exactly
its own templates (`resourceNames`), which is the one delete the replace-on-immutable step needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard, peering_name
from tenantctl.operator.config.tuning import PEERING_ENV, SHARD_ENV, TUNABLES
from tenantctl.operator.install.image import DEFAULT_IMAGE, IMAGE_REPOSITORY
from tenantctl.operator.install.webhook import CERT_DIR, PORT, TLS_VOLUME, tls_volume, webhook_args, webhook_objects
from tenantctl.providers.platform import tenantctl_crds
from tenantctl.render import Names, render_cluster
from tenantctl.spec import API_VERSION, NodePool, TenantCluster, parse_tenant_documents
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
    "operator_rules",
    "tenant_rbac",
]

NAME = "tenantctl-operator"
METRICS_PORT = 9090
SHARD_LABEL = "tenantctl.io/shard"
SHARDS_LABEL = "tenantctl.io/shards"
"""On the operator's workloads and peerings: the layout they belong to, so another layout's can be selected."""
PEERING_GROUP, PEERING_VERSION = "kopf.dev", "v1"
_LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/managed-by": "tenantctl"}
_READ = ["get", "list", "watch"]
# Server-side apply of an absent object is authorised as `create`, of a present one as `patch`.
_OWN = ["get", "list", "watch", "create", "patch", "delete"]

Rule = dict[str, list[str]]

# (apiGroup, resources, verbs): what the reconcile and teardown phases call, nothing more.
_RULES: tuple[tuple[str, tuple[str, ...], list[str]], ...] = (
    ("tenantctl.io", ("tenantclusters", "nodepools"), ["get", "list", "watch", "patch", "update"]),
    ("tenantctl.io", ("tenantclusters/status", "nodepools/status"), ["get", "patch", "update"]),
    # The Platform every tenant is rendered with: read, never written.
    ("tenantctl.io", ("platforms",), _READ),
    # CRDs, read: Kamaji's TenantControlPlane schema (can trustd be published) and the schemas of what
    # Cluster API builds from a render (phases/derived.py judges the clones before anything is applied).
    ("apiextensions.k8s.io", ("customresourcedefinitions",), _READ),
    ("", ("namespaces",), _READ),
    ("", ("events",), ["create", "patch"]),
    ("events.k8s.io", ("events",), ["create", "patch"]),
    ("", ("secrets",), _OWN),
    ("", ("services",), _OWN),
    ("", ("configmaps", "serviceaccounts"), _OWN),
    ("apps", ("deployments",), _OWN),
    # A tenant's backup CronJob (render/backup.py) and restore Job (render/restore.py).
    ("batch", ("cronjobs", "jobs"), _OWN),
    ("rbac.authorization.k8s.io", ("roles", "rolebindings", "clusterroles", "clusterrolebindings"), _OWN),
    ("cert-manager.io", ("issuers", "certificates"), _OWN),
    ("cluster.x-k8s.io", ("clusters", "machinedeployments", "machinehealthchecks"), _OWN),
    ("controlplane.cluster.x-k8s.io", ("kamajicontrolplanes",), _OWN),
    # Only the trustd port is applied, on an object the provider creates: no create, no delete; list and
    # watch feed the operator's reads from a watch.
    ("kamaji.clastix.io", ("tenantcontrolplanes",), ["get", "list", "watch", "patch"]),
    ("infrastructure.cluster.x-k8s.io",
     ("proxmoxclusters", "proxmoxmachinetemplates", "kubevirtclusters", "kubevirtmachinetemplates"), _OWN),
    # The address pools of a Proxmox pool's further NICs (capmox claims from them; CAIP allocates).
    ("ipam.cluster.x-k8s.io", ("inclusterippools",), _OWN),
    ("bootstrap.cluster.x-k8s.io", ("talosconfigtemplates",), ["get", "list", "watch", "create", "patch"]),
    ("helm.toolkit.fluxcd.io", ("helmreleases",), _OWN),
    # The Platform's chart sources, shared by every tenant's releases: applied, never deleted by a tenant.
    ("source.toolkit.fluxcd.io", ("helmrepositories", "ocirepositories"), ["get", "list", "watch", "create", "patch"]),
    ("cdi.kubevirt.io", ("datavolumes",), ["list", "delete"]),
    # kopf peering: each replica writes its keep-alive into its shard's ClusterKopfPeering status.
    (PEERING_GROUP, ("clusterkopfpeerings",), ["get", "list", "watch", "patch"]),
)


_SAMPLES: tuple[dict[str, Any], ...] = (
    {
        "substrate": "kubevirt",
        "backup": {"s3": {"endpoint": "https://s3.example.com", "bucket": "backups", "credentialsSecretName": "s3"},
                   "encryption": {"keySecretName": "k"}},
    },
    {
        "substrate": "proxmox",
        "proxmox": {
            "credentialsSecretName": "capmox",
            "allowedNodes": ["pve"],
            "dnsServers": ["192.0.2.53"],
            "ipv4Config": {"addresses": ["192.0.2.10-192.0.2.20"], "prefix": 24, "gateway": "192.0.2.1"},
            "ccm": {"credentialsSecretName": "ccm"},
            "csi": {"credentialsSecretName": "csi", "storageClasses": [{"name": "s", "storage": "local"}]},
        },
    },
)


# An autoscaled pool of each substrate, so the cluster-autoscaler's Role is among the rendered ones.
_SAMPLE_POOL: dict[str, Any] = {
    "cluster": "p",
    "minReplicas": 0,
    "maxReplicas": 1,
    "resources": {"cpu": 1, "memory": "2Gi"},
    "proxmox": {"sourceNode": "pve", "templateID": 100},
}


def _delegated_rules() -> list[Rule]:
    """The rules the rendered Roles grant, from a render of each substrate (one source of truth)."""
    rules: list[Rule] = []
    meta = {"name": "p", "namespace": "p"}
    for spec in _SAMPLES:
        cluster_doc = {"apiVersion": API_VERSION, "kind": "TenantCluster", "metadata": meta, "spec": spec}
        pool_doc = {"apiVersion": API_VERSION, "kind": "NodePool", "metadata": meta, "spec": _SAMPLE_POOL}
        tenant = parse_tenant_documents([cluster_doc, pool_doc])
        cluster = tenant.clusters[0]
        for obj in render_cluster(cluster, tenant.pools_of(cluster), None):
            if obj["kind"] in ("Role", "ClusterRole"):
                # A rendered rule's resourceNames are the sample tenant's: the operator grants it for every
                # tenant, so it must hold the verbs on every name (RBAC refuses to grant what one lacks).
                rules += [{k: list(v) for k, v in r.items() if k != "resourceNames"} for r in obj.get("rules", [])]
    return rules


def _merge(rules: Iterable[Rule]) -> list[Rule]:
    """One rule per (apiGroups, resources, resourceNames), verbs unioned, in a stable order."""
    merged: dict[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], set[str]] = {}
    for rule in rules:
        key = (tuple(rule["apiGroups"]), tuple(rule["resources"]), tuple(rule.get("resourceNames", ())))
        merged.setdefault(key, set()).update(rule["verbs"])
    out: list[Rule] = []
    for (groups, resources, names), verbs in sorted(merged.items()):
        merged_rule: Rule = {"apiGroups": list(groups), "resources": list(resources), "verbs": sorted(verbs)}
        if names:
            merged_rule["resourceNames"] = list(names)
        out.append(merged_rule)
    return out


def operator_rules() -> list[Rule]:
    own = [{"apiGroups": [g], "resources": list(r), "verbs": list(v)} for g, r, v in _RULES]
    return _merge([*own, *_delegated_rules()])


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
            "http://0.0.0.0:8080/healthz",
            "--metrics-port",
            str(METRICS_PORT),
            "--log-format",
            "json",
            *webhook_args(),
        ],
        "env": env,
        "ports": [
            {"name": "health", "containerPort": 8080},
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
) -> list[dict[str, Any]]:
    """Everything `tenantctl install` prints, in apply order."""
    meta: Mapping[str, Any] = {"labels": dict(_LABELS)}
    objects: list[dict[str, Any]] = [*tenantctl_crds()]
    topology = topology or Topology()
    peering = _peering_objects(topology, meta)
    objects.append(peering[0])
    objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, **meta}})
    account = {"name": NAME, "namespace": namespace, **meta}
    objects.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": account})
    objects.append({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": NAME, **meta},
        "rules": operator_rules(),
    })
    objects.append({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": NAME, **meta},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
        "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}],
    })
    for cluster, pools in tenants:
        objects += tenant_rbac(cluster, pools, namespace)
    objects += peering[1:]
    objects += _metrics_objects(namespace, service_monitor, meta)
    objects += [_statefulset(namespace, image, topology, i) for i in range(topology.shards)]
    objects += webhook_objects(NAME, namespace, dict(_LABELS))
    return objects
