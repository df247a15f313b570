"""A pool's Node labels and taints, and which path carries each one onto the Node.

Talos writes `machine.nodeLabels` and `machine.nodeTaints` with the worker's own kubelet identity
(v1.13.6 `internal/app/machined/pkg/controllers/k8s/node_apply.go`). Under the NodeRestriction
admission plugin a kubelet may set neither `node-role.kubernetes.io/*` nor
`node-restriction.kubernetes.io/*` on its Node, and may change its taints only when it creates the
Node. Kamaji's default admission list leaves NodeRestriction off, but a platform that turns it on (as
hardening guides require) must not silently lose every pool's roles and taints, so each one takes the
path that works either way:
- CAPI-synced labels go on the MachineDeployment template: CAPI v1.10 copies them Machine -> Node
  with its own credentials, in place (template labels do not roll workers);
- every other label goes to Talos `machine.nodeLabels`;
- taints go to the kubelet's `registerWithTaints` (`machine.kubelet.extraConfig`), set in the
  kubelet's own Node create, the one taint write NodeRestriction allows.
"""

from __future__ import annotations

from tenantctl.render.meta import GPU_NODE_LABEL
from tenantctl.spec import NodePool
from tenantctl.spec.labels import is_capi_synced

__all__ = ["capi_synced_labels", "kubelet_labels", "node_labels", "node_taints"]


def node_labels(pool: NodePool) -> dict[str, str]:
    """Every label a Node of the pool ends up with from its spec (whichever path carries it). A pool with
    GPUs is labelled for the GPU operator from its first boot, before the operator's feature discovery."""
    derived = {GPU_NODE_LABEL: "true"} if pool.spec.kubevirt.gpus else {}
    return dict(sorted({**pool.spec.labels, **derived}.items()))


def node_taints(pool: NodePool) -> list[dict[str, str]]:
    """The pool's taints as core/v1 Taints, in spec order (an empty value is left out, as the API does)."""
    return [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect} for t in pool.spec.taints]


def capi_synced_labels(pool: NodePool) -> dict[str, str]:
    """Labels that reach the Node only through CAPI's Machine -> Node sync."""
    return {k: v for k, v in node_labels(pool).items() if is_capi_synced(k)}


def kubelet_labels(pool: NodePool) -> dict[str, str]:
    """Labels Talos sets with the kubelet's identity, which NodeRestriction permits for these domains."""
    return {k: v for k, v in node_labels(pool).items() if not is_capi_synced(k)}
