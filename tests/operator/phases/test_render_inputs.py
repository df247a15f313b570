"""The verified-pass digest covers every input of the render, so a pass after any change re-renders.

A pass that finds its render in place records a digest of the render's inputs and skips the next
render while the digest is unchanged (`render_pass.render_inputs`). An input missing from the digest
means an edit that never reaches a verified tenant. Two properties hold that shut:

- every attribute path of the pass's scope that `_render` reads is read by `_render_inputs` too, so a
  new input of the render cannot be forgotten by the digest (found by reading, not listed by hand);
- every leaf of every input (the TenantCluster, each NodePool, the observed state, the Platform's
  charts and images, the pools held back at their live versions, the Kamaji release, the prune's
  kinds) changes the digest when it changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from tenant_support import clone, doc, load_example
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.phases import reconcile, render_pass
from tenantctl.operator.phases.observe import Observation
from tenantctl.operator.phases.platform import PlatformSettings
from tenantctl.operator.phases.upgrade import Stage, UpgradeDecision, Versions
from tenantctl.providers.catalogue import load_catalogue
from tenantctl.providers.platform import parse_platform
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.compat import KamajiRelease
from tenantctl.spec.loader import parse_observed

PLATFORM = {
    "apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "default"},
    "spec": {
        "images": {"registryMirror": "mirror.example.org",
                   "overrides": {"proxmox-ccm": {"repository": "ccm.example.org/ccm", "tag": "v0.9.0"}}},
        "charts": {"mirror": {"oci": "oci://mirror.example.org/charts"},
                   "sources": {"cilium": {"kind": "OCIRepository", "url": "oci://charts.example.org/cilium",
                                          "version": "1.18.2", "interval": "30m"}}},
    },
}
_UNUSED: Any = None
"""The API client and event recorder: neither the render nor its digest touches them."""


def _scope() -> reconcile.Scope:
    docs = load_example("proxmox.yaml")
    second = clone([doc(docs, "NodePool")])[0]
    second["metadata"]["name"] = "big"
    parsed = parse_tenant_documents([*docs, second])
    cluster = parsed.clusters[0]
    observed = parse_observed(load_example("observed-proxmox.yaml"))
    state = observed[(cluster.metadata.namespace, cluster.metadata.name)]
    platform = parse_platform([PLATFORM], load_catalogue(), Path("."), "Platform/default")
    pools = parsed.pools_of(cluster)
    target = Versions("v1.33.13", cluster.spec.talos.version)
    held = {pools[-1].metadata.name: Versions("v1.32.9", "v1.12.4")}
    return reconcile.Scope(
        api=_UNUSED, settings=OperatorSettings(), recorder=_UNUSED, body={}, pool_bodies=(),
        cluster=cluster, pools=pools,
        observation=Observation(state, "https://203.0.113.10:6443", None, ""),
        platform=PlatformSettings(platform.charts, platform.images, platform.kamaji),
        upgrade=UpgradeDecision(target, Stage.POOL, pools[0].metadata.name, "", held),
    )


class _Reads:
    """Wraps the scope (and its containers) and records each attribute path read below it."""

    CONTAINERS = (reconcile.Scope, PlatformSettings, Observation, UpgradeDecision)

    def __init__(self, target: Any, seen: set[str], prefix: str = "") -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_seen", seen)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        path = object.__getattribute__(self, "_prefix") + name
        seen: set[str] = object.__getattribute__(self, "_seen")
        seen.add(path)
        value = getattr(object.__getattribute__(self, "_target"), name)
        if isinstance(value, self.CONTAINERS):
            return _Reads(value, seen, path + ".")
        return value


def _read_by(call: Any, scope: reconcile.Scope) -> set[str]:
    seen: set[str] = set()
    call(_Reads(scope, seen))
    # A container read only to reach its fields is no input itself.
    return {p for p in seen if not any(q.startswith(p + ".") for q in seen)}


DERIVED = {
    "upgrade.target": "decide() derives it from scope.cluster.spec (version, talos.version), digested whole",
}


def test_every_path_the_render_reads_is_in_the_digest() -> None:
    scope = _scope()
    rendered = _read_by(lambda s: render_pass.render(s, s.observation.observed), scope)
    digested = _read_by(lambda s: render_pass.render_inputs(s, ["a"], {("b", "c")}), scope)
    assert rendered, "the recorder saw the render read nothing: it no longer wraps the scope"
    forgotten = rendered - digested - set(DERIVED)
    assert not forgotten, f"the render reads {sorted(forgotten)}, which the verified-pass digest leaves out"
    assert {"cluster", "pools", "platform.charts", "platform.images", "kamaji_release",
            "observation.observed", "upgrade.held"} <= rendered, "the recorder misses a known input"


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))
    else:
        yield path, node


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    if isinstance(value, str):
        return value[:-1] + ("1" if value[-1:] != "1" else "2") if value else "a"
    return None


def _set(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = {**tree} if isinstance(tree, dict) else list(tree)
    copy[path[0]] = value if len(path) == 1 else _set(tree[path[0]], path[1:], value)
    return copy


def _variants(model: BaseModel) -> Iterator[tuple[str, BaseModel]]:
    """The model with one leaf changed, for every leaf whose change the model still accepts."""
    dumped = model.model_dump(mode="json", by_alias=True)
    for path, value in _leaves(dumped):
        changed = _changed(value)
        if changed is None:
            continue
        try:
            yield "/".join(map(str, path)), type(model).model_validate(_set(dumped, path, changed))
        except ValidationError:
            continue


def _digest(scope: reconcile.Scope, kinds: list[str] | None = None, keep: set[tuple[str, str]] | None = None
            ) -> bytes:
    kinds = kinds or ["ProxmoxMachineTemplate.v1alpha1.infrastructure.cluster.x-k8s.io"]
    return render_pass.render_inputs(scope, kinds, keep if keep is not None else {("Secret", "kept")})


def _replaced(scope: reconcile.Scope, input_name: str, value: Any) -> reconcile.Scope:
    if input_name == "cluster":
        return dataclasses.replace(scope, cluster=value)
    if input_name.startswith("pools["):
        i = int(input_name[6:-1])
        return dataclasses.replace(scope, pools=(*scope.pools[:i], value, *scope.pools[i + 1:]))
    if input_name == "observed":
        assert scope.observation is not None
        return dataclasses.replace(scope, observation=dataclasses.replace(scope.observation, observed=value))
    return dataclasses.replace(scope, platform=dataclasses.replace(scope.platform, **{input_name: value}))


def _inputs(scope: reconcile.Scope) -> list[tuple[str, BaseModel]]:
    assert scope.cluster is not None and scope.observation is not None and scope.observation.observed is not None
    assert scope.platform.charts is not None and scope.platform.images is not None
    return [("cluster", scope.cluster), *((f"pools[{i}]", p) for i, p in enumerate(scope.pools)),
            ("observed", scope.observation.observed), ("charts", scope.platform.charts),
            ("images", scope.platform.images)]


@pytest.mark.parametrize("which", ["cluster", "pools[0]", "pools[1]", "observed", "charts", "images"])
def test_every_leaf_of_every_input_changes_the_digest(which: str) -> None:
    scope = _scope()
    before = _digest(scope)
    model = dict(_inputs(scope))[which]
    tried = [(path, _digest(_replaced(scope, which, variant))) for path, variant in _variants(model)]
    assert len(tried) >= 3, f"{which}: too few leaves could be changed to test ({len(tried)})"
    unchanged = [path for path, after in tried if after == before]
    assert not unchanged, f"{which}: changing {unchanged} leaves the verified-pass digest as it was"


def test_the_live_inputs_change_the_digest() -> None:
    """What the cluster runs (a held pool's versions), the Kamaji release and the prune's memory."""
    scope = _scope()
    before = _digest(scope)
    assert scope.upgrade is not None
    (pool, running), = scope.upgrade.held.items()
    def holding(held: dict[str, Versions]) -> reconcile.Scope:
        assert scope.upgrade is not None
        return dataclasses.replace(scope, upgrade=dataclasses.replace(scope.upgrade, held=held))

    live = [
        holding({pool: Versions("v1.32.8", running.talos)}),
        holding({pool: Versions(running.kubernetes, "v1.12.3")}),
        holding({}),
        dataclasses.replace(scope, upgrade=None),
        dataclasses.replace(scope, kamaji_release=KamajiRelease("26.5.3-edge", "declared: test")),
    ]
    assert all(_digest(s) != before for s in live)
    deployment = {"metadata": {"name": "acme-md0"}, "spec": {"template": {"spec": {
        "version": "v1.33.8", "infrastructureRef": {"name": "acme-md0-b0d245fa"},
        "bootstrap": {"configRef": {"name": "acme-md0"}}}}}}
    moved = {"metadata": {"name": "acme-md0"}, "spec": {"template": {"spec": {
        "version": "v1.33.8", "infrastructureRef": {"name": "acme-md0-e6fbdefd"},
        "bootstrap": {"configRef": {"name": "acme-md0"}}}}}}
    with_live = dataclasses.replace(scope, live_deployments=[deployment])
    assert _digest(with_live) != before, "a live MachineDeployment's machine template (kept across releases)"
    assert _digest(dataclasses.replace(scope, live_deployments=[moved])) != _digest(with_live)
    # The live template's content, as far as the render reads it: whether an unkept level marks it.
    sound = {"spec": {"template": {"spec": {"templateSelector": {"matchTags": ["talos"]}}}}}
    broken = {"spec": {"template": {"spec": {"templateSelector": {"matchTags": ["talos"]}, "sourceNode": "pve1"}}}}
    named = "acme-md0-b0d245fa"
    assert _digest(dataclasses.replace(with_live, live_templates={named: sound})) != \
        _digest(dataclasses.replace(with_live, live_templates={named: broken}))
    assert _digest(dataclasses.replace(with_live, live_templates={named: sound})) == \
        _digest(dataclasses.replace(with_live, live_templates={named: {**sound, "metadata": {"generation": 9}}})), \
        "what the render does not read does not change it"
    assert _digest(scope, kinds=["Secret.v1"]) != before
    assert _digest(scope, keep=set()) != before
    assert _digest(dataclasses.replace(scope, platform=PlatformSettings())) != before
