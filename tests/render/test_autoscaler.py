"""The cluster-autoscaler and its node groups: arguments, RBAC, annotations and scale-from-zero capacity."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tenant_support import clone, doc
from tenantctl.cli import app
from tenantctl.render import render_tenant
from tenantctl.render.addon_roles import ADDON_ROLES
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.spec import parse_tenant_documents

Docs = list[dict[str, Any]]
Validator = Callable[[Iterable[Mapping[str, Any]]], None]
CPU = "capacity.cluster-autoscaler.kubernetes.io/cpu"
MEMORY = "capacity.cluster-autoscaler.kubernetes.io/memory"


def render(docs: Docs) -> list[dict[str, Any]]:
    return render_tenant(parse_tenant_documents(docs))


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def annotations(objects: list[dict[str, Any]], md: str) -> dict[str, str]:
    return dict(find(objects, "MachineDeployment", md)["metadata"].get("annotations") or {})


def test_the_example_autoscaler_is_pinned(kubevirt_docs: Docs, assert_valid: Validator) -> None:
    objects = render(kubevirt_docs)
    deployment = find(objects, "Deployment", "demo-cluster-autoscaler")
    pod = deployment["spec"]["template"]["spec"]
    (main,) = pod["containers"]
    assert main["command"] == ["/cluster-autoscaler"]
    assert main["args"] == [
        "--cloud-provider=clusterapi",
        "--node-group-auto-discovery=clusterapi:namespace=tenant-demo,clusterName=demo",
        "--enforce-node-group-min-size=true",
        "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc",
        "--clusterapi-cloud-config-authoritative",
    ]
    assert main["volumeMounts"] == [{"name": "kubeconfig", "mountPath": "/etc/kubernetes/kubeconfig", "readOnly": True}]
    assert pod["volumes"] == [{"name": "kubeconfig", "secret": {"secretName": "demo-admin-kubeconfig"}}]
    assert pod["serviceAccountName"] == "demo-cluster-autoscaler"
    assert pod["automountServiceAccountToken"] is True, "the management side goes through its ServiceAccount"
    assert main["resources"] == {
        "requests": {"cpu": "125m", "memory": "128Mi"},
        "limits": {"cpu": "512m", "memory": "512Mi"},
    }
    assert main["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
    }
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert main["image"] == str(ImagesSpec().ref("cluster-autoscaler"))
    assert "@sha256:" in main["image"]
    assert deployment["spec"]["replicas"] == 1

    # The rules are a ClusterRole `install` renders once, bound in the tenant's namespace only.
    assert ADDON_ROLES["tenantctl-autoscaler-kubevirt"] == (
        ("cluster.x-k8s.io", ("machinedeployments", "machinesets", "machinepools"), ("get", "list", "watch")),
        ("cluster.x-k8s.io", ("machinedeployments/scale",), ("get", "update")),
        ("cluster.x-k8s.io", ("machines",), ("get", "list", "watch", "update")),
        ("infrastructure.cluster.x-k8s.io", ("kubevirtmachinetemplates",), ("get", "list", "watch")),
    )
    binding = find(objects, "RoleBinding", "demo-cluster-autoscaler-access")
    assert binding["metadata"]["namespace"] == "tenant-demo"
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "tenantctl-autoscaler-kubevirt"}
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "demo-cluster-autoscaler", "namespace": "tenant-demo"}
    ]
    assert find(objects, "ServiceAccount", "demo-cluster-autoscaler")
    assert not [o for o in objects if o["kind"] in ("Role", "ClusterRole") and "autoscaler" in o["metadata"]["name"]]

    md = find(objects, "MachineDeployment", "demo-md0")
    assert "replicas" not in md["spec"]
    assert md["metadata"]["annotations"] == {
        "tenantctl.io/talos-version": "v1.13.6",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "4",
        "cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime": "30m",
        # u1.medium: 1 vCPU, 4Gi; reserved 50m + 50m; 256Mi + 256Mi + 7 % of 4096Mi (286.72Mi)
        CPU: "900m",
        MEMORY: "3297Mi",
    }
    assert_valid(objects)


def test_no_autoscaler_without_an_autoscaled_pool(proxmox_docs: Docs, kubevirt_docs: Docs) -> None:
    fixed = clone(kubevirt_docs)
    spec = doc(fixed, "NodePool", "md0")["spec"]
    for key in ("minReplicas", "maxReplicas"):
        spec.pop(key)
    for docs in (proxmox_docs, fixed):
        assert not [o for o in render(docs) if "autoscaler" in o["metadata"]["name"]]


def test_provision_time_comes_from_the_pool(kubevirt_docs: Docs) -> None:
    doc(kubevirt_docs, "NodePool", "md0")["spec"]["autoscaling"] = {"maxNodeProvisionTime": "1h15m"}
    got = annotations(render(kubevirt_docs), "demo-md0")
    assert got["cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime"] == "1h15m"


def test_scale_from_zero_capacity_matches_a_hand_computation(kubevirt_docs: Docs) -> None:
    """Capacity = size - system reserved - kube reserved - 7 % hard eviction (memory), floored to Mi."""
    docs = clone(kubevirt_docs)
    doc(docs, "NodePool", "md0")["spec"].update(minReplicas=0, kubevirt={"instanceType": "u1.xlarge"})
    sized = doc(docs, "NodePool", "big")["spec"]
    sized.pop("replicas")
    sized.update(minReplicas=0, maxReplicas=3, resources={"cpu": "2", "memory": "6Gi"})
    objects = render(docs)
    # u1.xlarge (common-instancetypes): 4 vCPUs, 16Gi; an instancetype pool reserves the floors 50m / 256Mi
    # cpu: 4000m - 50m - 50m; memory: 16384Mi - 256Mi - 256Mi - 1146.88Mi = 14725.12Mi
    assert {k: v for k, v in annotations(objects, "demo-md0").items() if k in (CPU, MEMORY)} == {
        CPU: "3900m", MEMORY: "14725Mi",
    }
    # resources 2 / 6Gi: reserved 5 % each: 100m and int(307.2)=307Mi
    # cpu: 2000m - 100m - 100m; memory: 6144Mi - 307Mi - 307Mi - 430.08Mi = 5099.92Mi
    assert {k: v for k, v in annotations(objects, "demo-big").items() if k in (CPU, MEMORY)} == {
        CPU: "1800m", MEMORY: "5099Mi",
    }


def test_scale_from_zero_knows_the_pools_labels_and_taints(kubevirt_docs: Docs) -> None:
    """Pending pods with the pool's selector or toleration grow this pool (the example's `big`)."""
    spec = doc(kubevirt_docs, "NodePool", "big")["spec"]
    spec.pop("replicas")
    spec.update(minReplicas=0, maxReplicas=2)
    spec["taints"].append({"key": "dedicated", "effect": "NoExecute"})
    got = annotations(render(kubevirt_docs), "demo-big")
    assert got["capacity.cluster-autoscaler.kubernetes.io/labels"] == (
        "example.com/workload=memory-heavy,node-role.kubernetes.io/memory="
    )
    assert got["capacity.cluster-autoscaler.kubernetes.io/taints"] == (
        "example.com/workload=memory-heavy:NoSchedule,dedicated:NoExecute"
    )


def test_a_pool_without_labels_or_taints_carries_neither_annotation(kubevirt_docs: Docs) -> None:
    got = annotations(render(kubevirt_docs), "demo-md0")
    assert not {"capacity.cluster-autoscaler.kubernetes.io/labels",
                "capacity.cluster-autoscaler.kubernetes.io/taints"} & set(got)


def test_proxmox_capacity_comes_from_num_cores_and_memory_mib(proxmox_docs: Docs) -> None:
    spec = doc(proxmox_docs, "NodePool")["spec"]
    spec.pop("replicas")
    spec.update(minReplicas=0, maxReplicas=5)
    objects = render(proxmox_docs)
    # 1500m -> 2 cores, 8G -> 7632 MiB (capmox); reserved 75m and int(381.47)=381Mi each
    # cpu: 2000m - 150m; memory: 7632Mi - 762Mi - 534.24Mi = 6335.76Mi
    got = annotations(objects, "acme-md0")
    assert (got[CPU], got[MEMORY]) == ("1850m", "6335Mi")
    binding = find(objects, "RoleBinding", "acme-cluster-autoscaler-access")
    assert binding["roleRef"]["name"] == "tenantctl-autoscaler-proxmox"
    assert ADDON_ROLES["tenantctl-autoscaler-proxmox"][-1][1] == ("proxmoxmachinetemplates",)


@pytest.mark.parametrize(
    ("pool_spec", "why"),
    [
        ({"kubevirt": {"instanceType": "custom.big"}}, "an instancetype outside the table has no known size"),
        ({"kubevirt": {"instanceType": "u1.nano"}}, "512Mi leaves nothing after the reservations"),
    ],
)
def test_no_capacity_when_the_size_is_unknown_or_nothing_is_left(
    kubevirt_docs: Docs, pool_spec: dict[str, Any], why: str
) -> None:
    doc(kubevirt_docs, "NodePool", "md0")["spec"].update(pool_spec)
    assert not {CPU, MEMORY} & set(annotations(render(kubevirt_docs), "demo-md0")), why


def test_a_proxmox_pool_sized_by_its_template_has_no_capacity(proxmox_docs: Docs) -> None:
    spec = doc(proxmox_docs, "NodePool")["spec"]
    spec.pop("replicas")
    spec.update(minReplicas=1, maxReplicas=2, resources={"cpu": 2})
    assert not {CPU, MEMORY} & set(annotations(render(proxmox_docs), "acme-md0"))


def test_autoscaling_does_not_rename_the_machine_template(kubevirt_docs: Docs) -> None:
    """The annotations and the absent replicas live on the MachineDeployment: no worker rolls."""
    fixed = clone(kubevirt_docs)
    spec = doc(fixed, "NodePool", "md0")["spec"]
    for key in ("minReplicas", "maxReplicas"):
        spec.pop(key)
    spec["replicas"] = 2

    def template(docs: Docs) -> str:
        md = find(render(docs), "MachineDeployment", "demo-md0")
        return str(md["spec"]["template"]["spec"]["infrastructureRef"]["name"])

    assert template(fixed) == template(kubevirt_docs)


@pytest.mark.parametrize(("max_replicas", "accepted"), [(50, True), (51, False)])
def test_proxmox_ip_capacity_counts_max_replicas_and_surge_of_autoscaled_pools(
    proxmox_docs: Docs, tmp_path: Path, max_replicas: int, accepted: bool
) -> None:
    """192.0.2.100-150 holds 51 addresses: maxReplicas 50 + surge 1 fits, 51 + 1 does not."""
    import yaml

    spec = doc(proxmox_docs, "NodePool")["spec"]
    spec.pop("replicas")
    spec.update(minReplicas=0, maxReplicas=max_replicas)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump_all(proxmox_docs))
    result = CliRunner().invoke(app, ["render", "-f", str(path)])
    if accepted:
        assert result.exit_code == 0, result.stderr
    else:
        assert result.exit_code == 2
        assert "TenantCluster/acme.spec.proxmox.ipv4Config.addresses: 51 usable addresses, but the node pools " \
            "can claim 52 at once (max replicas + rolling-update surge: md0: 51+1)" in result.stderr
