"""The live-stand sequence: create a tenant, wait for its nodes, prove a volume end to end, tear down.

Every wait is bounded and reports what it last saw; a failed step skips the probes after it but
never the teardown, which runs unless `--keep-tenant` asks to keep the tenant for inspection. The
disk checks read the hypervisor itself: a PVC that is `Bound` in the API proves nothing about Proxmox.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import yaml

from tenantctl.e2e.kube import Kube, KubeError
from tenantctl.proxmox.client import Api, ApiError
from tenantctl.proxmox.report import Report, Row, Status

__all__ = [
    "CONTROLLER_VMID_ANNOTATION",
    "PROBE_NAMESPACE",
    "Clock",
    "Harness",
    "StepFailed",
    "Timeouts",
    "run_sequence",
]

T = TypeVar("T")

CONTROLLER_VMID_ANNOTATION = "tenantctl.io/csi-controller-vmid"
# Every cluster has it, so the probe needs no Namespace of its own (and no right to create one).
PROBE_NAMESPACE = "default"
PROBE_NAME = "csi-probe"
PROBE_TOKEN = "tenantctl-e2e-probe"
KUBECONFIG_KEY = "admin.conf"
_PLURALS = {"TenantCluster": "tenantclusters", "NodePool": "nodepools"}
_GROUP = "/apis/tenantctl.io/v1alpha1"


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class _RealClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass(frozen=True)
class Timeouts:
    """Seconds each wait may take; `poll` is the pause between two looks."""

    kubeconfig: float = 600
    nodes: float = 1200
    volume: float = 300
    disk_gone: float = 300
    tenant_gone: float = 900
    poll: float = 5


class StepFailed(Exception):
    """A step's verdict: what was seen, and what to look at next."""

    def __init__(self, seen: str, advice: str = "") -> None:
        super().__init__(seen)
        self.seen = seen
        self.advice = advice


@dataclass
class Harness:
    """The two APIs the sequence drives and the tenant it drives them with."""

    mgmt: Kube
    pve: Api
    documents: Sequence[Mapping[str, Any]]
    keep_tenant: bool = False
    timeouts: Timeouts = field(default_factory=Timeouts)
    clock: Clock = field(default_factory=_RealClock)
    tenant_client: Callable[[Mapping[str, Any]], Kube] = Kube.from_dict
    tenant: Kube | None = None
    created: list[str] = field(default_factory=list)
    controller_vmid: str | None = None
    volume: tuple[str, str, str] | None = None

    def close(self) -> None:
        for client in (self.mgmt, self.tenant, self.pve):
            if client is not None:
                client.close()

    @property
    def cluster(self) -> Mapping[str, Any]:
        return next(d for d in self.documents if d.get("kind") == "TenantCluster")

    @property
    def namespace(self) -> str:
        return str(self.cluster["metadata"]["namespace"])

    @property
    def name(self) -> str:
        return str(self.cluster["metadata"]["name"])

    @property
    def workers(self) -> int:
        return sum(int(d["spec"].get("replicas") or 0) for d in self.documents if d.get("kind") == "NodePool")

    @property
    def storage_class(self) -> str:
        classes = self.cluster["spec"]["proxmox"]["csi"]["storageClasses"]
        return str(next((c for c in classes if c.get("default")), classes[0])["name"])

    def wait(self, what: str, timeout: float, probe: Callable[[], tuple[T | None, str]]) -> T:
        """Poll `probe` until it returns a value; on timeout fail with the last thing it saw."""
        deadline = self.clock.monotonic() + timeout
        while True:
            value, seen = probe()
            if value is not None:
                return value
            if self.clock.monotonic() >= deadline:
                raise StepFailed(f"timed out after {timeout:g}s waiting for {what}; last seen: {seen}")
            self.clock.sleep(self.timeouts.poll)


def _object_path(doc: Mapping[str, Any], name: bool = True) -> str:
    plural = _PLURALS[str(doc["kind"])]
    base = f"{_GROUP}/namespaces/{doc['metadata']['namespace']}/{plural}"
    return f"{base}/{doc['metadata']['name']}" if name else base


# ------------------------------------------------------------------ steps


def create_tenant(h: Harness) -> str:
    for doc in h.documents:
        if doc.get("kind") not in _PLURALS:
            continue
        try:
            h.mgmt.create(_object_path(doc, name=False), doc)
        except KubeError as exc:
            if exc.status == 409:
                raise StepFailed(f"{doc['kind']} {doc['metadata']['name']} already exists",
                                 "left over from an earlier run: delete it, or render the fixture with another "
                                 "TENANTCTL_TENANT_NAME") from None
            raise StepFailed(exc.message, "check the kubeconfig and that the tenantctl CRDs are installed") from None
        h.created.append(_object_path(doc))
    return f"created {h.namespace}/{h.name} and {len(h.created) - 1} node pool(s)"


