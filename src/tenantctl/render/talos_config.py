"""Per pool TalosConfigTemplate: the full worker machine config, once the runtime inputs exist.

CABPT makes the spec immutable, so this is only rendered when the endpoint address, both CAs and the
Talos secrets are known (the operator observes them; the CLI takes `--observed`). A changed config is
applied by the operator as delete + create.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from tenantctl.problems import Problems
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import Names, object_meta
from tenantctl.render.node_placement import kubelet_labels, node_taints
from tenantctl.render.sizing import eviction_config, kubelet_reservations
from tenantctl.render.substrates import Substrate
from tenantctl.render.versions import kubernetes_patch
from tenantctl.render.yaml_text import to_yaml
from tenantctl.spec import NodePool, ObservedState, TenantCluster
from tenantctl.spec.addresses import is_literal_ip

__all__ = [
    "CABPT_API",
    "check_observed",
    "render_talos_config_template",
    "worker_images",
    "worker_machine_config",
]

CABPT_API = "bootstrap.cluster.x-k8s.io/v1alpha3"


def check_observed(cluster: TenantCluster, observed: ObservedState, problems: Problems) -> None:
    """A runtime input the substrate needs but the observation lacks is a refusal, not a guess."""
    if cluster.spec.substrate == "kubevirt" and not observed.cluster_dns:
        problems.error(
            f"ObservedState/{observed.metadata.name}.clusterDNS",
            "required on kubevirt: workers resolve through the management cluster's DNS service",
        )
    if cluster.spec.substrate == "kubevirt" and not is_literal_ip(observed.endpoint):
        problems.error(
            f"ObservedState/{observed.metadata.name}.endpoint",
            f"{observed.endpoint!r} must be a literal IP on kubevirt: workers pin the apiserver name to it "
            "in their host entries",
        )


def _network(cluster: TenantCluster, observed: ObservedState) -> dict[str, Any]:
    names = Names(cluster)
    if cluster.spec.substrate == "proxmox":
        assert cluster.spec.proxmox is not None
        return {"nameservers": list(cluster.spec.proxmox.dns_servers)}
    domain = observed.management_cluster_domain
    search = [f"svc.{domain}", domain]
    return {
        "nameservers": [observed.cluster_dns],
        "searchDomains": search,
        "extraHostEntries": [{"ip": observed.endpoint, "aliases": names.apiserver_dns_names(observed)}],
    }


def _endpoint(cluster: TenantCluster, observed: ObservedState) -> str:
    """Proxmox: the LoadBalancer address itself; KubeVirt: the Service name, pinned by extraHostEntries."""
    if cluster.spec.substrate == "proxmox":
        host = observed.endpoint
        return f"https://[{host}]:6443" if ":" in host else f"https://{host}:6443"
    names = Names(cluster)
    return f"https://{names.apiserver_dns_names(observed)[0]}:6443"


def worker_images(cluster: TenantCluster, images: ImagesSpec) -> dict[str, str]:
    """What a worker pulls itself: the kubelet (tag = Kubernetes patch) and the Talos installer."""
    talos = cluster.spec.talos
    installer = f"{talos.installer_repository.rstrip('/')}/{talos.schematic_id}"
    return {
        "kubelet": str(images.ref("kubelet", kubernetes_patch(cluster))),
        "talos-installer": str(images.ref("talos-installer", talos.version, repository=installer)),
    }


def _node_ip_subnets(cluster: TenantCluster, pool: NodePool) -> list[str]:
    """A worker with further NICs must still register the default NIC's address: Talos otherwise picks
    any address of the pod network's family, a storage network's as soon as another. Only such pools get
    the key, so every other pool's TalosConfigTemplate stays byte for byte as it was."""
    px, ppx = cluster.spec.proxmox, pool.spec.proxmox
    if cluster.spec.substrate != "proxmox" or px is None or px.ipv4_config is None or ppx is None:
        return []
    if not ppx.network.additional_devices:
        return []
    cfg = px.ipv4_config
    return [str(ipaddress.IPv4Network(f"{cfg.gateway}/{cfg.prefix}", strict=False))]


def _registries(cluster: TenantCluster) -> dict[str, Any]:
    mirrors = cluster.spec.talos.registry_mirrors
    return {
        "mirrors": {
            host: mirror.model_dump(by_alias=True, exclude_defaults=True) for host, mirror in sorted(mirrors.items())
        }
    }


def worker_machine_config(
    cluster: TenantCluster, pool: NodePool, observed: ObservedState, substrate: Substrate, images: ImagesSpec
) -> dict[str, Any]:
    secrets = observed.talos_secrets
    reserved = kubelet_reservations(pool)
    pulled = worker_images(cluster, images)
    kubelet: dict[str, Any] = {
        "image": pulled["kubelet"],
        "extraConfig": {
            "systemReserved": {"cpu": reserved.system_cpu, "memory": reserved.system_memory},
            "kubeReserved": {"cpu": reserved.kube_cpu, "memory": reserved.kube_memory},
            **eviction_config(),
        },
    }
    if taints := node_taints(pool):
        kubelet["extraConfig"]["registerWithTaints"] = taints
    if substrate.external_cloud_provider:
        kubelet["extraArgs"] = {"cloud-provider": "external"}
    if subnets := _node_ip_subnets(cluster, pool):
        kubelet["nodeIP"] = {"validSubnets": subnets}
    machine: dict[str, Any] = {
        "type": "worker",
        "token": secrets.token,
        "ca": {"crt": observed.talos_ca, "key": ""},
        "network": _network(cluster, observed),
        "kubelet": kubelet,
        "install": {"disk": substrate.install_disk, "image": pulled["talos-installer"], "wipe": False},
        "features": {"rbac": True, "kubePrism": {"enabled": False}},
    }
    # Only a pool with labels gets the key: the others' TalosConfigTemplates stay as they were.
    if labels := kubelet_labels(pool):
        machine["nodeLabels"] = labels
    if cluster.spec.talos.registry_mirrors:
        machine["registries"] = _registries(cluster)
    return {
        "version": "v1alpha1",
        "persist": True,
        "machine": machine,
        "cluster": {
            "id": secrets.cluster_id,
            "secret": secrets.cluster_secret,
            "controlPlane": {"endpoint": _endpoint(cluster, observed)},
            "clusterName": cluster.metadata.name,
            "network": {
                "dnsDomain": cluster.spec.network.cluster_domain,
                "podSubnets": [cluster.spec.network.pod_cidr],
                "serviceSubnets": [cluster.spec.network.service_cidr],
            },
            "token": f"{secrets.bootstrap_token_id}.{secrets.bootstrap_token_secret}",
            "ca": {"crt": observed.kubernetes_ca, "key": ""},
            "discovery": {
                "enabled": True,
                "registries": {"kubernetes": {"disabled": True}, "service": {"disabled": True}},
            },
        },
    }


def render_talos_config_template(
    cluster: TenantCluster, pool: NodePool, observed: ObservedState, substrate: Substrate, images: ImagesSpec
) -> dict[str, Any]:
    names = Names(cluster)
    config = worker_machine_config(cluster, pool, observed, substrate, images)
    return {
        "apiVersion": CABPT_API,
        "kind": "TalosConfigTemplate",
        "metadata": object_meta(
            names.talos_config_template(pool), names.namespace, names.cluster, pool=pool.metadata.name
        ),
        "spec": {
            "template": {
                "spec": {
                    "generateType": "none",
                    "talosVersion": cluster.spec.talos.version,
                    "data": to_yaml(config),
                }
            }
        },
    }
