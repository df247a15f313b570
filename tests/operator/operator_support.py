"""Running the real kopf engine with our handlers against the emulators, and seeding what Kamaji writes."""

from __future__ import annotations

import ast
import asyncio
import base64
import contextlib
import copy
import functools
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import kopf
import yaml
from kube_emulator import KubeEmulator, declare

from tenantctl import MANAGED_BY
from tenantctl.operator.config.identity import OPERATOR, Subject
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import Connection, RetryPolicy
from tenantctl.operator.phases.rights import rights_binding
from tenantctl.operator.runtime.handlers import OperatorContext, build_registry
from tenantctl.render import Names, render_cluster
from tenantctl.spec import parse_tenant_documents

MANAGEMENT_KINDS: list[tuple[str, str, bool, tuple[str, ...]]] = [
    ("tenantctl.io/v1alpha1/tenantclusters", "TenantCluster", True, ("status",)),
    ("tenantctl.io/v1alpha1/nodepools", "NodePool", True, ("status",)),
    ("cert-manager.io/v1/issuers", "Issuer", True, ()),
    ("cert-manager.io/v1/certificates", "Certificate", True, ()),
    ("cluster.x-k8s.io/v1beta1/clusters", "Cluster", True, ()),
    ("cluster.x-k8s.io/v1beta1/machinedeployments", "MachineDeployment", True, ()),
    ("cluster.x-k8s.io/v1beta1/machinehealthchecks", "MachineHealthCheck", True, ()),
    ("controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes", "KamajiControlPlane", True, ()),
    ("infrastructure.cluster.x-k8s.io/v1alpha1/proxmoxclusters", "ProxmoxCluster", True, ()),
    ("infrastructure.cluster.x-k8s.io/v1alpha1/proxmoxmachinetemplates", "ProxmoxMachineTemplate", True, ()),
    ("infrastructure.cluster.x-k8s.io/v1alpha1/kubevirtclusters", "KubevirtCluster", True, ()),
    ("infrastructure.cluster.x-k8s.io/v1alpha1/kubevirtmachinetemplates", "KubevirtMachineTemplate", True, ()),
    ("bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates", "TalosConfigTemplate", True, ()),
    ("helm.toolkit.fluxcd.io/v2/helmreleases", "HelmRelease", True, ()),
    ("source.toolkit.fluxcd.io/v1/helmrepositories", "HelmRepository", True, ()),
    ("source.toolkit.fluxcd.io/v1/ocirepositories", "OCIRepository", True, ()),
    ("tenantctl.io/v1alpha1/platforms", "Platform", False, ()),
]
DATA_VOLUMES = ("cdi.kubevirt.io/v1beta1/datavolumes", "DataVolume", True, ())
TCP = "kamaji.clastix.io/v1alpha1/tenantcontrolplanes"
TENANT_CONTROL_PLANES = (TCP, "TenantControlPlane", True, ())
TCP_CRD = "tenantcontrolplanes.kamaji.clastix.io"

DEBUG: list[Any] = []
CAPMOX_TOKEN_SECRET = "0d7c3f7e-capmox-token-secret"
FAST = OperatorSettings(
    retry=RetryPolicy(timeout=5.0, backoffs=(0.05, 0.1, 0.2)),
    resync_interval=60.0,
    requeue_delay=2.0,
    poll_interval=0.5,
    tenant_probe_timeout=1.0,
    tenant_unreachable_grace=3.0,
    volume_release_timeout=20.0,
    helm_release_timeout=2.0,
    control_plane_timeout=2.0,
    cluster_deletion_timeout=2.0,
)


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def kubeconfig_for(url: str, user: str = "admin") -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "t", "cluster": {"server": url}}],
            "users": [{"name": user, "user": {"token": "x"}}],
            "contexts": [{"name": "t", "context": {"cluster": "t", "user": user}}],
            "current-context": "t",
        }
    )


