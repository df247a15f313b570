"""Refusals that need more than a field's type: cross-field rules, substrate needs, capacity.

Every check appends to one `Problems` so a user sees all of them in a single run. Paths are the
user's own (`NodePool/md0.spec.proxmox.storage`), and each message names the values involved.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from decimal import Decimal

from tenantctl.problems import Problems
from tenantctl.redaction import has_userinfo
from tenantctl.spec import syntax
from tenantctl.spec.addons import INGRESS_NODE_LABEL, check_addons
from tenantctl.spec.address_pools import check_address_pool, check_device_capacity, pool_usable
from tenantctl.spec.addresses import is_literal_ip, literal_ipv4, network, parse_address_entry
from tenantctl.spec.audit import check_audit
from tenantctl.spec.authentication import check_authentication
from tenantctl.spec.autoscaling import check_autoscaling
from tenantctl.spec.backup import check_backup, check_restore
from tenantctl.spec.control_plane_checks import check_control_plane
from tenantctl.spec.deprecations import TALOS_VERSION_TAG, deprecation_message, version_tag
from tenantctl.spec.durations import DurationError, parse_go_duration
from tenantctl.spec.errors import shown
from tenantctl.spec.exposure import check_expose
from tenantctl.spec.image_refs import endpoint_problem, registry_host_problem, repository_problem
from tenantctl.spec.labels import TAINT_EFFECTS, label_key_problem, label_value_problem, reserved_domain
from tenantctl.spec.names import LABEL_MAX, is_dns_label, is_dns_subdomain, is_host_name, machine_name_length
from tenantctl.spec.nodepool import NodePool
from tenantctl.spec.observed import ObservedState
from tenantctl.spec.patch_policy import check_patch_upgrades
from tenantctl.spec.patterns import (
    KUBE_VERSION,
    PVE_TAG,
    SCHEMATIC_ID,
    TALOS_VERSION,
    full_match,
)
from tenantctl.spec.placement import at_once_text, machines_at_once
from tenantctl.spec.pool_placement import check_node_list, check_pool_placement
from tenantctl.spec.quantity import QuantityError, parse_quantity, positive_quantity
from tenantctl.spec.storage import check_storage_class_names, check_storage_classes
from tenantctl.spec.tenant import SUBSTRATES, ProxmoxClusterSpec, TenantCluster
from tenantctl.spec.versions import KUBERNETES_PATCHES, TALOS_KUBERNETES_WINDOW, minor_key, minor_of
from tenantctl.spec.worker_network import check_worker_network

__all__ = [
    "check_gpu_operator",
    "check_ingress_pools",
    "check_ip_capacity",
    "check_node_pool",
    "check_observed_state",
    "check_tenant_cluster",
    "pool_addresses",
    "ref",
]

_PERCENT = re.compile(r"[0-9]+%")
_PVE_TAG = re.compile(syntax.PVE_TAG)
# An extended resource name as KubeVirt's permittedHostDevices names a GPU: `<vendor domain>/<name>`.
_DEVICE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def ref(kind: str, name: str) -> str:
    """`Kind/name`; a name a terminal would not show as typed (a newline, 1 MB) is quoted and cut."""
    return f"{kind}/{name}" if name.isprintable() and len(name) <= 80 else f"{kind}/{shown(name)}"


def check_tenant_cluster(tc: TenantCluster, problems: Problems) -> None:
    at = ref("TenantCluster", tc.metadata.name)
    spec = tc.spec
    _check_meta_name(at, tc.metadata.name, tc.metadata.namespace, problems)
    if spec.substrate not in SUBSTRATES:
        problems.error(
            f"{at}.spec.substrate",
            f"{spec.substrate!r} is not a substrate; expected one of {', '.join(SUBSTRATES)}",
        )
    _check_versions(at, tc, problems)
    check_patch_upgrades(f"{at}.spec.patchUpgrades", spec.patch_upgrades, problems)
    check_backup(f"{at}.spec.backup", spec.backup, problems)
    check_restore(f"{at}.spec.restore", tc.metadata.name, tc.metadata.namespace, spec.restore, spec.backup, problems)
    _check_talos_images(at, tc, problems)
    _check_network(at, tc, problems)
    check_control_plane(at, spec.control_plane, problems)
    api_server = spec.control_plane.api_server
    minor = ".".join(spec.version.split(".")[:2]) if full_match(KUBE_VERSION, spec.version) else None
    check_authentication(f"{at}.spec.controlPlane.apiServer.authentication", api_server.authentication, minor,
                         spec.network.cluster_domain, api_server.extra_args, problems)
    check_audit(f"{at}.spec.controlPlane.apiServer.audit", api_server.audit, api_server.extra_args, problems)
    check_expose(at, spec.expose, spec.substrate, problems)
    if spec.substrate == "proxmox":
        if spec.os_image is not None:
            problems.error(
                f"{at}.spec.osImage",
                f"{spec.os_image!r} is refused on substrate proxmox: the worker disk comes from the Proxmox "
                "template, so only half of it could be honoured; spec.talos.version and "
                "spec.talos.schematicID are what set the installer image there",
            )
        _check_proxmox_cluster(at, spec.proxmox, problems)
        # Ignored on proxmox, but the CRD judges it (found by the real API server refusing what we admitted).
        check_storage_class_names(f"{at}.spec.kubevirt.storageClasses", spec.kubevirt.storage_classes, problems)
        check_worker_network(at, tc, problems)
        if spec.addons.gpu_operator.enabled:
            problems.error(
                f"{at}.spec.addons.gpuOperator.enabled",
                "refused on substrate proxmox: tenantctl passes GPUs only into kubevirt workers (spec.kubevirt.gpus)",
            )
    else:
        if spec.proxmox is not None:
            problems.warn(f"{at}.spec.proxmox", f"ignored: the cluster's substrate is {spec.substrate!r}")
        check_storage_classes(f"{at}.spec.kubevirt.storageClasses", spec.kubevirt.storage_classes, problems)
    check_addons(at, spec.addons, problems)


def _check_meta_name(at: str, name: str, namespace: str, problems: Problems) -> None:
    if not is_dns_label(name):
        problems.error(f"{at}.metadata.name", f"{name!r} must be a DNS label (lower-case a-z, 0-9, '-'; ≤63)")
    if not is_dns_label(namespace):
        problems.error(f"{at}.metadata.namespace", f"{namespace!r} must be a DNS label")


def _check_versions(at: str, tc: TenantCluster, problems: Problems) -> None:
    version, talos = tc.spec.version, tc.spec.talos.version
    k8s_minor: str | None = None
    if not full_match(KUBE_VERSION, version):
        problems.error(f"{at}.spec.version", f"{version!r} is not a Kubernetes version like v1.33 or v1.33.4")
    else:
        k8s_minor = ".".join(version.split(".")[:2])
        if k8s_minor not in KUBERNETES_PATCHES:
            known = ", ".join(KUBERNETES_PATCHES)
            problems.error(f"{at}.spec.version", f"unknown Kubernetes minor {k8s_minor!r} (known: {known})")
            k8s_minor = None
    if not full_match(TALOS_VERSION, talos):
        problems.error(f"{at}.spec.talos.version", f"{talos!r} is not a Talos version like v1.13.6")
        return
    talos_minor = ".".join(talos.split(".")[:2])
    window = TALOS_KUBERNETES_WINDOW.get(talos_minor)
    if window is None:
        known = ", ".join(TALOS_KUBERNETES_WINDOW)
        problems.error(f"{at}.spec.talos.version", f"unknown Talos minor {talos_minor!r} (known: {known})")
        return
    if k8s_minor is not None and not (
        minor_key(window[0]) <= minor_key(k8s_minor) <= minor_key(window[1])
    ):
        problems.error(
            f"{at}.spec.version",
            f"Kubernetes {k8s_minor} is outside the support window of Talos {talos_minor} "
            f"({window[0]}…{window[1]}; spec.talos.version is {talos!r})",
        )
    if not full_match(SCHEMATIC_ID, tc.spec.talos.schematic_id):
        problems.error(
            f"{at}.spec.talos.schematicID",
            f"{tc.spec.talos.schematic_id!r} is not an Image Factory schematic ID (64 lower-case hex)",
        )


def _check_talos_images(at: str, tc: TenantCluster, problems: Problems) -> None:
    """Both values land in the worker config the machines boot from: a bad one is a node that never joins."""
    talos = tc.spec.talos
    factory = talos.image_factory_url
    if has_userinfo(factory):
        # The URL is rendered into the tenant's KubeVirt disk sources, readable by whoever reads them.
        problems.error(f"{at}.spec.talos.imageFactoryURL", f"{factory!r} carries a user name or password: a "
                       "credential in the URL reaches every DataVolume that pulls a disk; serve the factory "
                       "without one (or through a mirror that needs none)")
    elif factory.startswith("http://"):
        problems.warn(f"{at}.spec.talos.imageFactoryURL", f"{factory!r} is plain HTTP: the disks the workers "
                      "boot from can be replaced on the path")
    if msg := repository_problem(talos.installer_repository.rstrip("/")):
        problems.error(f"{at}.spec.talos.installerRepository", msg)
    for host, mirror in talos.registry_mirrors.items():
        where = f"{at}.spec.talos.registryMirrors.{host}"
        if msg := registry_host_problem(host):
            problems.error(where, msg)
        if not mirror.endpoints:
            problems.error(f"{where}.endpoints", "at least one endpoint: Talos has nowhere to pull from otherwise")
        for i, endpoint in enumerate(mirror.endpoints):
            if msg := endpoint_problem(endpoint):
                problems.error(f"{where}.endpoints[{i}]", msg)


def _check_network(at: str, tc: TenantCluster, problems: Problems) -> None:
    nets: dict[str, ipaddress.IPv4Network | ipaddress.IPv6Network] = {}
    for field, value in (("podCIDR", tc.spec.network.pod_cidr), ("serviceCIDR", tc.spec.network.service_cidr)):
        try:
            nets[field] = network(value, strict=True)
        except ValueError as exc:
            problems.error(f"{at}.spec.network.{field}", f"{value!r} is not a network CIDR: {exc}")
    if len(nets) == 2 and nets["podCIDR"].overlaps(nets["serviceCIDR"]):
        problems.error(
            f"{at}.spec.network",
            f"podCIDR {tc.spec.network.pod_cidr} and serviceCIDR {tc.spec.network.service_cidr} overlap",
        )
    domain = tc.spec.network.cluster_domain
    if not is_dns_subdomain(domain):
        problems.error(
            f"{at}.spec.network.clusterDomain",
            f"{shown(domain)} is not a DNS domain (lower-case labels of a-z, 0-9, '-' joined by '.'; ≤253)",
        )
    service = nets.get("serviceCIDR")
    if service is not None and service.num_addresses < 16:
        problems.error(
            f"{at}.spec.network.serviceCIDR",
            f"{tc.spec.network.service_cidr} is too small: the cluster DNS takes its 10th address",
        )


def _check_proxmox_cluster(at: str, px: ProxmoxClusterSpec | None, problems: Problems) -> None:
    base = f"{at}.spec.proxmox"
    if px is None:
        problems.error(
            base,
            "required on substrate proxmox (credentialsSecretName, allowedNodes, dnsServers, ipv4Config)",
        )
        return
    if not px.allowed_nodes:
        problems.error(f"{base}.allowedNodes", "required on substrate proxmox: at least one Proxmox node")
    check_node_list(f"{base}.allowedNodes", px.allowed_nodes, problems)
    if not px.dns_servers:
        problems.error(
            f"{base}.dnsServers",
            "required on substrate proxmox: a Proxmox worker cannot reach the management cluster's DNS",
        )
    for i, server in enumerate(px.dns_servers):
        if not is_literal_ip(server):
            problems.error(f"{base}.dnsServers[{i}]", f"{server!r} is not a literal IPv4 or IPv6 address")
    if px.ipv4_config is None:
        problems.error(f"{base}.ipv4Config", "required on substrate proxmox: capmox has no DHCP mode")
    else:
        _check_ipv4_config(f"{base}.ipv4Config", px, problems)
    if px.ipv6_config is not None:
        v6 = px.ipv6_config
        check_address_pool(f"{base}.ipv6Config", v6.addresses, v6.prefix, v6.gateway, 6, problems)
    _check_credential_names(base, px, problems)
    if px.csi.enabled:
        check_storage_classes(f"{base}.csi.storageClasses", px.csi.storage_classes, problems)


def _check_credential_names(base: str, px: ProxmoxClusterSpec, problems: Problems) -> None:
    """Each controller names its own Secret (different blast radii); a name must be a Secret name."""
    names: tuple[tuple[str, str | None, bool, str], ...] = (
        ("credentialsSecretName", px.credentials_secret_name, True, "required on substrate proxmox (capmox)"),
        (
            "ccm.credentialsSecretName",
            px.ccm.credentials_secret_name,
            True,
            "required on substrate proxmox: without the cloud-controller-manager every node keeps the "
            "uninitialized taint and nothing schedules",
        ),
        (
            "csi.credentialsSecretName",
            px.csi.credentials_secret_name,
            px.csi.enabled,
            "required while spec.proxmox.csi.enabled is true (set enabled: false to run without storage)",
        ),
    )
    for field, value, required, missing in names:
        if not value:
            if required:
                problems.error(f"{base}.{field}", missing)
        elif not is_dns_subdomain(value):
            problems.error(f"{base}.{field}", f"{value!r} is not a valid Secret name")


def _check_ipv4_config(base: str, px: ProxmoxClusterSpec, problems: Problems) -> None:
    cfg = px.ipv4_config
    assert cfg is not None
    prefix_ok = 0 <= cfg.prefix <= 32
    if not prefix_ok:
        problems.error(f"{base}.prefix", f"{cfg.prefix} is outside 0–32")
    gateway = literal_ipv4(cfg.gateway)
    if gateway is None:
        problems.error(f"{base}.gateway", f"{cfg.gateway!r} is not an IPv4 address")
    if not cfg.addresses:
        problems.error(f"{base}.addresses", "at least one address, CIDR or a-b range is required")
    for i, entry in enumerate(cfg.addresses):
        try:
            parsed = parse_address_entry(entry)
        except ValueError as exc:
            problems.error(f"{base}.addresses[{i}]", str(exc))
            continue
        if gateway is not None and prefix_ok:
            subnet = network(f"{gateway}/{cfg.prefix}", strict=False)
            if parsed.first not in subnet or parsed.last not in subnet:
                problems.error(
                    f"{base}.gateway",
                    f"gateway {cfg.gateway} is outside the /{cfg.prefix} of addresses[{i}] {entry!r} "
                    f"(the gateway's subnet is {subnet})",
                )


def pool_addresses(px: ProxmoxClusterSpec, version: int = 4) -> int | None:
    """Addresses the cluster's pool of one family can hand out, or None when its config does not parse."""
    cfg = dict(px.address_configs).get(version)
    if cfg is None or not is_literal_ip(cfg.gateway):  # the gateway is required here, unlike a NIC pool's
        return None
    return pool_usable(cfg.addresses, cfg.prefix, cfg.gateway, version)


