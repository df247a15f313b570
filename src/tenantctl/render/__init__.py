"""Pure functions from a checked spec to Kubernetes objects (plain dicts). No I/O, deterministic.

`render_tenant` is the entry point: every management-cluster object of every cluster in the input,
in a stable order. `render_tenant_bootstrap` gives the objects applied *inside* a tenant through its
admin kubeconfig once its apiserver answers.
"""

from tenantctl.render.meta import INVENTORY_LABELS, MANAGED_BY, Names, cluster_labels
from tenantctl.render.tenant import render_cluster, render_tenant, render_tenant_bootstrap

__all__ = [
    "INVENTORY_LABELS",
    "MANAGED_BY",
    "Names",
    "cluster_labels",
    "render_cluster",
    "render_tenant",
    "render_tenant_bootstrap",
]