def tenant_kubeconfig(h: Harness) -> str:
    secret_path = f"/api/v1/namespaces/{h.namespace}/secrets/{h.name}-admin-kubeconfig"

    def probe() -> tuple[Mapping[str, Any] | None, str]:
        secret = h.mgmt.get(secret_path)
        raw = ((secret or {}).get("data") or {}).get(KUBECONFIG_KEY)
        if not raw:
            return None, "no Secret yet" if secret is None else f"Secret without {KUBECONFIG_KEY}"
        return yaml.safe_load(base64.b64decode(raw)), "found"

    h.tenant = h.tenant_client(h.wait(f"Secret {h.name}-admin-kubeconfig", h.timeouts.kubeconfig, probe))
    return f"tenant kubeconfig from {secret_path.rsplit('/', 1)[-1]}[{KUBECONFIG_KEY}]"


def _ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def nodes_ready(h: Harness) -> str:
    assert h.tenant is not None
    tenant = h.tenant

    def probe() -> tuple[int | None, str]:
        nodes = tenant.items("/api/v1/nodes")
        ready = sum(1 for n in nodes if _ready(n))
        return (ready if ready >= h.workers else None), f"{ready} of {len(nodes)} nodes Ready, want {h.workers}"

    count = h.wait(f"{h.workers} Ready worker node(s)", h.timeouts.nodes, probe)
    return f"{count} node(s) Ready"


def _probe_objects(storage_class: str) -> tuple[dict[str, Any], dict[str, Any]]:
    meta = {"name": PROBE_NAME, "namespace": PROBE_NAMESPACE, "labels": {"app.kubernetes.io/name": "tenantctl-e2e"}}
    claim = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                 "resources": {"requests": {"storage": "1Gi"}}},
    }
    script = f'echo {PROBE_TOKEN} > /data/probe && sync && test "$(cat /data/probe)" = {PROBE_TOKEN}'
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "probe", "image": "busybox:1.37", "command": ["sh", "-c", script],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": PROBE_NAME}}],
        },
    }
    return claim, pod