def check_ip_capacity(tc: TenantCluster, pools: Sequence[NodePool], problems: Problems) -> None:
    """CAIP claims hang silently when the pool runs dry: refuse a spec that can ask for more than it has.
    Dual-stack: every machine claims one address of each family, so each family's pool must cover them."""
    if tc.spec.substrate != "proxmox" or tc.spec.proxmox is None:
        return
    need = sum(machines_at_once(p, tc) for p in pools)
    for version, _ in tc.spec.proxmox.address_configs:
        have = pool_addresses(tc.spec.proxmox, version)
        if have is None or need <= have:
            continue
        detail = ", ".join(f"{p.metadata.name}: {at_once_text(p, tc)}" for p in pools)
        problems.error(
            f"{ref('TenantCluster', tc.metadata.name)}.spec.proxmox.ipv{version}Config.addresses",
            f"{have} usable addresses, but the node pools can claim {need} at once "
            f"(max replicas + rolling-update surge: {detail}); IPAM claims beyond the pool hang silently",
        )


def check_node_pool(
    pool: NodePool, cluster: TenantCluster | None, problems: Problems, *, cluster_refused: bool = False
) -> None:
    """`cluster_refused`: the input holds the pool's cluster, refused already (said once, not per pool)."""
    at = ref("NodePool", pool.metadata.name)
    spec = pool.spec
    _check_meta_name(at, pool.metadata.name, pool.metadata.namespace, problems)
    if cluster is None and not cluster_refused:
        problems.error(
            f"{at}.spec.cluster",
            f"no TenantCluster {spec.cluster!r} in namespace {pool.metadata.namespace!r} in the input",
        )
    elif cluster is not None:
        length = machine_name_length(cluster.metadata.name, pool.metadata.name)
        if length > LABEL_MAX:
            problems.error(
                f"{at}.metadata.name",
                f"cluster {cluster.metadata.name!r} + pool {pool.metadata.name!r} give Machine names of "
                f"{length} characters (<cluster>-<pool>-xxxxx-xxxxx), over the {LABEL_MAX}-character label limit",
            )
    _check_replicas(at, pool, problems)
    check_autoscaling(at, spec.autoscaling, spec.autoscaled, problems)
    _check_resources(at, pool, problems)
    substrate = cluster.spec.substrate if cluster is not None else None
    if substrate == "proxmox":
        assert cluster is not None
        _check_proxmox_pool(at, pool, cluster.spec.talos.version, problems)
        check_pool_placement(at, pool, cluster, problems)
        check_device_capacity(cluster, pool, problems)
        if spec.resources.cpu is None and spec.resources.memory is None:
            problems.error(
                f"{at}.spec.resources",
                "a proxmox pool needs resources.cpu and/or resources.memory to size its VMs (numCores, memoryMiB)",
            )
        if spec.kubevirt.gpus:
            problems.error(
                f"{at}.spec.kubevirt.gpus",
                f"{len(spec.kubevirt.gpus)} GPU(s) refused on substrate proxmox: tenantctl passes GPUs only "
                "into kubevirt worker VMs",
            )
    elif substrate == "kubevirt":
        _check_kubevirt_pool(at, pool, problems)
        _check_gpus(at, pool, problems)
        if spec.proxmox is not None:
            problems.warn(f"{at}.spec.proxmox", "ignored: the pool's cluster runs on substrate 'kubevirt'")
        if (spec.resources.cpu is None) != (spec.resources.memory is None):
            given = "cpu" if spec.resources.cpu is not None else "memory"
            problems.error(
                f"{at}.spec.resources",
                f"on kubevirt give cpu and memory together or neither (only {given} is set); "
                "without both the instanceType sizes the VM",
            )
    _check_health(at, pool, problems)
    _check_labels(at, pool, problems)
    _check_taints(at, pool, problems)


