"""Kamaji 26.3.6-edge and its control-plane provider v0.19.0, from their trees, act on tenantctl's renders
(issue 60).

The provider turns each KamajiControlPlane tenantctl renders into a TenantControlPlane; Kamaji's own
webhooks judge it (version skew, its DataStore, its Deployment) and its manager builds what it builds:
the etcd user and role on the DataStore, the CAs and certificates, the kubeconfig Secrets, the Service
and the Deployment, whose Pods KWOK's nodes run. The tenant apiserver runs from that Deployment's own
arguments and Secrets (`tests/kamaji_stand.py`), so Kamaji finishes its kubeadm phases against it.

Played by the tests, each said where it happens: Cluster API's owner references and the Cluster's
status (the controllers that would write them are tested in test_upstream_controllers.py), the
infrastructure cluster's readiness (capmox's or CAPK's), and the load balancer's address.
"""

from __future__ import annotations

import base64
import copy
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_support import kamaji_labels

from kamaji_stand import MANAGEMENT_CONTROLLERS, NODES, TCP, KamajiStand, expose, kamaji_stand
from real_api import Api, wait_for
from real_control_plane import ControlPlane, running
from tenant_support import load_example
from tenantctl.render import Names, render_tenant
from tenantctl.render.kamaji import KUBECONFIG_KEY, apiserver_flags
from tenantctl.spec import parse_tenant_documents
from upstream_support import KAMAJI_CONTROL_PLANE, owner_references

pytestmark = [pytest.mark.timeout(420)]

CAPI = "cluster.x-k8s.io/v1beta1"
INFRASTRUCTURE = {"proxmox": "ProxmoxCluster", "kubevirt": "KubevirtCluster"}
ADDRESS = "192.0.2.10"


