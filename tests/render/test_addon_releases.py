"""Every tenant add-on release survives a slow first install instead of uninstalling itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

Validator = Callable[[Iterable[Mapping[str, Any]]], None]


def _releases(example: str, observed: str) -> list[dict[str, Any]]:
    objects = render_tenant(parse_tenant_documents(load_example(example)), parse_observed(load_example(observed)))
    return [o for o in objects if o["kind"] == "HelmRelease"]


EXAMPLES = [("proxmox.yaml", "observed-proxmox.yaml"), ("kubevirt.yaml", "observed-kubevirt.yaml")]


@pytest.mark.parametrize(("example", "observed"), EXAMPLES)
def test_a_failed_install_or_upgrade_is_retried_not_uninstalled(
    example: str, observed: str, assert_valid: Validator
) -> None:
    """Flux's default remediation uninstalls a failed install: the tenant's only CNI would loop away.
    The retry of an install runs as an upgrade, so the upgrade carries the strategy too."""
    releases = _releases(example, observed)
    # cilium, coredns, metrics-server, snapshot-crds, snapshot-controller, and proxmox's CSI node release
    assert len(releases) == (6 if example.startswith("proxmox") else 5)
    for release in releases:
        for action in ("install", "upgrade"):
            assert release["spec"][action]["strategy"] == {"name": "RetryOnFailure", "retryInterval": "30s"}
    assert_valid(releases)


@pytest.mark.parametrize(("example", "observed"), EXAMPLES)
def test_unlimited_retries_are_kept_for_the_branches_no_strategy_reaches(example: str, observed: str) -> None:
    for release in _releases(example, observed):
        assert release["spec"]["install"]["remediation"] == {"retries": -1}
        assert release["spec"]["upgrade"]["remediation"] == {"retries": -1}


def test_releases_do_not_share_their_strategy_objects() -> None:
    first, second, *_ = _releases(*EXAMPLES[0])
    first["spec"]["install"]["strategy"]["retryInterval"] = "1h"
    assert second["spec"]["install"]["strategy"]["retryInterval"] == "30s"
    assert _releases(*EXAMPLES[0])[0]["spec"]["install"]["strategy"]["retryInterval"] == "30s"
