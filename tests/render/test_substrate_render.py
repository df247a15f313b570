"""What the renderer must produce on each substrate; every assert pins one line of the renderer."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tenant_support import clone, doc, load_example
from tenantctl.render import render_tenant
from tenantctl.render.sizing import capmox_memory_mib, kubelet_reservations, memory_mib, num_cores
from tenantctl.spec import parse_observed, parse_tenant_documents

Docs = list[dict[str, Any]]


def render(docs: Docs, observed: str | None = None) -> list[dict[str, Any]]:
    obs = parse_observed(load_example(observed)) if observed else None
    return render_tenant(parse_tenant_documents(docs), obs)


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind]
    assert len(found) == 1, [o["metadata"]["name"] for o in found]
    return found[0]


def machine_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = one(objects, "ProxmoxMachineTemplate")["spec"]["template"]["spec"]
    return spec


def worker_config(objects: list[dict[str, Any]], pool: str | None = None) -> dict[str, Any]:
    tcts = [o for o in objects if o["kind"] == "TalosConfigTemplate"]
    tct = next(t for t in tcts if pool is None or t["metadata"]["name"].endswith(f"-{pool}"))
    config: dict[str, Any] = yaml.safe_load(tct["spec"]["template"]["spec"]["data"])
    return config


@pytest.mark.parametrize(
    ("cpu", "cores"), [("1500m", 2), ("1", 1), ("2", 2), ("2001m", 3), ("100m", 1), (4, 4)]
)
def test_cores_round_up(cpu: str, cores: int) -> None:
    assert num_cores(cpu) == cores


@pytest.mark.parametrize(("memory", "mib"), [("8G", 7630), ("8Gi", 8192), ("1Mi", 1), ("1M", 1), ("1500Mi", 1500)])
def test_memory_rounds_up_to_mib(memory: str, mib: int) -> None:
    assert memory_mib(memory) == mib


def test_proxmox_sizing_is_pinned_with_values_where_rounding_disagrees(proxmox_docs: Docs) -> None:
    # 8G = 8e9 bytes = 7629.39 MiB: ceil gives 7630, floor 7629; capmox then wants a multiple of 8.
    assert (num_cores("1500m"), memory_mib("8G")) == (2, 7630)
    spec = machine_spec(render(proxmox_docs))
    assert (spec["numCores"], spec["memoryMiB"]) == (2, 7632)


@pytest.mark.parametrize(("memory", "mib"), [("8G", 7632), ("8Gi", 8192), ("1Mi", 8), ("1001Mi", 1008)])
def test_capmox_memory_is_a_multiple_of_eight_rounded_up(memory: str, mib: int) -> None:
    assert capmox_memory_mib(memory) == mib


def test_linked_clone_by_default_and_always_explicit(proxmox_docs: Docs) -> None:
    ppx = doc(proxmox_docs, "NodePool")["spec"]["proxmox"]
    ppx.pop("full")
    spec = machine_spec(render(proxmox_docs))
    assert spec["full"] is False
    assert "storage" not in spec and "format" not in spec


def test_full_clone_passes_storage_and_format_through(proxmox_docs: Docs) -> None:
    doc(proxmox_docs, "NodePool")["spec"]["proxmox"].update(full=True, storage="local-zfs", format="raw")
    spec = machine_spec(render(proxmox_docs))
    assert (spec["full"], spec["storage"], spec["format"]) == (True, "local-zfs", "raw")


def test_template_tags_are_sorted_and_deduplicated_with_the_talos_version_added(proxmox_docs: Docs) -> None:
    doc(proxmox_docs, "NodePool")["spec"]["proxmox"]["templateTags"] = ["zfs", "talos", "zfs", "base"]
    assert machine_spec(render(proxmox_docs))["templateSelector"] == {
        "matchTags": ["base", "talos", "talos-v1.13.6", "zfs"]}


def test_a_talos_upgrade_selects_the_template_of_the_new_version_and_renames_the_machine_template(
    proxmox_docs: Docs,
) -> None:
    """Talos lives on the cloned disk: a version change must select another template, which rolls the pool."""
    before = one(render(proxmox_docs), "ProxmoxMachineTemplate")
    doc(proxmox_docs, "TenantCluster")["spec"]["talos"]["version"] = "v1.13.7"
    after = one(render(proxmox_docs), "ProxmoxMachineTemplate")
    assert after["spec"]["template"]["spec"]["templateSelector"] == {"matchTags": ["talos", "talos-v1.13.7"]}
    assert after["metadata"]["name"] != before["metadata"]["name"]


def test_template_id_selects_by_id(proxmox_docs: Docs) -> None:
    ppx = doc(proxmox_docs, "NodePool")["spec"]["proxmox"]
    ppx.pop("templateTags")
    ppx["templateID"] = 9000
    spec = machine_spec(render(proxmox_docs))
    assert spec["templateID"] == 9000 and "templateSelector" not in spec


def test_talos_checks_are_skipped(proxmox_docs: Docs) -> None:
    assert machine_spec(render(proxmox_docs))["checks"] == {"skipQemuGuestAgent": True, "skipCloudInitStatus": True}


def test_pool_and_network_reach_the_template(proxmox_docs: Docs) -> None:
    spec = machine_spec(render(proxmox_docs))
    assert spec["pool"] == "tenant-acme"
    assert spec["network"] == {"default": {"bridge": "vmbr0", "model": "virtio", "vlan": 100}}
    doc(proxmox_docs, "NodePool")["spec"]["proxmox"].pop("pool")
    assert "pool" not in machine_spec(render(proxmox_docs))


def test_proxmox_cluster_is_externally_managed_without_the_managed_by_annotation(proxmox_docs: Docs) -> None:
    pc = one(render(proxmox_docs), "ProxmoxCluster")
    assert pc["spec"]["externalManagedControlPlane"] is True
    assert "cluster.x-k8s.io/managed-by" not in pc["metadata"].get("annotations", {})
    assert pc["spec"]["credentialsRef"] == {"name": "capmox-acme", "namespace": "tenant-acme"}
    assert pc["spec"]["dnsServers"] == ["192.0.2.53", "2001:db8::53"]


def test_kubevirt_cluster_carries_the_managed_by_annotation(kubevirt_docs: Docs) -> None:
    kc = one(render(kubevirt_docs), "KubevirtCluster")
    assert kc["metadata"]["annotations"] == {"cluster.x-k8s.io/managed-by": "kamaji"}


@pytest.mark.parametrize(
    ("example", "service_type"), [("proxmox.yaml", "LoadBalancer"), ("kubevirt.yaml", "ClusterIP")]
)
def test_apiserver_service_type(example: str, service_type: str) -> None:
    kcp = one(render(load_example(example)), "KamajiControlPlane")
    assert kcp["spec"]["network"]["serviceType"] == service_type


def test_minor_resolves_to_patch_and_full_patch_is_kept(proxmox_docs: Docs) -> None:
    assert one(render(proxmox_docs), "KamajiControlPlane")["spec"]["version"] == "v1.33.13"
    doc(proxmox_docs, "TenantCluster")["spec"]["version"] = "v1.33.2"
    objs = render(proxmox_docs)
    assert one(objs, "KamajiControlPlane")["spec"]["version"] == "v1.33.2"
    assert one(objs, "MachineDeployment")["spec"]["template"]["spec"]["version"] == "v1.33.2"


def test_talos_config_only_with_observed_inputs(proxmox_docs: Docs) -> None:
    assert not [o for o in render(proxmox_docs) if o["kind"] == "TalosConfigTemplate"]
    assert [o for o in render(proxmox_docs, "observed-proxmox.yaml") if o["kind"] == "TalosConfigTemplate"]


def test_proxmox_worker_uses_lb_endpoint_own_dns_and_external_cloud_provider(proxmox_docs: Docs) -> None:
    config = worker_config(render(proxmox_docs, "observed-proxmox.yaml"))
    assert config["cluster"]["controlPlane"]["endpoint"] == "https://192.0.2.10:6443"
    assert config["machine"]["network"] == {"nameservers": ["192.0.2.53", "2001:db8::53"]}
    assert config["machine"]["kubelet"]["extraArgs"] == {"cloud-provider": "external"}
    assert "10.95.0.0/16" in config["cluster"]["network"]["serviceSubnets"]
    kcp = one(render(proxmox_docs, "observed-proxmox.yaml"), "KamajiControlPlane")
    assert "192.0.2.10" in kcp["spec"]["network"]["certSANs"]


def test_kubevirt_worker_uses_service_name_and_management_dns(kubevirt_docs: Docs) -> None:
    config = worker_config(render(kubevirt_docs, "observed-kubevirt.yaml"))
    assert config["cluster"]["controlPlane"]["endpoint"] == "https://demo.tenant-demo.svc:6443"
    assert config["machine"]["network"]["nameservers"] == ["10.96.0.10"]
    assert config["machine"]["network"]["extraHostEntries"][0]["ip"] == "10.96.12.34"
    assert "extraArgs" not in config["machine"]["kubelet"]


def test_kubevirt_observation_without_cluster_dns_is_refused(kubevirt_docs: Docs) -> None:
    from tenantctl.problems import InvalidInput

    observed = load_example("observed-kubevirt.yaml")
    observed[0].pop("clusterDNS")
    with pytest.raises(InvalidInput, match=r"ObservedState/demo.clusterDNS: required on kubevirt"):
        render_tenant(parse_tenant_documents(kubevirt_docs), parse_observed(observed))


def test_ipv6_lb_endpoint_is_bracketed(proxmox_docs: Docs) -> None:
    observed = load_example("observed-proxmox.yaml")
    observed[0]["endpoint"] = "2001:db8::10"
    objs = render_tenant(parse_tenant_documents(proxmox_docs), parse_observed(observed))
    assert worker_config(objs)["cluster"]["controlPlane"]["endpoint"] == "https://[2001:db8::10]:6443"


def test_kubevirt_sizing_uses_instancetype_unless_cpu_and_memory(kubevirt_docs: Docs) -> None:
    templates = {o["metadata"]["labels"]["tenantctl.io/nodepool"]: o for o in render(kubevirt_docs)
                 if o["kind"] == "KubevirtMachineTemplate"}
    small = templates["md0"]["spec"]["template"]["spec"]["virtualMachineTemplate"]["spec"]
    big = templates["big"]["spec"]["template"]["spec"]["virtualMachineTemplate"]["spec"]
    assert small["instancetype"] == {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"}
    assert "instancetype" not in big
    assert big["template"]["spec"]["domain"]["cpu"]["cores"] == 4
    assert big["template"]["spec"]["domain"]["memory"] == {"guest": "16Gi"}


def test_kubevirt_disk_is_the_openstack_factory_image(kubevirt_docs: Docs) -> None:
    kmt = next(o for o in render(kubevirt_docs) if o["kind"] == "KubevirtMachineTemplate")
    dv = kmt["spec"]["template"]["spec"]["virtualMachineTemplate"]["spec"]["dataVolumeTemplates"][0]
    assert dv["spec"]["source"]["http"]["url"].endswith("/v1.13.6/openstack-amd64.raw.xz")
    assert dv["spec"]["storage"]["resources"]["requests"]["storage"] == "20Gi"
    assert kmt["spec"]["template"]["spec"]["virtualMachineBootstrapCheck"] == {"checkStrategy": "none"}


def test_autoscaled_pool_has_annotations_and_no_replicas(kubevirt_docs: Docs) -> None:
    mds = {o["metadata"]["name"]: o for o in render(kubevirt_docs) if o["kind"] == "MachineDeployment"}
    auto, fixed = mds["demo-md0"], mds["demo-big"]
    assert "replicas" not in auto["spec"]
    assert auto["metadata"]["annotations"]["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] == "1"
    assert auto["metadata"]["annotations"]["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"] == "4"
    assert fixed["spec"]["replicas"] == 1
    assert fixed["metadata"]["annotations"] == {"tenantctl.io/talos-version": "v1.13.6"}, "no autoscaler keys"


def test_default_replicas_is_two(proxmox_docs: Docs) -> None:
    doc(proxmox_docs, "NodePool")["spec"].pop("replicas")
    assert one(render(proxmox_docs), "MachineDeployment")["spec"]["replicas"] == 2


def test_health_check_defaults(proxmox_docs: Docs) -> None:
    mhc = one(render(proxmox_docs), "MachineHealthCheck")["spec"]
    assert mhc["maxUnhealthy"] == "50%"
    assert mhc["nodeStartupTimeout"] == "20m0s"
    assert mhc["unhealthyConditions"] == [
        {"type": "Ready", "status": "Unknown", "timeout": "5m0s"},
        {"type": "Ready", "status": "False", "timeout": "10m0s"},
    ]


def test_machine_template_name_follows_its_content(proxmox_docs: Docs) -> None:
    before = one(render(proxmox_docs), "ProxmoxMachineTemplate")["metadata"]["name"]
    changed = clone(proxmox_docs)
    doc(changed, "NodePool")["spec"]["proxmox"]["diskSizeGB"] = 40
    after = one(render(changed), "ProxmoxMachineTemplate")["metadata"]["name"]
    assert before.startswith("acme-md0-") and after.startswith("acme-md0-") and before != after
    md = one(render(changed), "MachineDeployment")
    assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == after


def test_kubelet_reservations_clamp() -> None:
    from tenantctl.spec import NodePool

    def pool(**res: Any) -> NodePool:
        return NodePool.model_validate({
            "apiVersion": "tenantctl.io/v1alpha1", "kind": "NodePool",
            "metadata": {"name": "p", "namespace": "n"}, "spec": {"cluster": "c", "resources": res},
        })

    assert kubelet_reservations(pool()).system_memory == "256Mi"
    assert kubelet_reservations(pool(memory="8Gi")).system_memory == "409Mi"
    assert kubelet_reservations(pool(memory="64Gi")).system_memory == "1024Mi"
    assert kubelet_reservations(pool(cpu="4")).kube_cpu == "200m"
    assert kubelet_reservations(pool(cpu="100")).kube_cpu == "500m"


def test_render_is_deterministic(proxmox_docs: Docs) -> None:
    from tenantctl.documents import dump_objects

    first = dump_objects(render(clone(proxmox_docs), "observed-proxmox.yaml"))
    second = dump_objects(render(clone(proxmox_docs), "observed-proxmox.yaml"))
    assert first == second


def test_cluster_scoped_objects_name_their_tenant_namespace(kubevirt_docs: Docs) -> None:
    scoped = [o for o in render(kubevirt_docs) if "namespace" not in o["metadata"] and o["kind"].startswith("Cluster")]
    assert scoped, "the kubevirt CSI controller has cluster-scoped RBAC"
    for obj in scoped:
        assert obj["metadata"]["labels"]["tenantctl.io/namespace"] == "tenant-demo"


def test_a_cluster_scoped_object_without_its_tenant_namespace_is_a_bug() -> None:
    from tenantctl.render.meta import object_meta

    with pytest.raises(ValueError, match="needs owner_namespace"):
        object_meta("x", None, "demo")
