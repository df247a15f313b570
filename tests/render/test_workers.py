"""Worker parity with the production chart: kubelet eviction, pool labels and taints, health-check
timeouts and the management cluster's domain. Each assert pins one rendered line."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
import yaml

from tenant_support import doc, load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

Docs = list[dict[str, Any]]
Validator = Callable[[Iterable[Mapping[str, Any]]], None]


def render(docs: Docs, observed: str | Docs | None = None) -> list[dict[str, Any]]:
    obs = load_example(observed) if isinstance(observed, str) else observed
    return render_tenant(parse_tenant_documents(docs), parse_observed(obs) if obs else None)


def by_pool(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["labels"]["tenantctl.io/nodepool"]: o for o in objects if o["kind"] == kind}


def worker_config(objects: list[dict[str, Any]], pool: str) -> dict[str, Any]:
    tct = by_pool(objects, "TalosConfigTemplate")[pool]
    config: dict[str, Any] = yaml.safe_load(tct["spec"]["template"]["spec"]["data"])
    return config


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


# --- kubelet eviction -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("example", "observed"), [("kubevirt.yaml", "observed-kubevirt.yaml"),
                                                   ("proxmox.yaml", "observed-proxmox.yaml")])
def test_worker_kubelet_eviction_hard_and_soft(example: str, observed: str) -> None:
    extra = worker_config(render(load_example(example), observed), "md0")["machine"]["kubelet"]["extraConfig"]
    assert extra["evictionHard"] == {
        "memory.available": "7%",
        "nodefs.available": "10%",
        "imagefs.available": "15%",
        "nodefs.inodesFree": "5%",
    }
    assert extra["evictionSoft"] == {"memory.available": "10%", "nodefs.available": "15%", "imagefs.available": "20%"}
    assert extra["evictionSoftGracePeriod"] == {
        "memory.available": "1m30s",
        "nodefs.available": "1m30s",
        "imagefs.available": "1m30s",
    }
    assert extra["evictionMinimumReclaim"] == {"memory.available": "256Mi"}


def test_every_soft_threshold_has_a_grace_period_and_sits_above_its_hard_one() -> None:
    from tenantctl.render.sizing import EVICTION

    for signal, t in EVICTION.items():
        assert (t.soft is None) == (t.grace is None), signal
        if t.soft is not None:
            assert float(t.soft.rstrip("%")) > float(t.hard.rstrip("%")), signal


# --- MachineHealthCheck timeouts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "rendered"),
    [("20m0s", "1200s"), ("1h30m", "5400s"), ("90s", "90s"), ("1.5h", "5400s"), ("2h", "7200s"), ("45s", "45s")],
)
def test_health_check_timeouts_are_go_durations_rendered_in_seconds(
    proxmox_docs: Docs, given: str, rendered: str
) -> None:
    doc(proxmox_docs, "NodePool")["spec"]["healthCheck"] = {
        "nodeStartupTimeout": given, "readyUnknownTimeout": given, "readyFalseTimeout": given,
    }
    mhc = one(render(proxmox_docs), "MachineHealthCheck")["spec"]
    assert mhc["nodeStartupTimeout"] == rendered
    assert [c["timeout"] for c in mhc["unhealthyConditions"]] == [rendered, rendered]


@pytest.mark.parametrize(("given", "rendered"), [(3, 3), ("3", 3), ("0", 0), ("40%", "40%"), ("100%", "100%")])
def test_max_unhealthy_count_or_percent(proxmox_docs: Docs, given: Any, rendered: Any) -> None:
    doc(proxmox_docs, "NodePool")["spec"]["healthCheck"] = {"maxUnhealthy": given}
    assert one(render(proxmox_docs), "MachineHealthCheck")["spec"]["maxUnhealthy"] == rendered
