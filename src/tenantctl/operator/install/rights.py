"""Every right the operator holds, with why: the tables `install` renders its RBAC from and
docs/security.md shows (`python -m tenantctl.operator.install.rights` prints them).

Reads are cluster-wide: the operator serves its reads from watches, one LIST and WATCH per kind across
the cluster (`kube/cache.py`). Writes are not: they sit in `TENANT_ROLE`, which `install` binds in each
namespace a platform admin opens to tenants (`--tenant-namespace`, `-f`, and on `--apply` every namespace
that holds a TenantCluster); the operator cannot bind it anywhere itself. It may bind the add-ons' shared
roles (`bind` by name) in those namespaces, and one of them cluster-wide, which an admission policy
holds it to (`admission_policy.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tenantctl.render.addon_roles import ADDON_ROLES, KCSI_VOLUMES_ROLE

__all__ = ["CLUSTER_RIGHTS", "TENANT_RIGHTS", "Right", "cluster_rules", "rights_table", "tenant_rules"]

_READ = ("get", "list", "watch")
_WRITE = ("create", "patch", "delete")
"""Server-side apply of an absent object is authorised as `create`, of a present one as `patch`."""


@dataclass(frozen=True)
class Right:
    group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    why: str
    names: tuple[str, ...] = ()
    """`resourceNames`: only these objects."""

    def rule(self) -> dict[str, list[str]]:
        rule = {"apiGroups": [self.group], "resources": list(self.resources), "verbs": list(self.verbs)}
        if self.names:
            rule["resourceNames"] = list(self.names)
        return rule


_TENANT_KINDS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("", ("secrets",), "Talos secrets, the capmox credentials copy, add-on kubeconfigs, backup keys"),
    ("", ("services", "configmaps", "serviceaccounts"), "the add-ons' Services, configuration and accounts"),
    ("apps", ("deployments",), "the add-on controllers (CCM, CSI, autoscaler)"),
    ("batch", ("cronjobs", "jobs"), "the backup CronJob and the restore Job"),
    ("rbac.authorization.k8s.io", ("roles", "rolebindings"),
     "the backup and restore Jobs' Roles (get of named Secrets) and the add-ons' bindings"),
    ("cert-manager.io", ("issuers", "certificates"), "the tenant's serving certificates"),
    ("cluster.x-k8s.io", ("clusters", "machinedeployments", "machinehealthchecks"), "the Cluster API objects"),
    ("controlplane.cluster.x-k8s.io", ("kamajicontrolplanes",), "the control plane Kamaji runs"),
    ("infrastructure.cluster.x-k8s.io",
     ("proxmoxclusters", "proxmoxmachinetemplates", "kubevirtclusters", "kubevirtmachinetemplates"),
     "the substrate's cluster and machine templates"),
    ("ipam.cluster.x-k8s.io", ("inclusterippools",), "the address pools of a Proxmox pool's further NICs"),
    ("helm.toolkit.fluxcd.io", ("helmreleases",), "the tenant's add-on charts"),
)

CLUSTER_RIGHTS: tuple[Right, ...] = (
    Right("tenantctl.io", ("tenantclusters", "nodepools"), (*_READ, "patch"),
          "kopf watches them and patches its finalizer, the shard label and annotations"),
    Right("tenantctl.io", ("tenantclusters/status", "nodepools/status"), ("get", "patch"),
          "the status each pass derives"),
    Right("tenantctl.io", ("platforms",), _READ, "the Platform every tenant is rendered with: read, never written"),
    Right("apiextensions.k8s.io", ("customresourcedefinitions",), _READ,
          "Kamaji's schema (trustd) and what Cluster API builds from a render, judged before applying"),
    Right("", ("namespaces",), _READ, "a namespace being deleted stops the tenant's pass"),
    Right("", ("events",), ("create", "patch"), "findings about a tenant or an orphan NodePool, in its namespace"),
    Right("events.k8s.io", ("events",), ("create", "patch"), "the same, through the events API kopf posts to"),
    *(Right(g, r, _READ, "read from watches, cluster-wide (one LIST and WATCH per kind)") for g, r, _ in _TENANT_KINDS),
    Right("kamaji.clastix.io", ("tenantcontrolplanes",), _READ, "the endpoint and version Kamaji reports"),
    Right("bootstrap.cluster.x-k8s.io", ("talosconfigtemplates",), _READ, "the live templates a pool runs"),
    Right("cdi.kubevirt.io", ("datavolumes",), ("list",), "a KubeVirt tenant's volumes, found at teardown"),
    Right("rbac.authorization.k8s.io", ("clusterroles",), ("bind",),
          "binds the add-ons' shared roles to their accounts without holding their rules",
          names=tuple(ADDON_ROLES)),
    Right("rbac.authorization.k8s.io", ("clusterrolebindings",), (*_READ, *_WRITE),
          f"the KubeVirt CSI controller's PersistentVolume read; the policy allows no role but {KCSI_VOLUMES_ROLE}, "
          "and the deletion of a tenant's own of an earlier release"),
    Right("rbac.authorization.k8s.io", ("clusterroles",), (*_READ, "delete"),
          "pruning a tenant's own ClusterRole of an earlier release (the policy allows no other); never created"),
    Right("source.toolkit.fluxcd.io", ("helmrepositories", "ocirepositories"), (*_READ, "create", "patch"),
          "the Platform's chart sources in its charts namespace: applied, never deleted"),
    Right("kopf.dev", ("clusterkopfpeerings",), ("get", "list", "watch", "patch"),
          "each replica's keep-alive in its shard's peering"),
)
"""Held cluster-wide (ClusterRole `tenantctl-operator`)."""

TENANT_RIGHTS: tuple[Right, ...] = (
    *(Right(g, r, _WRITE, why) for g, r, why in _TENANT_KINDS),
    Right("kamaji.clastix.io", ("tenantcontrolplanes",), ("patch",),
          "only the trustd port, on the object Kamaji's provider creates"),
    Right("bootstrap.cluster.x-k8s.io", ("talosconfigtemplates",), ("create", "patch"),
          "the pools' Talos configuration (delete only of a tenant's own, by name: `install -f`)"),
    Right("cdi.kubevirt.io", ("datavolumes",), ("delete",), "a KubeVirt tenant's volumes, freed at teardown"),
)
"""Held only in a namespace `install` opened to tenants (ClusterRole `tenantctl-operator-tenant`)."""


def _merged(rights: tuple[Right, ...]) -> list[dict[str, list[str]]]:
    return [r.rule() for r in rights]


def cluster_rules() -> list[dict[str, list[str]]]:
    return _merged(CLUSTER_RIGHTS)


def tenant_rules() -> list[dict[str, list[str]]]:
    return _merged(TENANT_RIGHTS)


def rights_table() -> str:
    """Both tables as docs/security.md shows them."""
    out = []
    for title, rights in (("cluster-wide (`tenantctl-operator`)", CLUSTER_RIGHTS),
                          ("in a namespace opened to tenants (`tenantctl-operator-tenant`)", TENANT_RIGHTS)):
        out += [f"**{title}**", "", "| API group | resources | verbs | why |", "|---|---|---|---|"]
        for r in rights:
            names = f" (only {', '.join(f'`{n}`' for n in r.names)})" if r.names else ""
            out.append(f"| `{r.group or 'core'}` | {', '.join(r.resources)} | {', '.join(r.verbs)}{names} | {r.why} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(rights_table(), end="")