def _check_kubevirt_pool(at: str, pool: NodePool, problems: Problems) -> None:
    """The DataVolume and the VM template copy these verbatim."""
    kv = pool.spec.kubevirt
    try:
        size = parse_quantity(kv.disk_size)
    except QuantityError as exc:
        problems.error(f"{at}.spec.kubevirt.diskSize", str(exc))
    else:
        if size <= 0:
            problems.error(f"{at}.spec.kubevirt.diskSize", f"{shown(kv.disk_size)} must be a positive size")
    for field, value in (("instanceType", kv.instance_type), ("storageClass", kv.storage_class)):
        if not is_dns_subdomain(value):
            problems.error(f"{at}.spec.kubevirt.{field}", f"{shown(value)} is not a valid object name")


def check_observed_state(observed: ObservedState, problems: Problems) -> None:
    """Observations reach Secret names, host entries and search domains verbatim: check them as the spec."""
    at = ref("ObservedState", observed.metadata.name)
    _check_meta_name(at, observed.metadata.name, observed.metadata.namespace, problems)
    if not (is_literal_ip(observed.endpoint) or is_host_name(observed.endpoint)):
        problems.error(f"{at}.endpoint", f"{shown(observed.endpoint)} is neither a literal IP nor a DNS name "
                                         "(a name of digits and dots only is a mistyped address)")
    if observed.cluster_dns is not None and not is_literal_ip(observed.cluster_dns):
        problems.error(f"{at}.clusterDNS", f"{shown(observed.cluster_dns)} is not a literal IP address")
    if not is_dns_subdomain(observed.management_cluster_domain):
        problems.error(
            f"{at}.managementClusterDomain", f"{shown(observed.management_cluster_domain)} is not a DNS domain"
        )