def seed_documents(mgmt: KubeEmulator, docs: list[dict[str, Any]], *, opened: bool = True) -> None:
    """Store the TenantCluster and NodePool documents as the API would hold them; `opened`: with the namespace
    opened to the operator, as `tenantctl install -f` leaves it (its tenant role bound there)."""
    for doc in docs:
        plural = "tenantclusters" if doc["kind"] == "TenantCluster" else "nodepools"
        mgmt.put(f"tenantctl.io/v1alpha1/{plural}", copy.deepcopy(doc))
        if opened:
            open_namespace(mgmt, doc["metadata"]["namespace"])


def open_namespace(mgmt: KubeEmulator, namespace: str) -> None:
    """The RoleBinding `install` renders to open `namespace` to the operator the emulator says it is."""
    binding = rights_binding(namespace, Subject.of_username(mgmt.username))
    if mgmt.get("rbac.authorization.k8s.io/v1/rolebindings", namespace, OPERATOR) is None:
        mgmt.put("rbac.authorization.k8s.io/v1/rolebindings", binding)


def capmox_credentials(docs: list[dict[str, Any]], **overrides: str | None) -> dict[str, Any]:
    """The capmox Secret a platform admin applies as `tenantctl secret proxmox-cluster` writes it (with our
    managed-by label, so the watch cache holds it from its first list); None drops a key."""
    cluster = parse_tenant_documents(docs).clusters[0]
    px = cluster.spec.proxmox
    assert px is not None and px.credentials_secret_name
    data: dict[str, str | None] = {
        "url": "https://pve.example:8006", "token": "capmox@pve!capi", "secret": CAPMOX_TOKEN_SECRET,
        "insecure": "true" if px.insecure else "false", **overrides,
    }
    return {
        "metadata": {"name": px.credentials_secret_name, "namespace": cluster.metadata.namespace,
                     "labels": {"app.kubernetes.io/managed-by": MANAGED_BY}},
        "data": {k: b64(v) for k, v in data.items() if v is not None},
    }


def kamaji_labels(control_plane: str, component: str) -> dict[str, str]:
    """The labels Kamaji puts on what it writes for a TenantControlPlane (`utilities.KamajiLabels`)."""
    return {"kamaji.clastix.io/project": "kamaji", "kamaji.clastix.io/name": control_plane,
            "kamaji.clastix.io/component": component}


def seed_control_plane(
    mgmt: KubeEmulator, docs: list[dict[str, Any]], tenant_url: str | None, *, address: str = "192.0.2.10"
) -> None:
    """What Kamaji, cert-manager and the cloud write: the Service address, both CAs, the kubeconfig.

    On proxmox also the capmox Secret the platform admin applies before the tenant. A stand-in kept on
    purpose: the real Kamaji (tests/real/test_upstream_kamaji.py) takes ~20 s per stand and its one fixed
    webhook port, and that test checks these names, keys and labels against what Kamaji writes.
    """
    cluster = parse_tenant_documents(docs).clusters[0]
    names, ns = Names(cluster), cluster.metadata.namespace
    service: dict[str, Any] = {"metadata": {"name": names.apiserver_service, "namespace": ns}, "spec": {}}
    if cluster.spec.substrate == "proxmox":
        service["spec"] = {"type": "LoadBalancer", "clusterIP": "10.96.7.7"}
        service["status"] = {"loadBalancer": {"ingress": [{"ip": address}]}}
    else:
        service["spec"] = {"type": "ClusterIP", "clusterIP": address}
        mgmt.put("v1/services", {"metadata": {"name": "kube-dns", "namespace": "kube-system"},
                                 "spec": {"clusterIP": "10.96.0.10"}})
    mgmt.put("v1/services", service)
    if cluster.spec.substrate == "proxmox":
        mgmt.put("v1/secrets", capmox_credentials(docs))
    mgmt.put("v1/secrets", {"metadata": {"name": names.kubernetes_ca, "namespace": ns,
                                         "labels": kamaji_labels(names.control_plane, "ca")},
                            "data": {"ca.crt": b64("KUBE CA")}})
    mgmt.put("v1/secrets", {"metadata": {"name": names.talos_ca, "namespace": ns},
                            "data": {"tls.crt": b64("TALOS CA")}})
    if tenant_url is not None:
        mgmt.put("v1/secrets", {"metadata": {"name": names.admin_kubeconfig, "namespace": ns,
                                             "labels": kamaji_labels(names.control_plane, "admin-kubeconfig")},
                                # As Kamaji writes it: admin.* in kubeadm:cluster-admins, super-admin.* system:masters.
                                "data": {"super-admin.svc": b64(kubeconfig_for(tenant_url)),
                                         "admin.svc": b64(kubeconfig_for(tenant_url, user="kubernetes-admin"))}})


