"""What one worker of a pool offers to pods, for the autoscaler to scale a pool up from zero.

The machine templates publish no capacity, so the MachineDeployment carries it as annotations:
the node's size minus what the kubelet keeps back (system and kube reserved, and the hard eviction
threshold for memory), and the labels and taints its Nodes get, so a pending pod with a selector or
a toleration grows the right pool. The size errs high by what the guest kernel keeps of the memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from tenantctl.render.instancetypes import INSTANCETYPE_SIZES
from tenantctl.render.node_placement import node_labels, node_taints
from tenantctl.render.sizing import EVICTION, capmox_memory_mib, kubelet_reservations, num_cores
from tenantctl.spec import NodePool
from tenantctl.spec.quantity import parse_quantity

__all__ = [
    "CAPACITY_CPU",
    "CAPACITY_LABELS",
    "CAPACITY_MEMORY",
    "CAPACITY_TAINTS",
    "NodeSize",
    "allocatable_annotations",
    "node_size",
    "node_template_annotations",
]

CAPACITY_CPU = "capacity.cluster-autoscaler.kubernetes.io/cpu"
CAPACITY_MEMORY = "capacity.cluster-autoscaler.kubernetes.io/memory"
CAPACITY_LABELS = "capacity.cluster-autoscaler.kubernetes.io/labels"
CAPACITY_TAINTS = "capacity.cluster-autoscaler.kubernetes.io/taints"
_MIB = Decimal(2) ** 20


@dataclass(frozen=True)
class NodeSize:
    """A worker VM's size as its kubelet sees it: whole cores and bytes."""

    cores: int
    memory_bytes: Decimal


def node_size(substrate: str, pool: NodePool) -> NodeSize | None:
    """The VM each substrate creates for the pool, or None when only the hypervisor knows it
    (a Proxmox pool sized by its template, a KubeVirt instancetype not in the table)."""
    res = pool.spec.resources
    if res.cpu is not None and res.memory is not None:
        if substrate == "proxmox":
            return NodeSize(num_cores(res.cpu), capmox_memory_mib(res.memory) * _MIB)
        return NodeSize(num_cores(res.cpu), parse_quantity(res.memory))
    if substrate == "kubevirt" and pool.spec.kubevirt.instance_type in INSTANCETYPE_SIZES:
        cores, memory = INSTANCETYPE_SIZES[pool.spec.kubevirt.instance_type]
        return NodeSize(cores, parse_quantity(memory))
    return None


def _percent_of(threshold: str, total: Decimal) -> Decimal:
    if threshold.endswith("%"):
        return total * Decimal(threshold[:-1]) / 100
    return parse_quantity(threshold)


def allocatable_annotations(substrate: str, pool: NodePool) -> dict[str, str]:
    """`capacity.cluster-autoscaler.kubernetes.io/{cpu,memory}`; nothing when the size is unknown or the
    reservations leave nothing (the autoscaler then cannot scale the pool up from zero)."""
    size = node_size(substrate, pool)
    if size is None:
        return {}
    reserved = kubelet_reservations(pool)
    cpu_m = size.cores * 1000 - sum(int(parse_quantity(q) * 1000) for q in (reserved.system_cpu, reserved.kube_cpu))
    held = sum(parse_quantity(q) for q in (reserved.system_memory, reserved.kube_memory))
    held += _percent_of(EVICTION["memory.available"].hard, size.memory_bytes)
    memory_mi = math.floor((size.memory_bytes - held) / _MIB)
    if cpu_m <= 0 or memory_mi <= 0:
        return {}
    return {CAPACITY_CPU: f"{cpu_m}m", CAPACITY_MEMORY: f"{memory_mi}Mi"}


def node_template_annotations(substrate: str, pool: NodePool) -> dict[str, str]:
    """Allocatable resources, then `k=v,...` labels and `key=value:Effect,...` taints as the clusterapi
    provider parses them (cluster-autoscaler 1.32.0 `clusterapi_unstructured.go` Labels, Taints)."""
    annotations = allocatable_annotations(substrate, pool)
    if labels := node_labels(pool):
        annotations[CAPACITY_LABELS] = ",".join(f"{k}={v}" for k, v in labels.items())
    if taints := node_taints(pool):
        annotations[CAPACITY_TAINTS] = ",".join(
            f"{t['key']}{'=' + t['value'] if 'value' in t else ''}:{t['effect']}" for t in taints
        )
    return annotations