def _check_gpus(at: str, pool: NodePool, problems: Problems) -> None:
    seen: set[str] = set()
    for i, gpu in enumerate(pool.spec.kubevirt.gpus):
        base = f"{at}.spec.kubevirt.gpus[{i}]"
        if not is_dns_label(gpu.name):
            problems.error(f"{base}.name", f"{gpu.name!r} must be a DNS label (KubeVirt names devices so)")
        elif gpu.name in seen:
            problems.error(f"{base}.name", f"duplicate GPU name {gpu.name!r} in the pool")
        seen.add(gpu.name)
        if not _DEVICE_NAME.fullmatch(gpu.device_name) or len(gpu.device_name) > 253:
            problems.error(
                f"{base}.deviceName",
                f"{gpu.device_name!r} is not a host device resource name like nvidia.com/GA102GL_A10",
            )


def check_gpu_operator(tc: TenantCluster, pools: Sequence[NodePool], problems: Problems) -> None:
    """The operator installs DaemonSets for GPU nodes; a tenant without any pool that has GPUs gets none."""
    if tc.spec.addons.gpu_operator.enabled and not any(p.spec.kubevirt.gpus for p in pools):
        problems.warn(
            f"{ref('TenantCluster', tc.metadata.name)}.spec.addons.gpuOperator.enabled",
            "no NodePool of this cluster has spec.kubevirt.gpus: the GPU operator will find no GPU node",
        )