@pytest.fixture(scope="module")
def kamaji_management(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A management control plane of its own: Kamaji acts on every namespace and its port is fixed."""
    with running(tmp_path_factory.mktemp("kamaji-management"), controllers=MANAGEMENT_CONTROLLERS) as plane:
        yield plane


@pytest.fixture(scope="module")
def kamaji(kamaji_management: ControlPlane, shared: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[KamajiStand]:
    with kamaji_stand(kamaji_management, tmp_path_factory.mktemp("kamaji"), shared) as stand:
        yield stand


def _docs(example: str, namespace: str, edit: Callable[[list[dict[str, Any]]], None] | None = None
          ) -> list[dict[str, Any]]:
    docs = copy.deepcopy(load_example(example))
    for doc in docs:
        doc["metadata"]["namespace"] = namespace
    if edit is not None:
        edit(docs)
    return docs


def _tenant_cluster(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "TenantCluster")


def _owned_by(obj: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["ownerReferences"] = owner_references(owner)
    return obj


def apply_control_plane(stand: KamajiStand, docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tenantctl's Cluster, infrastructure cluster and KamajiControlPlane, with the owner references Cluster
    API's Cluster controller would set and the infrastructure readiness its provider would report."""
    admin = stand.admin
    cluster = parse_tenant_documents(docs).clusters[0]
    namespace = cluster.metadata.namespace
    admin.namespace(namespace)
    objects = {o["kind"]: o for o in render_tenant(parse_tenant_documents(docs))}
    live_cluster = admin.apply(objects["Cluster"], manager="tenantctl")
    infrastructure = INFRASTRUCTURE[cluster.spec.substrate]
    admin.apply(_owned_by(objects[infrastructure], live_cluster), manager="tenantctl")
    admin.apply(_owned_by(objects["KamajiControlPlane"], live_cluster), manager="tenantctl")
    admin.merge_status(objects[infrastructure]["apiVersion"], infrastructure, namespace,
                       cluster.metadata.name, {"ready": True})
    admin.merge_status(CAPI, "Cluster", namespace, cluster.metadata.name, {"infrastructureReady": True})
    return objects


def _condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


def _running_pods(admin: Api, namespace: str, name: str) -> list[dict[str, Any]]:
    pods = admin.list("v1", "Pod", namespace, selector=f"kamaji.clastix.io/name={name}")
    return [p for p in pods if (p.get("status") or {}).get("phase") == "Running" and p["spec"].get("nodeName")]


def _rolled_out(admin: Api, namespace: str, name: str, replicas: int) -> dict[str, Any] | None:
    """The Deployment once every replica runs its latest template and no older Pod is left."""
    deployment = admin.get("apps/v1", "Deployment", namespace, name) or {}
    status = deployment.get("status") or {}
    done = (status.get("observedGeneration") == deployment.get("metadata", {}).get("generation")
            and status.get("replicas") == status.get("updatedReplicas") == status.get("availableReplicas") == replicas)
    return deployment if done and len(_running_pods(admin, namespace, name)) == replicas else None


def _decoded(secret: dict[str, Any] | None) -> dict[str, bytes]:
    return {k: base64.b64decode(v) for k, v in ((secret or {}).get("data") or {}).items()}


CASES = {"proxmox": "proxmox.yaml", "kubevirt": "kubevirt.yaml"}


@pytest.mark.parametrize("case", list(CASES))
def test_kamaji_builds_the_control_plane_tenantctl_rendered(kamaji: KamajiStand, case: str) -> None:
    """The provider makes a TenantControlPlane of the render's KamajiControlPlane, Kamaji's webhooks admit
    it, and Kamaji builds it as far as a Deployment whose Pods run on KWOK's nodes, carrying what the
    render gave the apiserver; the admin kubeconfig Secret holds the key the operator and the tenant's
    add-ons read."""
    admin = kamaji.admin
    namespace = f"kamaji-{case}"
    docs = _docs(CASES[case], namespace)
    cluster = parse_tenant_documents(docs).clusters[0]
    names = Names(cluster)
    objects = apply_control_plane(kamaji, docs)
    name = cluster.metadata.name
    tcp = wait_for(lambda: kamaji.tenant_control_plane(namespace, name), 60,
                   what="the provider's TenantControlPlane")
    created = wait_for(lambda: _condition(admin.get(*KAMAJI_CONTROL_PLANE, namespace, name),
                                          "TenantControlPlaneCreated"), 60, what="the provider's condition")
    assert created["status"] == "True", created
    assert tcp["spec"]["kubernetes"]["version"] == objects["KamajiControlPlane"]["spec"]["version"]
    if objects["KamajiControlPlane"]["spec"]["network"]["serviceType"] == "LoadBalancer":
        expose(admin, namespace, names.apiserver_service, ADDRESS)
    replicas = objects["KamajiControlPlane"]["spec"]["replicas"]
    deployment = wait_for(lambda: _rolled_out(admin, namespace, name, replicas), 120,
                          what="Kamaji's Deployment rolled out, its Pods Running")
    pods = _running_pods(admin, namespace, name)
    assert {p["spec"]["nodeName"] for p in pods} <= set(NODES)
    containers = {c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]}
    apiserver_args = set(containers["kube-apiserver"].get("args") or [])
    assert set(apiserver_flags(cluster)) <= apiserver_args, sorted(set(apiserver_flags(cluster)) - apiserver_args)
    rendered_extra = objects["KamajiControlPlane"]["spec"]["deployment"].get("extraContainers") or []
    for extra in rendered_extra:
        assert extra["name"] in containers and containers[extra["name"]]["image"] == extra["image"], sorted(containers)
    # Kamaji's own DataStore work: a user and role named by the schema it wrote in the status, on the etcd.
    storage = wait_for(lambda: ((kamaji.tenant_control_plane(namespace, name) or {}).get("status") or {})
                       .get("storage", {}).get("setup"), 60, what="Kamaji's storage status")
    users = kamaji.etcd.root.run("user", "list")
    assert storage["user"].encode() in users.split(), users
    kubeconfigs = _decoded(wait_for(lambda: admin.get("v1", "Secret", namespace, names.admin_kubeconfig), 60,
                                    what="Kamaji's admin kubeconfig Secret"))
    assert KUBECONFIG_KEY in kubeconfigs, sorted(kubeconfigs)
    served = yaml.safe_load(kubeconfigs[KUBECONFIG_KEY])["clusters"][0]["cluster"]["server"]
    assert served == f"https://{names.apiserver_service}.{namespace}.svc:6443", served
    ca = _decoded(admin.get("v1", "Secret", namespace, names.kubernetes_ca))
    assert ca.get("ca.crt", b"").startswith(b"-----BEGIN CERTIFICATE-----"), sorted(ca)
    assert TCP[1] == tcp["kind"]
    # What the faster tiers' stand-in writes in Kamaji's place (operator_support.seed_control_plane) is what
    # Kamaji writes: the Secrets' names, keys and labels the operator's watches select by, the Service.
    for secret, component in ((names.kubernetes_ca, "ca"), (names.admin_kubeconfig, "admin-kubeconfig")):
        labels = ((admin.get("v1", "Secret", namespace, secret) or {}).get("metadata") or {}).get("labels") or {}
        assert kamaji_labels(names.control_plane, component).items() <= labels.items(), (secret, labels)
    service = admin.get("v1", "Service", namespace, names.apiserver_service) or {}
    assert service["spec"]["type"] == objects["KamajiControlPlane"]["spec"]["network"]["serviceType"]
    assert [p["port"] for p in service["spec"]["ports"]][:1] == [6443], service["spec"]["ports"]


