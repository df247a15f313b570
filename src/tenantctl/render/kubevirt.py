"""KubeVirt substrate: workers are VMs in the management cluster (CAPK)."""

from __future__ import annotations

from typing import Any

from tenantctl.render.meta import CAPI_CLUSTER_LABEL, Names, object_meta
from tenantctl.render.sizing import num_cores
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.placement import NodeGroup

__all__ = ["CAPK_API", "os_image_url", "render_kubevirt_cluster", "render_kubevirt_machine_template"]

CAPK_API = "infrastructure.cluster.x-k8s.io/v1alpha1"


def os_image_url(cluster: TenantCluster) -> str:
    """The worker disk image: the openstack flavour reads the config drive CAPK writes (nocloud ignores it)."""
    if cluster.spec.os_image:
        return cluster.spec.os_image
    talos = cluster.spec.talos
    factory = talos.image_factory_url.rstrip("/")
    return f"{factory}/image/{talos.schematic_id}/{talos.version}/openstack-amd64.raw.xz"


def render_kubevirt_cluster(cluster: TenantCluster) -> dict[str, Any]:
    """No spec: Kamaji owns the endpoint, which the managed-by annotation tells CAPK."""
    names = Names(cluster)
    return {
        "apiVersion": CAPK_API,
        "kind": "KubevirtCluster",
        "metadata": object_meta(
            names.cluster, names.namespace, names.cluster, annotations={"cluster.x-k8s.io/managed-by": "kamaji"}
        ),
        "spec": {},
    }


def _vm_template_spec(cluster: TenantCluster, pool: NodePool) -> dict[str, Any]:
    names = Names(cluster)
    kv = pool.spec.kubevirt
    res = pool.spec.resources
    sized = res.cpu is not None and res.memory is not None
    domain: dict[str, Any] = {
        "devices": {
            "disks": [
                {
                    "name": "system",
                    "disk": {"bus": "virtio"},
                    # 4Ki-native backends (LINSTOR/DRBD behind `replicated`) and SeaBIOS both boot 512/4096.
                    "blockSize": {"custom": {"logical": 512, "physical": 4096}},
                }
            ],
            "interfaces": [{"name": "default", "bridge": {}}],
        },
        # virt-launcher's scratch space, bounded (Cozystack 90e4aba4e); DataVolumes are not counted in it.
        "resources": {"requests": {"ephemeral-storage": "2Gi"}, "limits": {"ephemeral-storage": "2Gi"}},
    }
    if kv.gpus:
        # Only pools with GPUs carry the key: the template is named after its content, and a key new to
        # every pool would rename every template and roll every worker.
        domain["devices"]["gpus"] = [{"name": g.name, "deviceName": g.device_name} for g in kv.gpus]
    if res.cpu is not None and res.memory is not None:
        domain["cpu"] = {"threads": 1, "cores": num_cores(res.cpu), "sockets": 1}
        domain["memory"] = {"guest": str(res.memory)}
    spec: dict[str, Any] = {
        "runStrategy": "Always",
        "dataVolumeTemplates": [
            {
                "metadata": {
                    "name": "disk-system",
                    # The populator's prime PVC and PV rebind end in ClaimMisbound with LINSTOR CSI.
                    "annotations": {"cdi.kubevirt.io/storage.usePopulator": "false"},
                },
                "spec": {
                    "source": {"http": {"url": os_image_url(cluster)}},
                    "storage": {
                        "resources": {"requests": {"storage": kv.disk_size}},
                        "storageClassName": kv.storage_class,
                    },
                },
            }
        ],
        "template": {
            "metadata": {
                "labels": {
                    CAPI_CLUSTER_LABEL: names.cluster,
                    "cluster.x-k8s.io/deployment-name": names.machine_deployment(pool),
                }
            },
            "spec": {
                "domain": domain,
                "evictionStrategy": "External",
                "volumes": [{"name": "system", "dataVolume": {"name": "disk-system"}}],
                "networks": [{"name": "default", "pod": {}}],
            },
        },
    }
    if not sized:
        spec["instancetype"] = {"kind": "VirtualMachineClusterInstancetype", "name": kv.instance_type}
    return spec


def render_kubevirt_machine_template(cluster: TenantCluster, pool: NodePool, group: NodeGroup) -> dict[str, Any]:
    """Named after a hash of its spec: templates are immutable, a new spec is a new template. KubeVirt pools
    are never split (KubeVirt schedules the VMs), so `group` is the whole pool."""
    names = Names(cluster)
    spec = {
        "template": {
            "spec": {
                "virtualMachineBootstrapCheck": {"checkStrategy": "none"},
                "virtualMachineTemplate": {
                    "metadata": {"namespace": names.namespace},
                    "spec": _vm_template_spec(cluster, pool),
                },
            }
        }
    }
    name = names.machine_template(pool, spec)
    return {
        "apiVersion": CAPK_API,
        "kind": "KubevirtMachineTemplate",
        "metadata": object_meta(name, names.namespace, names.cluster, pool=pool.metadata.name),
        "spec": spec,
    }