def check_ingress_pools(tc: TenantCluster, pools: Sequence[NodePool], problems: Problems) -> None:
    """The ingress controller is a DaemonSet selecting `INGRESS_NODE_LABEL: ""`; without such a pool it has no pod."""
    if not tc.spec.addons.ingress_nginx.enabled:
        return
    at = ref("TenantCluster", tc.metadata.name)
    for p in pools:
        value = p.spec.labels.get(INGRESS_NODE_LABEL)
        if value not in (None, ""):
            problems.warn(
                f"{ref('NodePool', p.metadata.name)}.spec.labels.{INGRESS_NODE_LABEL}",
                f"{value!r}: the ingress controller selects the value \"\" and will not run on this pool",
            )
    if not any(p.spec.labels.get(INGRESS_NODE_LABEL) == "" for p in pools):
        problems.warn(
            f"{at}.spec.addons.ingressNginx.enabled",
            f'no NodePool of this cluster has the label {INGRESS_NODE_LABEL}: "": the ingress controller runs nowhere',
        )


def _check_replicas(at: str, pool: NodePool, problems: Problems) -> None:
    spec = pool.spec
    if spec.autoscaled:
        if spec.replicas is not None:
            problems.error(
                f"{at}.spec.replicas",
                f"replicas ({spec.replicas}) and minReplicas/maxReplicas are exclusive: an autoscaled pool "
                "leaves replicas to the autoscaler",
            )
        if spec.min_replicas is None or spec.max_replicas is None:
            missing = "minReplicas" if spec.min_replicas is None else "maxReplicas"
            problems.error(f"{at}.spec.{missing}", "an autoscaled pool needs both minReplicas and maxReplicas")
        elif spec.min_replicas > spec.max_replicas:
            problems.error(
                f"{at}.spec.minReplicas",
                f"minReplicas ({spec.min_replicas}) is greater than maxReplicas ({spec.max_replicas})",
            )
    ru = spec.rolling_update
    if ru.max_surge == 0 and ru.max_unavailable == 0:
        problems.error(
            f"{at}.spec.rollingUpdate",
            "maxSurge and maxUnavailable cannot both be 0: a rollout could never make progress",
        )