def management(mgmt: KubeEmulator, *, cdi: bool = False) -> None:
    declare(mgmt, MANAGEMENT_KINDS + ([DATA_VOLUMES] if cdi else []))


@functools.cache
def _kamaji_crd(path: Path) -> dict[str, Any]:
    """The real TenantControlPlane CRD, read once, without descriptions (a fifth of the size per GET)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "description"}
        return [strip(v) for v in node] if isinstance(node, list) else node

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return dict(strip(yaml.load(path.read_text(), Loader=loader)))


def kamaji(mgmt: KubeEmulator, crds: Path, *, additional_ports: bool = True) -> None:
    """Serve TenantControlPlanes with the real Kamaji CRD from `crds`, or one from before the field existed."""
    declare(mgmt, [TENANT_CONTROL_PLANES])
    crd = copy.deepcopy(_kamaji_crd(crds / "kamaji-26.3.6-edge" / f"kamaji.clastix.io_{TCP_CRD.split('.')[0]}.yaml"))
    if not additional_ports:
        for version in crd["spec"]["versions"]:
            control_plane = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["controlPlane"]
            del control_plane["properties"]["service"]["properties"]["additionalPorts"]
    mgmt.put("apiextensions.k8s.io/v1/customresourcedefinitions", crd)


def provider_tenant_control_plane(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The TenantControlPlane as control-plane provider v0.19.0 creates it from the KamajiControlPlane."""
    cluster = parse_tenant_documents(docs).clusters[0]
    kcp = next(o for o in render_cluster(cluster, parse_tenant_documents(docs).pools_of(cluster), None)
               if o["kind"] == "KamajiControlPlane")
    spec = kcp["spec"]
    deployment = spec["deployment"]
    return {
        "apiVersion": "kamaji.clastix.io/v1alpha1",
        "kind": "TenantControlPlane",
        "metadata": {"name": kcp["metadata"]["name"], "namespace": kcp["metadata"]["namespace"],
                     "labels": {"cluster.x-k8s.io/cluster-name": cluster.metadata.name}},
        "spec": {
            "dataStore": spec["dataStoreName"],
            "controlPlane": {
                "deployment": {"replicas": spec["replicas"], "additionalContainers": deployment["extraContainers"],
                               "additionalVolumes": deployment["extraVolumes"]},
                "service": {"serviceType": spec["network"]["serviceType"]},
            },
            "kubernetes": {"version": spec["version"], "kubelet": spec["kubelet"]},
            "networkProfile": {"certSANs": spec["network"]["certSANs"], "port": 6443},
            "addons": {"konnectivity": {"server": {"port": 8132}}},
        },
    }


def running_operator(
    mgmt: KubeEmulator, settings: OperatorSettings = FAST
) -> contextlib.AbstractAsyncContextManager[OperatorContext]:
    """The whole kopf engine with our registry, cluster-wide, on the emulated management API."""
    return running_operator_on(Connection.from_server(str(mgmt.url).rstrip("/")), settings)


@contextlib.asynccontextmanager
async def running_operator_on(
    connection: Connection, settings: OperatorSettings, *, start: float = 10.0, stop_within: float = 15.0
) -> AsyncIterator[OperatorContext]:
    """The whole kopf engine with our registry, cluster-wide, on `connection`'s API, until the block ends."""
    ctx = OperatorContext(connection, settings)
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(
        kopf.operator(
            registry=build_registry(ctx), clusterwide=True, standalone=True, stop_flag=stop, ready_flag=ready
        )
    )
    try:
        await asyncio.wait_for(ready.wait(), start)
        yield ctx
    finally:
        stop.set()
        await asyncio.wait_for(task, stop_within)


_PARSING = threading.RLock()
_parse = ast.parse


def _one_parse_at_a_time(*args: Any, **kwargs: Any) -> Any:
    with _PARSING:
        return _parse(*args, **kwargs)