def pvc_probe(h: Harness) -> str:
    assert h.tenant is not None
    tenant = h.tenant
    claim, pod = _probe_objects(h.storage_class)
    tenant.create(f"/api/v1/namespaces/{PROBE_NAMESPACE}/persistentvolumeclaims", claim)
    tenant.create(f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods", pod)
    claim_path = f"/api/v1/namespaces/{PROBE_NAMESPACE}/persistentvolumeclaims/{PROBE_NAME}"
    pod_path = f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods/{PROBE_NAME}"

    def bound() -> tuple[str | None, str]:
        pvc = tenant.get(claim_path) or {}
        phase = (pvc.get("status") or {}).get("phase", "absent")
        return ((pvc.get("spec") or {}).get("volumeName") if phase == "Bound" else None), f"claim {phase}"

    def done() -> tuple[str | None, str]:
        phase = ((tenant.get(pod_path) or {}).get("status") or {}).get("phase", "absent")
        if phase == "Failed":
            raise StepFailed("the probe Pod failed: the volume did not read back what was written",
                             f"kubectl -n {PROBE_NAMESPACE} logs {PROBE_NAME}")
        return (phase if phase == "Succeeded" else None), f"pod {phase}"

    pv_name = h.wait(f"claim {PROBE_NAME} to bind", h.timeouts.volume, bound)
    h.wait(f"pod {PROBE_NAME} to write and read back", h.timeouts.volume, done)
    pv = tenant.get(f"/api/v1/persistentvolumes/{pv_name}") or {}
    handle = str(((pv.get("spec") or {}).get("csi") or {}).get("volumeHandle", ""))
    parts = handle.split("/")
    if len(parts) != 4:
        raise StepFailed(f"PV {pv_name} has volumeHandle {handle!r}, not region/zone/storage/volume")
    h.volume = (parts[1], parts[2], parts[3])
    return f"claim bound to {pv_name}, mounted, written and read back; volume {handle}"


def _volids(h: Harness, node: str, storage: str) -> list[str]:
    try:
        content = h.pve.get(f"/nodes/{node}/storage/{storage}/content") or []
    except ApiError as exc:
        raise StepFailed(f"cannot list {storage} on {node}: {exc.message}",
                         "grant the harness token Datastore.Audit on the storage") from None
    return [str(item.get("volid", "")) for item in content]


def disk_on_hypervisor(h: Harness) -> str:
    assert h.volume is not None
    node, storage, volume = h.volume
    path = f"/apis/apps/v1/namespaces/{h.namespace}/deployments"
    vmids = [
        str(d["metadata"]["annotations"][CONTROLLER_VMID_ANNOTATION])
        for d in h.mgmt.items(path)
        if CONTROLLER_VMID_ANNOTATION in ((d.get("metadata") or {}).get("annotations") or {})
    ]
    if len(vmids) != 1:
        raise StepFailed(f"{len(vmids)} Deployments in {h.namespace} carry {CONTROLLER_VMID_ANNOTATION}",
                         "the CSI controller Deployment should carry the annotation exactly once")
    h.controller_vmid = vmids[0]
    prefix = f"vm-{h.controller_vmid}-pvc-"
    if not volume.startswith(prefix):
        raise StepFailed(f"volume {volume} is not named {prefix}…",
                         "the CSI controller runs without this cluster's controllerVmID")
    if f"{storage}:{volume}" not in _volids(h, node, storage):
        raise StepFailed(f"{storage}:{volume} is not on {node}", "the claim is Bound in the API only")
    return f"{storage}:{volume} exists on {node} (owner {h.controller_vmid})"


def claim_deleted(h: Harness) -> str:
    assert h.tenant is not None and h.volume is not None
    tenant = h.tenant
    node, storage, volume = h.volume
    tenant.delete(f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods/{PROBE_NAME}")
    claim = tenant.get(f"/api/v1/namespaces/{PROBE_NAMESPACE}/persistentvolumeclaims/{PROBE_NAME}") or {}
    pv_name = (claim.get("spec") or {}).get("volumeName")
    tenant.delete(f"/api/v1/namespaces/{PROBE_NAMESPACE}/persistentvolumeclaims/{PROBE_NAME}")

    def pv_gone() -> tuple[bool | None, str]:
        gone = pv_name is None or tenant.get(f"/api/v1/persistentvolumes/{pv_name}") is None
        return (True if gone else None), f"PV {pv_name} still present"

    def disk_gone() -> tuple[bool | None, str]:
        present = f"{storage}:{volume}" in _volids(h, node, storage)
        return (None if present else True), f"{storage}:{volume} still on {node}"

    h.wait(f"PV {pv_name} to go", h.timeouts.disk_gone, pv_gone)
    h.wait(f"{storage}:{volume} to leave {node}", h.timeouts.disk_gone, disk_gone)
    return f"claim deleted; PV {pv_name} and {storage}:{volume} are gone"


def tenant_deleted(h: Harness) -> str:
    if h.keep_tenant:
        return f"kept {h.namespace}/{h.name} as asked (--keep-tenant); delete it by hand when done"
    for path in reversed(h.created):
        h.mgmt.delete(path)

    def gone() -> tuple[bool | None, str]:
        left = [p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1] for p in h.created if h.mgmt.get(p) is not None]
        return (None if left else True), f"still present: {', '.join(left)}"

    h.wait(f"tenant {h.namespace}/{h.name} to go", h.timeouts.tenant_gone, gone)
    if h.volume is None or h.controller_vmid is None:
        return f"tenant {h.namespace}/{h.name} deleted"
    node, storage, _ = h.volume
    prefix = f"{storage}:vm-{h.controller_vmid}-pvc-"
    left = [v for v in _volids(h, node, storage) if v.startswith(prefix)]
    if left:
        raise StepFailed(f"tenant deleted but {', '.join(left)} remain on {node}",
                         "the teardown must delete claims before the CSI driver goes")
    return f"tenant {h.namespace}/{h.name} deleted; no {prefix}… volume left on {node}"


Step = Callable[[Harness], str]

PROBES: tuple[tuple[str, Step], ...] = (
    ("create-tenant", create_tenant),
    ("tenant-kubeconfig", tenant_kubeconfig),
    ("nodes-ready", nodes_ready),
    ("pvc-probe", pvc_probe),
    ("disk-on-hypervisor", disk_on_hypervisor),
    ("claim-deleted", claim_deleted),
)
TEARDOWN: tuple[str, Step] = ("tenant-deleted", tenant_deleted)


def _attempt(name: str, step: Step, h: Harness) -> Row:
    started = h.clock.monotonic()
    try:
        seen = step(h)
    except StepFailed as exc:
        return Row(name, f"{h.namespace}/{h.name}", Status.FAIL, exc.seen, exc.advice)
    except (KubeError, ApiError) as exc:
        return Row(name, f"{h.namespace}/{h.name}", Status.FAIL, exc.message, "check the API the message names")
    return Row(name, f"{h.namespace}/{h.name}", Status.PASS, f"{seen} ({h.clock.monotonic() - started:.0f}s)")


def run_sequence(h: Harness) -> Report:
    """Run the probes in order until one fails, then the teardown (unless nothing was created)."""
    report = Report()
    failed = False
    for name, step in PROBES:
        if failed:
            report.extend([Row(name, f"{h.namespace}/{h.name}", Status.WARN, "skipped: an earlier step failed")])
            continue
        row = _attempt(name, step, h)
        report.extend([row])
        failed = row.status is Status.FAIL
    if h.created or h.keep_tenant:
        report.extend([_attempt(*TEARDOWN, h)])
    return report