# The largest VM either substrate can be asked for (QEMU's vCPU ceiling; 16 TiB of memory).
_RESOURCE_LIMITS: dict[str, tuple[Decimal, str]] = {
    "cpu": (Decimal(1024), "1024 cores"),
    "memory": (Decimal(16) * Decimal(2) ** 40, "16Ti"),
}


def _check_resources(at: str, pool: NodePool, problems: Problems) -> None:
    for field, raw in (("cpu", pool.spec.resources.cpu), ("memory", pool.spec.resources.memory)):
        if raw is None:
            continue
        parsed = positive_quantity(f"{at}.spec.resources.{field}", raw, problems)
        limit, shown = _RESOURCE_LIMITS[field]
        if parsed is not None and parsed > limit:
            problems.error(f"{at}.spec.resources.{field}", f"{raw!r} is more than a VM can be given ({shown})")


TALOS_TEMPLATE_TAG = "talos-"
"""The tag prefix tenantctl adds to a pool's templateTags: `talos-v1.13.6` selects that version's template."""
def _check_legacy_version_tag(at: str, tag: str, named: str, talos: str | None, problems: Problems) -> None:
    """A tag naming the Talos version is how templates were selected before `talos-<version>`: such a
    pool still renders as it did (its selector is its tags, as written), with a warning; but its
    selector cannot follow spec.talos.version, so a version it does not name is refused."""
    if talos is not None and named not in (talos, minor_of(talos)):
        problems.error(
            at,
            f"{tag!r} selects a Talos {named} template but spec.talos.version is {talos}: a selector that names "
            f"the version cannot follow an upgrade; {TALOS_VERSION_TAG.replacement} (this rolls the pool once)",
        )
        return
    problems.warn(at, deprecation_message(TALOS_VERSION_TAG, f"{tag!r} names the Talos version"))


