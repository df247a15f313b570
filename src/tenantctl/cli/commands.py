"""The top-level commands: the module that registers each and the summary `tenantctl --help` lists.

Data, so the root help and the choice of the module to import need no command module imported: typer
evaluates every signature of every command it is given, most of a cold `--help` beyond typer itself.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["COMMANDS", "summary"]

COMMANDS: Mapping[str, tuple[str, str]] = {
    "render": ("tenant", "Render a tenant's management-cluster objects."),
    "validate": ("tenant", "Check, render and judge a tenant's objects."),
    "crds": ("tenant", "Print tenantctl's CRDs; pull the upstream ones."),
    "audit": ("tenant", "Prove no credential reaches a tenant."),
    "images": ("tenant", "List every image and chart to mirror."),
    "operator": ("operator", "Run the operator against the management cluster."),
    "install": ("operator", "Print or apply the operator's install."),
    "kubeconfig": ("operator", "Print a tenant's admin kubeconfig."),
    "get": ("daytwo", "List TenantClusters or NodePools and their state."),
    "plan": ("daytwo", "What the operator would change, before it does."),
    "describe": ("daytwo", "A tenant as a tree, down to its Nodes."),
    "backup": ("backup", "Back a tenant's control plane up; list, verify, restore."),
    "providers": ("providers", "Cluster API providers through cluster-api-operator."),
    "vendor": ("providers", "Pin, download and drift-check provider components."),
    "secret": ("secret", "Print a tenant's credentials Secret."),
    "doctor": ("doctor", "Preflight checks of the infrastructure a tenant needs."),
    "e2e": ("e2e", "End-to-end runs on a live cluster and Proxmox."),
}
"""name → (module under tenantctl.cli, summary), in the order `--help` lists them."""


def summary(name: str) -> str:
    return COMMANDS[name][1]
