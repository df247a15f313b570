"""Proxmox placements and clone modes as edits of an example's documents: the variants the sweeps of what
capmox and Cluster API build from a render go over (`tests/validate/test_derived.py`, the upstream tier)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Docs = list[dict[str, Any]]
Edit = Callable[[Docs], None]


def pools(docs: Docs) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == "NodePool"]


def by_template_id(docs: Docs) -> None:
    """Each pool clones template 9000 on its sourceNode instead of selecting by tags."""
    for pool in pools(docs):
        pool["spec"]["proxmox"].pop("templateTags")
        pool["spec"]["proxmox"].pop("perNodeTemplates", None)
        pool["spec"]["proxmox"]["templateID"] = 9000


def per_node_templates(docs: Docs) -> None:
    """Each spread group clones its own node's copy of the template (`node-<node>` tagged)."""
    for pool in pools(docs):
        pool["spec"]["proxmox"]["perNodeTemplates"] = True


def full_clone(docs: Docs) -> None:
    for pool in pools(docs):
        pool["spec"]["proxmox"].update(full=True, storage="local-lvm", format="qcow2")


def dual_stack(docs: Docs) -> None:
    docs[0]["spec"]["proxmox"]["ipv6Config"] = {"addresses": ["2001:db8::100-2001:db8::1ff"], "prefix": 64,
                                                "gateway": "2001:db8::1"}