def _check_proxmox_pool(at: str, pool: NodePool, talos: str | None, problems: Problems) -> None:
    px = pool.spec.proxmox
    base = f"{at}.spec.proxmox"
    if px is None:
        problems.error(base, "required: the pool's cluster runs on substrate 'proxmox' (sourceNode, template)")
        return
    if (px.template_tags is None) == (px.template_id is None):
        both = px.template_tags is not None
        problems.error(
            f"{base}.templateTags",
            (
                f"templateTags {px.template_tags} and templateID {px.template_id} are exclusive; give one"
                if both
                else "give exactly one of templateTags or templateID to select the Talos template"
            ),
        )
    if px.template_tags is not None:
        if not px.template_tags:
            problems.error(f"{base}.templateTags", "must not be empty")
        for i, tag in enumerate(px.template_tags):
            if not full_match(PVE_TAG, tag):
                problems.error(f"{base}.templateTags[{i}]", f"{tag!r} is not a Proxmox tag (a-z 0-9 _ - + .)")
            elif (named := version_tag(tag)) is not None:
                _check_legacy_version_tag(f"{base}.templateTags[{i}]", tag, named, talos, problems)
    elif px.template_id is not None:
        problems.warn(
            f"{base}.templateID",
            f"template {px.template_id} holds one Talos version on its disk: a spec.talos.version change never "
            f"reaches these workers; select by templateTags (plus {TALOS_TEMPLATE_TAG}<version> on each template) "
            "so an upgrade rolls them",
        )
    if not px.full:
        for field, value in (("storage", px.storage), ("format", px.format)):
            if value is not None:
                problems.error(
                    f"{base}.{field}",
                    f"{field} {value!r} needs full: true; with full: false (a linked clone) the disk lives "
                    "on the template's storage in the template's format",
                )
    for field, value in (("sourceNode", px.source_node), ("pool", px.pool), ("network.bridge", px.network.bridge)):
        if value is not None and not value.strip():
            problems.error(f"{base}.{field}", "must not be empty")