def _serialise_ast_parsing() -> None:
    """CPython 3.11 keeps the AST converter's recursion depth in state all threads share (gh-106905): an
    operator thread formatting a traceback (3.11's error carets call `ast.parse`) while another thread
    parses leaves it inconsistent, and a later parse, pytest's own included, fails with `SystemError: AST
    constructor recursion depth mismatch`. Parsing one at a time keeps it consistent."""
    ast.parse = _one_parse_at_a_time


@contextlib.asynccontextmanager
async def operator_thread(
    mgmt: KubeEmulator, settings: OperatorSettings = FAST, *, peering: str | None = None, identity: str | None = None,
    priority: int = 0,
) -> AsyncIterator[OperatorContext]:
    """The whole kopf engine on an event loop of its own, as a separate process runs it.

    kopf takes every task created on its loop after it started for one of its own and cancels it as it
    exits, so engines sharing the test's loop cannot stop independently (an old shard layout going
    while the new one runs, a peer leaving). Without `peering` it runs standalone.
    """
    _serialise_ast_parsing()
    ctx = OperatorContext(Connection.from_server(str(mgmt.url).rstrip("/")), settings)
    stop, ready = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(kopf.operator(
                registry=build_registry(ctx), clusterwide=True, standalone=peering is None, peering_name=peering,
                priority=priority if peering else None, identity=identity, stop_flag=stop, ready_flag=ready,
            ))
        except BaseException as exc:  # handed to the test's loop below
            failed.append(exc)

    thread = threading.Thread(target=run, name=f"operator {settings.shard} {identity or ''}")
    thread.start()
    try:
        assert await asyncio.to_thread(ready.wait, 10), f"the operator did not start: {failed}"
        yield ctx
    finally:
        stop.set()
        await asyncio.to_thread(thread.join, 15)
        assert not thread.is_alive(), "the operator did not stop"
    if failed:
        raise failed[0]


async def eventually(check: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Poll `check` until it returns something truthy; fail with its last value after `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"not reached within {timeout}s; last value: {value!r} {DEBUG}")
        await asyncio.sleep(interval)


async def one_more_pass(ctx: OperatorContext, key: tuple[str, str]) -> None:
    """Wake the cluster's daemon and wait until it has finished one more pass."""
    before = ctx.passes[key]
    ctx.wakeup(key).set()
    await eventually(lambda: ctx.passes[key] > before)


async def quiet(ctx: OperatorContext, mgmt: KubeEmulator, key: tuple[str, str]) -> int:
    """Passes until one writes nothing (kopf's own first writes — finalizers, diff-base — included)."""
    for _ in range(10):
        before = len(mgmt.writes())
        await one_more_pass(ctx, key)
        if len(mgmt.writes()) == before:
            return before
    raise AssertionError("the operator never stopped writing")


def before_first_write(mgmt: KubeEmulator, method: str, plural: str, act: Callable[[], Awaitable[None]]) -> list[str]:
    """Run `act` (another client's writes) once, as the first `method` request on `plural` arrives and
    before it is served: a race another controller or shard wins. The list is non-empty once it ran."""
    fired: list[str] = []

    async def hook(seen_method: str, seen_plural: str) -> None:
        if (seen_method, seen_plural) == (method, plural) and not fired:
            fired.append(f"{method} {plural}")  # before acting: a second such write meanwhile must not act again
            await act()

    mgmt.before_write = hook
    return fired


async def watched(
    ctx: OperatorContext, path: str, namespace: str | None, name: str, check: Callable[[Any], bool]
) -> None:
    """Wait until the operator's watches hold a copy of `path` (group/version/plural) that passes `check`."""
    api_version, _, plural = path.rpartition("/")
    cache = ctx.api.cache
    if cache is not None:
        await eventually(lambda: check(cache.holds(api_version, plural, namespace, name)))


def condition(obj: Mapping[str, Any] | None, kind: str) -> Mapping[str, Any]:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond  # type: ignore[no-any-return]
    return {}


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[str]:
    """A TCP endpoint that accepts connections and never answers: a tenant apiserver that hangs."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        for writer in held:
            writer.close()
        server.close()