def _on_v134(docs: list[dict[str, Any]]) -> None:
    """The minor of the envtest kube-apiserver (v1.34.4) that stands in for the tenant's v1.34.9 image."""
    _tenant_cluster(docs)["spec"]["version"] = "v1.34"


def _tenant_session(kubeconfig: bytes, network_url: str, workdir: Path) -> tuple[str, Any]:
    """A requests session with the kubeconfig's own CA and client certificate, through the Service network."""
    import requests

    config = yaml.safe_load(kubeconfig)
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    files = {}
    for name, key in (("ca.crt", "certificate-authority-data"), ("client.crt", "client-certificate-data"),
                      ("client.key", "client-key-data")):
        source = cluster if name == "ca.crt" else user
        files[name] = workdir / name
        files[name].write_bytes(base64.b64decode(source[key]))
    session = requests.Session()
    session.trust_env = False  # REQUESTS_CA_BUNDLE would replace the kubeconfig's CA
    session.verify = str(files["ca.crt"])
    session.cert = (str(files["client.crt"]), str(files["client.key"]))
    session.proxies = {"https": network_url}
    return str(cluster["server"]), session


def test_kamaji_finishes_its_phases_on_the_tenant_apiserver_its_deployment_describes(
    kamaji: KamajiStand, tmp_path: Path,
) -> None:
    """The tenant apiserver runs from Kamaji's Deployment (its arguments, its certificates, its etcd user
    on the DataStore); Kamaji dials it at the Service name, uploads the kubeadm configuration, the
    cluster-info and the bootstrap-token RBAC, and reports the version Ready; the provider marks the
    KamajiControlPlane initialized and ready. The kubeconfig Kamaji wrote is one the operator's own
    parser takes, and its credentials are system:masters on that apiserver."""
    from tenantctl.operator.kube.tenants import kubeconfig_connection

    admin = kamaji.admin
    namespace = "kamaji-ready"
    docs = _docs("proxmox.yaml", namespace, _on_v134)
    cluster = parse_tenant_documents(docs).clusters[0]
    names, name = Names(cluster), cluster.metadata.name
    objects = apply_control_plane(kamaji, docs)
    expose(admin, namespace, names.apiserver_service, ADDRESS)
    replicas = objects["KamajiControlPlane"]["spec"]["replicas"]
    wait_for(lambda: _rolled_out(admin, namespace, name, replicas), 120, what="Kamaji's Deployment rolled out")
    kamaji.serve_tenant_apiserver(namespace, name)

    def version_ready() -> bool:
        status = (kamaji.tenant_control_plane(namespace, name) or {}).get("status") or {}
        return (status.get("kubernetesResources") or {}).get("version", {}).get("status") == "Ready"

    wait_for(version_ready, 120, what="Kamaji's TenantControlPlane Ready")
    # Cluster API copies the endpoint the provider set on the KamajiControlPlane into the Cluster.
    kcp = wait_for(lambda: (k := admin.get(*KAMAJI_CONTROL_PLANE, namespace, name))
                   and k["spec"].get("controlPlaneEndpoint", {}).get("host") and k, 60,
                   what="the provider's control-plane endpoint")
    assert kcp["spec"]["controlPlaneEndpoint"] == {"host": ADDRESS, "port": 6443}, kcp["spec"]
    endpoint = kcp["spec"]["controlPlaneEndpoint"]
    admin.merge(CAPI, "Cluster", namespace, name, {"spec": {"controlPlaneEndpoint": endpoint}})
    kcp = wait_for(lambda: (k := admin.get(*KAMAJI_CONTROL_PLANE, namespace, name))
                   and (k.get("status") or {}).get("ready") and k, 90, what="the provider's ready status")
    assert kcp["status"]["initialized"] is True and kcp["status"]["version"] == objects["KamajiControlPlane"][
        "spec"]["version"], kcp["status"]

    secret = admin.get("v1", "Secret", namespace, names.admin_kubeconfig) or {}
    connection = kubeconfig_connection(secret["data"][KUBECONFIG_KEY])
    assert connection.server == f"https://{names.apiserver_service}.{namespace}.svc:6443"
    server, session = _tenant_session(base64.b64decode(secret["data"][KUBECONFIG_KEY]), kamaji.network.url, tmp_path)
    public = wait_for(lambda: (a := session.get(f"{server}/api/v1/namespaces/kube-public/configmaps/cluster-info",
                                                timeout=10)).status_code == 200 and a, 120,
                      what=f"Kamaji's cluster-info in the tenant (refused: {kamaji.network.refused})")
    # Kamaji publishes the Service name there, not the load balancer's address: only kubeadm's discovery
    # reads cluster-info, and Talos workers join at the endpoint of their machine config instead.
    published = yaml.safe_load(public.json()["data"]["kubeconfig"])["clusters"][0]["cluster"]
    ca = admin.get("v1", "Secret", namespace, names.kubernetes_ca) or {}
    assert published["certificate-authority-data"] == ca["data"]["ca.crt"]
    kubeadm = session.get(f"{server}/api/v1/namespaces/kube-system/configmaps/kubeadm-config", timeout=10)
    assert kubeadm.status_code == 200, kubeadm.text
    assert "v1.34" in kubeadm.json()["data"]["ClusterConfiguration"]
    review = session.post(f"{server}/apis/authentication.k8s.io/v1/selfsubjectreviews", timeout=10,
                          json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert review.status_code == 201, review.text
    assert "system:masters" in review.json()["status"]["userInfo"]["groups"], review.json()
    # What `tenantctl kubeconfig` hands to people: Kamaji's admin.svc, an administrator RBAC can revoke.
    people = tmp_path / "people"
    people.mkdir()
    server, session = _tenant_session(base64.b64decode(secret["data"]["admin.svc"]), kamaji.network.url, people)
    review = session.post(f"{server}/apis/authentication.k8s.io/v1/selfsubjectreviews", timeout=10,
                          json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    groups = review.json()["status"]["userInfo"]["groups"]
    assert "kubeadm:cluster-admins" in groups and "system:masters" not in groups, review.json()
    bound = wait_for(lambda: (b := session.get(f"{server}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/"
                                               "kubeadm:cluster-admins", timeout=10)).status_code == 200 and b, 60,
                     what="the ClusterRoleBinding Kamaji makes for kubeadm:cluster-admins")
    assert bound.json()["roleRef"]["name"] == "cluster-admin", bound.json()


# -- Kamaji's webhook judges each upgrade stage the operator writes (promise kamaji-upgrade-stages) ---------------

def _our_verdict(old: str, new: str, talos: str) -> list[str]:
    """What tenantctl says of moving a live tenant from `old` to `new` (both Kubernetes patches)."""
    from tenantctl.problems import Problems
    from tenantctl.spec.compat import DEFAULT_KAMAJI, check_kamaji_serves, check_version_change

    problems = Problems()
    check_version_change("TenantCluster/acme", old, new, talos, talos, problems)
    check_kamaji_serves("TenantCluster/acme", new, DEFAULT_KAMAJI, problems)
    return [p.message for p in problems.errors]


def _kamajis_verdict(admin: Api, namespace: str, name: str, version: str) -> str | None:
    """Move the KamajiControlPlane to `version` as the operator's control-plane stage does; None when the
    provider's TenantControlPlane took it (Kamaji's webhooks admitted it), else the refusal it reports."""
    kcp = admin.merge(*KAMAJI_CONTROL_PLANE, namespace, name, {"spec": {"version": version}})
    generation = kcp["metadata"]["generation"]

    def verdict() -> tuple[str | None] | None:
        tcp = admin.get(*TCP, namespace, name) or {}
        if tcp.get("spec", {}).get("kubernetes", {}).get("version") == version:
            return (None,)
        created = _condition(admin.get(*KAMAJI_CONTROL_PLANE, namespace, name), "TenantControlPlaneCreated")
        message = str(created.get("message") or "")
        # Only a webhook's refusal is a verdict: a write conflict of the provider's is retried by it. A later
        # generation counts too: the provider's own patch of the endpoint may land after ours (seen under load).
        if created.get("status") == "False" and int(created.get("observedGeneration") or 0) >= generation \
                and "denied the request" in message:
            return (message,)
        return None

    answer: tuple[str | None] = wait_for(verdict, 60, what=f"the provider's verdict on {version}")
    return answer[0]


def test_kamaji_admits_every_upgrade_stage_and_refuses_what_tenantctl_refuses(kamaji: KamajiStand) -> None:
    """From the oldest minor the example's Talos runs to the newest Kamaji 26.3.6-edge serves, one minor at a
    time, each stage at the patch tenantctl installs: Kamaji's webhook admits every one. A skipped minor, a
    downgrade and a minor past what Kamaji serves are refused by Kamaji and by tenantctl alike, before
    the operator would write them."""
    from tenantctl.spec.versions import KUBERNETES, TALOS_KUBERNETES_WINDOW, kamaji_serves, minor_key

    admin = kamaji.admin
    namespace = "kamaji-upgrade"
    docs = _docs("proxmox.yaml", namespace)
    talos = _tenant_cluster(docs)["spec"]["talos"]["version"]
    oldest, newest = TALOS_KUBERNETES_WINDOW[".".join(talos.split(".")[:2])]
    served = kamaji_serves("26.3.6-edge")
    assert served is not None
    stages = [row.patch for minor, row in KUBERNETES.items()
              if minor_key(oldest) <= minor_key(minor) <= minor_key(min(newest, served, key=minor_key))]
    assert len(stages) >= 4, stages

    def start(docs: list[dict[str, Any]]) -> None:
        _tenant_cluster(docs)["spec"]["version"] = stages[0]

    docs = _docs("proxmox.yaml", namespace, start)
    cluster = parse_tenant_documents(docs).clusters[0]
    apply_control_plane(kamaji, docs)
    expose(admin, namespace, Names(cluster).apiserver_service, ADDRESS)
    name = cluster.metadata.name
    wait_for(lambda: kamaji.tenant_control_plane(namespace, name), 60, what="the provider's TenantControlPlane")
    # The provider writes the endpoint into the KamajiControlPlane's spec (a new generation) once Kamaji has
    # an address: the stages start after it, so each verdict is read at the generation its change made.
    wait_for(lambda: ((admin.get(*KAMAJI_CONTROL_PLANE, namespace, name) or {}).get("spec") or {})
             .get("controlPlaneEndpoint", {}).get("host"), 60, what="the provider's endpoint")

    refused_first = stages[2]  # a skipped minor
    assert _our_verdict(stages[0], refused_first, talos), "tenantctl lets a minor be skipped"
    said = _kamajis_verdict(admin, namespace, name, refused_first)
    assert said is not None and "non-sequential" in said, said
    for old, new in itertools.pairwise(stages):
        assert _our_verdict(old, new, talos) == [], (old, new)
        assert _kamajis_verdict(admin, namespace, name, new) is None, (old, new)
    last = stages[-1]
    beyond = next((row.patch for minor, row in KUBERNETES.items() if minor_key(minor) > minor_key(served)), None)
    cases = {"a downgrade": (stages[-2], "unable to downgrade")}
    if beyond is not None:
        cases["past what Kamaji serves"] = (beyond, "greater than the supported one")
    for what, (version, kamaji_says) in cases.items():
        assert _our_verdict(last, version, talos), f"tenantctl admits {what}: {last} -> {version}"
        said = _kamajis_verdict(admin, namespace, name, version)
        assert said is not None and kamaji_says in said, (what, said)


# -- what Kamaji 26.3.6-edge does with a change of the apiserver's extra flags (spec/kamaji_flags.py) -----------

def _with_flags(flags: dict[str, str], replicas: int = 2) -> Callable[[list[dict[str, Any]]], None]:
    def edit(docs: list[dict[str, Any]]) -> None:
        control_plane = _tenant_cluster(docs)["spec"].setdefault("controlPlane", {})
        control_plane.setdefault("apiServer", {})["extraArgs"] = flags
        control_plane["replicas"] = replicas
    return edit


def _apiserver_args(admin: Api, namespace: str, name: str) -> list[str]:
    from tenantctl.operator.phases.apiserver_flags import running_flags

    return running_flags(admin.get("apps/v1", "Deployment", namespace, name) or {})


FLAG_STEPS: list[tuple[dict[str, str], list[str], list[str]]] = [
    # (the spec's extra flags, what the running apiserver then carries of them, what it no longer should)
    ({"event-ttl": "3h0m0s"}, ["--event-ttl=3h0m0s"], ["--event-ttl=2h0m0s"]),
    ({"goaway-chance": "0.001"}, ["--goaway-chance=0.001", "--event-ttl=3h0m0s"], []),
    ({"goaway-chance": "0.002", "event-ttl": "1h0m0s"}, ["--goaway-chance=0.002", "--event-ttl=1h0m0s"], []),
]
"""Kamaji 26.3.6-edge merges the Deployment's current flags, its own and the spec's, the spec's value winning
(internal/builders/controlplane/deployment.go): a changed value reaches the apiserver, a flag the spec
drops stays with its last value."""


def test_kamaji_keeps_a_dropped_flag_and_tenantctl_says_so(kamaji: KamajiStand) -> None:
    """Each step changes the replicas too: the Deployment showing them is Kamaji's reconcile of that step.
    Before each step `unapplied_change` names exactly the flags Kamaji will keep (none when only values
    change or flags are added); after it the operator's flags check names the stranded one."""
    from tenantctl.operator.phases.apiserver_flags import judge
    from tenantctl.spec.compat import DEFAULT_KAMAJI
    from tenantctl.spec.kamaji_flags import unapplied_change

    admin = kamaji.admin
    namespace = "kamaji-flags"
    docs = _docs("kubevirt.yaml", namespace, _with_flags({"event-ttl": "2h0m0s"}))
    cluster = parse_tenant_documents(docs).clusters[0]
    name = cluster.metadata.name
    apply_control_plane(kamaji, docs)
    wait_for(lambda: _rolled_out(admin, namespace, name, 2), 120, what="Kamaji's Deployment rolled out")
    assert "--event-ttl=2h0m0s" in _apiserver_args(admin, namespace, name)
    live = apiserver_flags(cluster)
    for step, (flags, carried, gone) in enumerate(FLAG_STEPS, start=1):
        replicas = 2 + step % 2
        tenant = parse_tenant_documents(_docs("kubevirt.yaml", namespace, _with_flags(flags, replicas)))
        wanted = apiserver_flags(tenant.clusters[0])
        stranded = sorted(set(carried) - set(wanted))
        note = unapplied_change(DEFAULT_KAMAJI.release, live, wanted)
        assert (note is not None) == bool(stranded), (step, note)
        assert all(flag in (note or "") for flag in stranded), (step, note)
        admin.apply(_owned_by(render_kcp(tenant), admin.get(CAPI, "Cluster", namespace, name) or {}),
                    manager="tenantctl")
        deployment = wait_for(lambda r=replicas: _rolled_out(admin, namespace, name, r), 90,
                              what=f"Kamaji's reconcile of step {step}")
        args = _apiserver_args(admin, namespace, name)
        assert set(carried) <= set(args) and not set(gone) & set(args), (step, [a for a in args if "=" in a][-6:])
        verdict = judge(wanted, deployment, DEFAULT_KAMAJI)
        assert verdict is not None and verdict.ok is not bool(stranded), (step, verdict)
        assert all(flag in verdict.message for flag in stranded), (step, verdict)
        live = wanted


def render_kcp(tenant: Any) -> dict[str, Any]:
    return next(o for o in render_tenant(tenant) if o["kind"] == "KamajiControlPlane")