# CAPI's MachineHealthCheck webhook refuses a nodeStartupTimeout under 30s (0 would disable it).
_MIN_NODE_STARTUP_NANOS = 30 * 1_000_000_000


def _check_health(at: str, pool: NodePool, problems: Problems) -> None:
    hc = pool.spec.health_check
    base = f"{at}.spec.healthCheck"
    _check_max_unhealthy(f"{base}.maxUnhealthy", hc.max_unhealthy, problems)
    for field, value in (
        ("nodeStartupTimeout", hc.node_startup_timeout),
        ("readyUnknownTimeout", hc.ready_unknown_timeout),
        ("readyFalseTimeout", hc.ready_false_timeout),
    ):
        try:
            nanos = parse_go_duration(value)
        except DurationError as exc:
            problems.error(f"{base}.{field}", str(exc))
            continue
        if nanos <= 0:
            problems.error(
                f"{base}.{field}",
                f"{value!r} must be a positive duration: a new node reports Ready=False until its CNI runs, "
                "so a zero or negative timeout remediates (deletes) every new worker as it registers",
            )
        elif field == "nodeStartupTimeout" and nanos < _MIN_NODE_STARTUP_NANOS:
            problems.error(
                f"{base}.{field}",
                f"{value!r} is under 30s, which Cluster API's MachineHealthCheck webhook refuses",
            )


def _check_max_unhealthy(path: str, value: str | int, problems: Problems) -> None:
    """An int or `N%` (CAPI's IntOrString); a plain numeric string is taken as the int it spells."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            problems.error(path, f"{value!r} must not be negative")
        return
    text = str(value)
    if _PERCENT.fullmatch(text):
        if int(text[:-1]) > 100:
            problems.error(path, f"{text!r} is more than 100%")
    elif not text.isascii() or not text.isdigit():
        problems.error(path, f"{value!r} must be an integer or an integer percentage like 50%")


def _check_labels(at: str, pool: NodePool, problems: Problems) -> None:
    for key, value in pool.spec.labels.items():
        path = f"{at}.spec.labels[{key!r}]"
        _check_node_key(path, key, "label", problems)
        if (why := label_value_problem(value)) is not None:
            problems.error(path, f"value {value!r} {why}")


def _check_taints(at: str, pool: NodePool, problems: Problems) -> None:
    seen: dict[tuple[str, str], int] = {}
    for i, taint in enumerate(pool.spec.taints):
        path = f"{at}.spec.taints[{i}]"
        _check_node_key(f"{path}.key", taint.key, "taint", problems)
        if (why := label_value_problem(taint.value)) is not None:
            problems.error(f"{path}.value", f"{taint.value!r} {why}")
        if taint.effect not in TAINT_EFFECTS:
            problems.error(f"{path}.effect", f"{taint.effect!r} is not one of {', '.join(TAINT_EFFECTS)}")
        first = seen.setdefault((taint.key, taint.effect), i)
        if first != i:
            problems.error(
                path,
                f"duplicate taint {taint.key!r} with effect {taint.effect!r} (also taints[{first}]); "
                "a Node holds one taint per key and effect",
            )


def _check_node_key(path: str, key: str, what: str, problems: Problems) -> None:
    if (why := label_key_problem(key)) is not None:
        problems.error(path, f"{what} key {key!r} {why}")
    elif (domain := reserved_domain(key)) is not None:
        problems.error(
            path,
            f"{what} key {key!r} is in the reserved domain {domain!r}; of it only node-role.kubernetes.io/* "
            "and node-restriction.kubernetes.io/* may be set on a pool",
        )
