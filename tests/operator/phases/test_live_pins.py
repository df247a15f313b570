"""A live pool keeps the machine template an earlier release rendered, until the spec changes its machines.

The live MachineDeployment is the one a21db75 rendered (from the compatibility corpus): before the
owner tags, and with sourceNode beside templateSelector (a template no machine can be cloned from, so it
is never kept). Today's render would name another template; `keep_live_templates` renders the pool at the
level whose template is the live one, unless the spec asks for a roll of its own or the level is unkept.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Sequence
from typing import Any

import yaml

from compat.corpus import renders
from tenantctl.operator.phases.live_pins import effective_version, keep_live_templates, template_refs
from tenantctl.render import render_cluster
from tenantctl.render.levels import CURRENT_LEVEL, LEVELS, pool_at_level, unkept_above
from tenantctl.spec import NodePool, TenantCluster, parse_observed, parse_tenant_documents
from tenantctl.spec.patch_policy import PatchUpgrades, PatchWindow

RENDER = next(r for r in renders() if r.release == "a21db75" and r.source == "examples/proxmox.yaml"
              and r.observed is not None)
LIVE = [o for o in RENDER.objects() if o["kind"] == "MachineDeployment"]
LIVE_TEMPLATES = {o["metadata"]["name"]: o for o in RENDER.objects() if o["kind"] == "ProxmoxMachineTemplate"}
NOW = datetime.datetime(2026, 12, 2, 3, 0, tzinfo=datetime.UTC)


def _spec(edit: Any = None) -> tuple[TenantCluster, tuple[NodePool, ...]]:
    docs = [d for d in yaml.safe_load_all(RENDER.spec_path().read_text()) if d]
    if edit is not None:
        edit(docs)
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    running = LIVE[0]["spec"]["template"]["spec"]["version"]
    cluster, _ = effective_version(cluster, running, None, NOW)
    return cluster, tenant.pools_of(cluster)


def _kept(cluster: TenantCluster, pools: Sequence[NodePool]) -> Any:
    observed_path = RENDER.observed_path()
    assert observed_path is not None
    observed = next(iter(parse_observed([d for d in yaml.safe_load_all(observed_path.read_text()) if d]).values()))

    def render_pool(_: str, at_level: Sequence[NodePool]) -> list[dict[str, Any]]:
        return render_cluster(cluster, at_level, observed)

    return keep_live_templates(pools, render_cluster(cluster, pools, observed), LIVE, render_pool, LIVE_TEMPLATES)


def _mds(objects: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [template_refs(o) for o in objects if o["kind"] == "MachineDeployment"]


def test_a_pool_selecting_by_tags_never_keeps_a_template_that_cannot_make_a_machine() -> None:
    """a21db75's template wrote sourceNode beside templateSelector, which capmox's ProxmoxMachine CRD refuses
    on every clone: keeping it would keep a pool without workers. It rolls once and says why."""
    kept = _kept(*_spec())
    assert _mds(kept.objects) != [template_refs(md) for md in LIVE]
    assert kept.waiting == ()
    (rolling,) = kept.rolling
    assert rolling.startswith("pool md0 rolls once: sourceNode left out beside templateSelector"), rolling
    assert "(since Unreleased)" in rolling and "not kept" in rolling
    template = next(o for o in kept.objects if o["kind"] == "ProxmoxMachineTemplate")
    assert "sourceNode" not in template["spec"]["template"]["spec"]
    assert "tenantctl" in template["spec"]["template"]["spec"]["tags"], "every change rides with the roll"


def _by_template_id(docs: list[dict[str, Any]]) -> None:
    proxmox = next(d for d in docs if d["kind"] == "NodePool")["spec"]["proxmox"]
    del proxmox["templateTags"]
    proxmox["templateID"] = 9000


def test_a_pool_cloning_by_template_id_keeps_the_template_rendered_before_the_owner_tags() -> None:
    """The sourceNode change does not touch a templateID pool: it is held at level 0 (no owner tags), which
    is what a release before 3c5c6f1 rendered, and only the owner tags wait for its next roll."""
    cluster, pools = _spec(_by_template_id)
    observed_path = RENDER.observed_path()
    assert observed_path is not None
    observed = next(iter(parse_observed([d for d in yaml.safe_load_all(observed_path.read_text()) if d]).values()))
    before = render_cluster(cluster, [pool_at_level(p, 0) for p in pools], observed)
    live = [o for o in before if o["kind"] == "MachineDeployment"]
    kept = keep_live_templates(pools, render_cluster(cluster, pools, observed), live,
                               lambda _, at: render_cluster(cluster, at, observed),
                               {o["metadata"]["name"]: o for o in before if o["kind"] == "ProxmoxMachineTemplate"})
    assert _mds(kept.objects) == [template_refs(md) for md in live] != _mds(render_cluster(cluster, pools, observed))
    template = next(o for o in kept.objects if o["kind"] == "ProxmoxMachineTemplate")
    machine = template["spec"]["template"]["spec"]
    assert machine["sourceNode"] == "pve1" and machine["templateID"] == 9000 and "tags" not in machine
    (waiting,) = kept.waiting
    assert "pool md0" in waiting and "owner tags" in waiting and "3c5c6f1" in waiting
    assert "sourceNode" not in waiting, "a change that does not touch the pool is not said to wait"
    assert kept.rolling == ()


def test_a_pool_whose_machines_change_rolls_once_with_every_change() -> None:
    def more_memory(docs: list[dict[str, Any]]) -> None:
        pool = next(d for d in docs if d["kind"] == "NodePool")
        pool["spec"]["resources"]["memory"] = "12Gi"

    kept = _kept(*_spec(more_memory))
    assert kept.waiting == ()
    # Its live template is a21db75's (sourceNode beside the selector): why it could make no machine is said.
    assert [r.split(":")[0] for r in kept.rolling] == ["pool md0 rolls once"]
    template = next(o for o in kept.objects if o["kind"] == "ProxmoxMachineTemplate")
    assert "tenantctl" in template["spec"]["template"]["spec"]["tags"], "the owner tags ride with the roll"


def test_a_pool_taking_a_new_patch_rolls_with_every_change() -> None:
    nightly = PatchUpgrades(policy="Automatic", window=PatchWindow(start="02:00", duration="2h"))

    def automatic(docs: list[dict[str, Any]]) -> None:
        docs[0]["spec"]["patchUpgrades"] = nightly.model_dump(by_alias=True)

    cluster, pools = _spec(automatic)
    assert _mds(_kept(cluster, pools).objects) != [template_refs(md) for md in LIVE]
    assert _kept(cluster, pools).waiting == ()


def test_a_pool_rendered_by_this_release_is_left_as_rendered() -> None:
    cluster, pools = _spec()
    current = render_cluster(cluster, pools, None)
    kept = keep_live_templates(pools, current, [o for o in current if o["kind"] == "MachineDeployment"],
                               lambda _, at: render_cluster(cluster, at, None),
                               {o["metadata"]["name"]: o for o in current if o["kind"] == "ProxmoxMachineTemplate"})
    assert kept.objects == current and kept.waiting == ()


def test_each_level_turns_off_only_its_own_change() -> None:
    _, pools = _spec()
    pool = pools[0]
    assert pool_at_level(pool, CURRENT_LEVEL) == pool
    assert pool.spec.proxmox is not None and pool.spec.proxmox.owner_tags
    # Level 2 (sourceNode) is never kept: the pool below it is the pool as it is, and never rendered there.
    assert pool_at_level(pool, 1) == pool
    below = pool_at_level(pool, 0)
    assert below.spec.proxmox is not None and not below.spec.proxmox.owner_tags
    assert below.model_copy(update={"spec": below.spec.model_copy(update={"proxmox": pool.spec.proxmox})}) == pool
    assert [row.level for row in LEVELS] == list(range(1, CURRENT_LEVEL + 1))
    assert copy.deepcopy(pool) == pool, "the pool itself is left alone"


def test_an_unkept_level_holds_back_only_the_pools_it_touches() -> None:
    _, by_tags = _spec()
    _, by_id = _spec(_by_template_id)
    (sourcenode,) = [row for row in LEVELS if not row.kept]
    assert unkept_above(by_tags[0], sourcenode.level - 1) == sourcenode
    assert unkept_above(by_tags[0], 0) == sourcenode
    assert unkept_above(by_tags[0], sourcenode.level) is None
    assert unkept_above(by_id[0], 0) is None


def test_a_pool_whose_live_template_is_sound_is_not_told_about_the_unkept_level() -> None:
    """A templateTags pool that runs a template of this release and changes its machines rolls for its own
    change: the sourceNode level does not concern it and is not said."""
    cluster, pools = _spec()
    observed_path = RENDER.observed_path()
    assert observed_path is not None
    observed = next(iter(parse_observed([d for d in yaml.safe_load_all(observed_path.read_text()) if d]).values()))
    current = render_cluster(cluster, pools, observed)
    bigger = [p.model_copy(update={"spec": p.spec.model_copy(update={"replicas": 3, "resources": p.spec.resources
                                                                      .model_copy(update={"memory": "12Gi"})})})
              for p in pools]
    kept = keep_live_templates(bigger, render_cluster(cluster, bigger, observed),
                               [o for o in current if o["kind"] == "MachineDeployment"],
                               lambda _, at: render_cluster(cluster, at, observed),
                               {o["metadata"]["name"]: o for o in current if o["kind"] == "ProxmoxMachineTemplate"})
    assert kept.rolling == () and kept.waiting == ()


def test_a_template_id_pool_held_at_its_patch_keeps_its_template_and_rolls_once_at_release() -> None:
    """Proxmox under Manual with a newer patch pending (issue 59): the pool keeps the template it runs, at
    the patch it runs, through the hold; released, it rolls once, taking the owner tags with the patch."""
    observed_path = RENDER.observed_path()
    assert observed_path is not None
    observed = next(iter(parse_observed([d for d in yaml.safe_load_all(observed_path.read_text()) if d]).values()))
    held, pools = _spec(_by_template_id)
    running = LIVE[0]["spec"]["template"]["spec"]["version"]
    assert held.spec.version == running != "v1.33.13", "Manual: the tenant is rendered at the patch it runs"
    before = render_cluster(held, [pool_at_level(p, 0) for p in pools], observed)
    live = [o for o in before if o["kind"] == "MachineDeployment"]
    templates = {o["metadata"]["name"]: o for o in before if o["kind"] == "ProxmoxMachineTemplate"}

    def kept_at(cluster: TenantCluster) -> Any:
        return keep_live_templates(pools, render_cluster(cluster, pools, observed), live,
                                   lambda _, at: render_cluster(cluster, at, observed), templates)

    holding = kept_at(held)
    assert _mds(holding.objects) == [template_refs(md) for md in live], "nothing rolls while held"
    assert [w.split(":")[0] for w in holding.waiting] == ["pool md0 keeps its machine template until it rolls for "
                                                          "a change of its own"]
    released, _ = effective_version(held.model_copy(update={"spec": held.spec.model_copy(
        update={"version": "v1.33.13"})}), running, None, NOW)
    rolled = kept_at(released)
    (md,) = [o for o in rolled.objects if o["kind"] == "MachineDeployment"]
    assert md["spec"]["template"]["spec"]["version"] == "v1.33.13" and rolled.waiting == ()
    (template,) = [o for o in rolled.objects if o["kind"] == "ProxmoxMachineTemplate"]
    assert "tenantctl" in template["spec"]["template"]["spec"]["tags"], "one roll, every change in it"
