"""Two inputs that render one object, duplicate keys, and commands that must refuse alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hostile_support import dump, invoke
from tenant_support import clone, doc, load_example
from tenantctl.problems import InvalidInput
from tenantctl.render.tenant import refuse_collisions


def _cluster(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "tenantctl.io/v1alpha1", "kind": "TenantCluster",
            "metadata": {"name": name, "namespace": namespace}}


def _pool(name: str, namespace: str, cluster: str) -> dict[str, Any]:
    return {"apiVersion": "tenantctl.io/v1alpha1", "kind": "NodePool",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"cluster": cluster}}


def test_pools_whose_cluster_pool_names_coincide(tmp_path: Path) -> None:
    docs = [_cluster("a", "t"), _cluster("a-b", "t"), _pool("b-c", "t", "a"), _pool("c", "t", "a-b")]
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path)
    line = out.refusal_at("NodePool/t/c")
    assert "MachineDeployment.cluster.x-k8s.io t/a-b-c" in line and "NodePool/t/b-c" in line


def test_tenants_whose_namespace_cluster_names_coincide(tmp_path: Path) -> None:
    docs = [_cluster("b-c", "a"), _cluster("c", "a-b")]
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path)
    line = out.refusal_at("TenantCluster/a-b/c")
    assert "ClusterRoleBinding.rbac.authorization.k8s.io a-b-c-kcsi-access" in line and "TenantCluster/a/b-c" in line


def test_a_collision_of_core_objects_names_the_core_group() -> None:
    """Core objects have no group in their apiVersion (`v1`): the message still says which API they are in."""
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "t"}}
    with pytest.raises(InvalidInput) as refused:
        refuse_collisions([("TenantCluster/t/a", secret), ("TenantCluster/t/b", dict(secret))])
    [problem] = refused.value.errors
    assert problem.path == "TenantCluster/t/b"
    assert problem.message.startswith("renders Secret.core t/s, which TenantCluster/t/a renders too")


def test_the_same_names_in_distinct_namespaces_do_not_collide(tmp_path: Path) -> None:
    docs = [_cluster("a", "t1"), _cluster("a", "t2"), _pool("p", "t1", "a"), _pool("p", "t2", "a")]
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path)
    assert out.exit_code == 0, out.stderr


def test_a_duplicate_key_names_the_line_of_both(tmp_path: Path) -> None:
    text = dump(load_example("kubevirt.yaml")).replace("  name: demo\n", "  name: demo\n  name: other\n", 1)
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": text}, tmp_path)
    line = out.refusal_at("t.yaml:5:3")
    assert "duplicate key 'name', first given at line 4" in line


def test_the_same_value_twice_is_still_a_duplicate(tmp_path: Path) -> None:
    text = dump(load_example("kubevirt.yaml")).replace("  name: demo\n", "  name: demo\n  name: demo\n", 1)
    assert "duplicate key" in invoke(["render", "-f", "t.yaml"], {"t.yaml": text}, tmp_path).stderr


def test_in_tenant_refuses_an_observation_of_an_unknown_cluster(tmp_path: Path) -> None:
    observed = clone(load_example("observed-kubevirt.yaml"))
    observed.append(clone(observed)[0])
    observed[1]["metadata"]["name"] = "ghost"
    files = {"t.yaml": dump(load_example("kubevirt.yaml")), "o.yaml": dump(observed)}
    for command in ("render", "audit"):
        extra = ["--in-tenant"] if command == "render" else []
        out = invoke([command, "-f", "t.yaml", "--observed", "o.yaml", *extra], files, tmp_path)
        assert "no TenantCluster tenant-demo/ghost" in out.refusal_at("ObservedState/ghost")
    out = invoke(["render", "-f", "t.yaml", "--observed", "o.yaml", "--in-tenant"], files, tmp_path)
    assert out.stdout == ""


def test_render_and_audit_platform_refuse_what_providers_render_refuses(tmp_path: Path) -> None:
    platform = clone(load_example("platform.yaml"))
    doc(platform, "Platform")["spec"].setdefault("bundles", {})["enabledPackages"] = ["no-such-package"]
    files = {"t.yaml": dump(load_example("kubevirt.yaml")), "p.yaml": dump(platform)}
    refusals = [
        invoke(command, files, tmp_path).refusal_at("")
        for command in (
            ["providers", "render", "-f", "p.yaml"],
            ["render", "-f", "t.yaml", "--platform", "p.yaml"],
            ["audit", "-f", "t.yaml", "--platform", "p.yaml"],
        )
    ]
    assert all("no-such-package" in r for r in refusals), refusals


@pytest.mark.parametrize(
    ("docs", "fragment"),
    [
        ([], "no TenantCluster in the input"),
        ([{"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "p"}}],
         "no TenantCluster in the input"),
        ([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}], "unsupported apiVersion/kind"),
    ],
    ids=["empty", "only-a-platform", "unknown-kind"],
)
def test_an_input_without_a_tenant_cluster_is_refused(docs: list[dict[str, Any]], fragment: str,
                                                      tmp_path: Path) -> None:
    out = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs) if docs else "# nothing\n"}, tmp_path)
    assert out.exit_code == 2 and fragment in out.stderr, out.stderr
