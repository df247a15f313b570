"""Lose a tenant and bring it back, on real peers only: the management cluster's real API server, a real
etcd set up as Kamaji sets up a shared DataStore (TLS, a user per tenant limited to its prefix), the
tenant's own real kube-apiserver on that prefix, and a real S3 server (moto) on loopback.

`tenantctl backup run` and `backup restore` run as the ServiceAccounts the render gives the backup
CronJob and the restore Job, with their Roles: nothing else is granted. What Kamaji does (the
TenantControlPlane's status, the datastore certificate, the PKI Secrets, deleting the prefix with the
tenant) the test does, as Kamaji does it.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from operator_support import FAST, condition
from typer.testing import CliRunner

from etcd_support import SecureEtcd, etcdctl_bin, secure_etcd
from postgres_support import KINE_TABLE, Postgres, pg_bin, postgres
from real_api import Api
from real_control_plane import ControlPlane, binaries
from real_seed import eventually, open_namespace, operator_connection, running_operator, seed_control_plane
from s3_support import bucket, s3_server
from tenant_support import clone, doc, load_example
from tenantctl.backup.postgres import PostgresAccess
from tenantctl.cli import app
from tenantctl.render import render_cluster
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.restore import RestorePhase, hold_for_restore
from tenantctl.spec import parse_tenant_documents

pytestmark = [pytest.mark.timeout(300)]

NS = "tenant-restore"
KEY = os.urandom(32)
SECRET_VALUE = "the-tenant-db-password-7f3a"


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def schema(name: str) -> str:
    """Kamaji's default datastore schema and etcd user: `<namespace>_<name>`, '-' as '_'."""
    return f"{NS}_{name}".replace("-", "_")


def tenant_docs(name: str, endpoint: str, restore: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    docs = [d for d in clone(load_example("kubevirt.yaml")) if d["kind"] == "TenantCluster"]
    tc = doc(docs, "TenantCluster")
    tc["metadata"] = {"name": name, "namespace": NS}
    tc["spec"]["backup"] = {
        "schedule": "0 * * * *", "keep": 2,
        "s3": {"endpoint": endpoint, "bucket": "tenants", "credentialsSecretName": "backup-s3"},
        "encryption": {"keySecretName": "backup-key"},
    }
    if restore is not None:
        tc["spec"]["restore"] = restore
    return docs


def play_tenant_control_plane(admin: Api, name: str, driver: str, datastore: str) -> None:
    """The TenantControlPlane the Kamaji provider creates (held at zero), with the storage status Kamaji writes."""
    admin.apply({"apiVersion": "kamaji.clastix.io/v1alpha1", "kind": "TenantControlPlane",
                 "metadata": {"name": name, "namespace": NS},
                 "spec": {"controlPlane": {"deployment": {"replicas": 0}, "service": {"serviceType": "ClusterIP"}},
                          "networkProfile": {"port": 6443},
                          "kubernetes": {"version": "v1.34.4", "kubelet": {"cgroupfs": "systemd"}}}},
                manager="capi-kamaji")
    admin.merge_status("kamaji.clastix.io/v1alpha1", "TenantControlPlane", NS, name, {"storage": {
        "driver": driver, "dataStoreName": datastore, "setup": {"schema": schema(name), "user": schema(name)}}})


def play_kamaji(admin: Api, name: str, etcd: SecureEtcd, plane_ca: Any) -> tuple[Path, Path, Path]:
    """What Kamaji writes for a TenantControlPlane on an etcd DataStore: the etcd user and role of its
    schema, the datastore certificate (CN = that user), the PKI Secrets, the TCP's status.storage and the
    apiserver Deployment's --etcd-servers. Returns the apiserver's etcd (CA, certificate, key) files."""
    access = etcd.add_tenant(schema(name))
    admin.apply({"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": f"{name}-datastore-certificate", "namespace": NS},
                 "data": {"ca.crt": b64(access.ca.read_bytes()), "server.crt": b64(access.cert.read_bytes()),
                          "server.key": b64(access.key.read_bytes())}}, manager="kamaji")
    pki = {"ca": {"ca.crt": plane_ca.pem, "ca.key": b"CA KEY " + name.encode()},
           "sa-certificate": {"sa.pub": b"SA PUB " + name.encode(), "sa.key": b"SA KEY " + name.encode()},
           "front-proxy-ca-certificate": {"front-proxy-ca.crt": b"FP " + name.encode(),
                                          "front-proxy-ca.key": b"FP KEY " + name.encode()}}
    for suffix, data in pki.items():
        admin.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{name}-{suffix}", "namespace": NS},
                     "data": {k: b64(v) for k, v in data.items()}}, manager="kamaji")
    play_tenant_control_plane(admin, name, "etcd", "default")
    admin.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
                 "spec": {"replicas": 0, "selector": {"matchLabels": {"kamaji.clastix.io/name": name}},
                          "template": {"metadata": {"labels": {"kamaji.clastix.io/name": name}},
                                       "spec": {"containers": [{"name": "kube-apiserver", "image": "kube-apiserver",
                                                                "args": [f"--etcd-servers={etcd.url}",
                                                                         f"--etcd-prefix=/{schema(name)}"]}]}}}},
                manager="kamaji")
    return access.ca, access.cert, access.key


def backup_secrets(admin: Api) -> None:
    """The namespace, the bucket's credentials (moto takes any) and the encryption key."""
    open_namespace(admin, NS)
    admin.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "backup-s3", "namespace": NS},
                 "stringData": {"AWS_ACCESS_KEY_ID": "test-access", "AWS_SECRET_ACCESS_KEY": "test-secret"}})
    admin.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "backup-key", "namespace": NS},
                 "data": {"key": b64(KEY)}})


def started_tenant(admin: Api, etcd: SecureEtcd, s3: str, name: str, tmp_path: Path) -> tuple[list[Any], ControlPlane]:
    """A TenantCluster with spec.backup, what Kamaji sets up for it, and its own apiserver on its prefix."""
    docs = tenant_docs(name, s3)
    for d in docs:
        admin.apply(d, manager="kubectl")
    plane = ControlPlane(tmp_path / name, binaries(), controller_manager=False, etcd_url=etcd.url,
                         etcd_prefix=f"/{schema(name)}")
    plane.etcd_tls = play_kamaji(admin, name, etcd, plane.ca)
    return docs, plane.start()


def bucket_object(s3: str, key: str) -> bytes:
    client = boto3.client("s3", endpoint_url=s3, region_name="us-east-1", aws_access_key_id="test-access",
                          aws_secret_access_key="test-secret")
    body: bytes = client.get_object(Bucket="tenants", Key=key)["Body"].read()
    return body


def grant(admin: Api, management: ControlPlane, objects: list[dict[str, Any]], account: str, tmp: Path) -> str:
    """Apply the rendered ServiceAccount, Role and RoleBinding; a kubeconfig with that account's token."""
    for obj in objects:
        if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding") and obj["metadata"]["name"] == account:
            admin.apply(obj, manager="tenantctl")
    path = tmp / f"{account}.kubeconfig"
    path.write_text(yaml.safe_dump(management.kubeconfig_for(NS, account)))
    return str(path)


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def served(api: Api) -> dict[tuple[str, str, str], Any]:
    """What a tenant's API serves of the workload objects: kind, namespace, name → uid and content."""
    out: dict[tuple[str, str, str], Any] = {}
    for kind in ("ConfigMap", "Secret"):
        for obj in api.list("v1", kind, "app"):
            out[kind, "app", obj["metadata"]["name"]] = (obj["metadata"]["uid"], obj.get("data"))
    for obj in api.list("v1", "Namespace"):
        out["Namespace", "", obj["metadata"]["name"]] = obj["metadata"]["uid"]
    return out


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SecureEtcd, str]]:
    with secure_etcd(tmp_path_factory.mktemp("datastore")) as etcd, s3_server(tmp_path_factory.mktemp("s3")) as s3:
        bucket(s3, "tenants", prefix="tenantctl/")
        yield etcd, s3


def test_a_tenant_lost_is_brought_back_serving_the_same_objects(
    installed: Any, admin: Api, management: ControlPlane, peers: tuple[SecureEtcd, str], tmp_path: Path,
) -> None:
    etcd, s3 = peers
    etcdctl = str(etcdctl_bin())
    backup_secrets(admin)
    docs, original = started_tenant(admin, etcd, s3, "alpha", tmp_path)
    try:
        tenant = Api(original.server, original.admin)
        tenant.namespace("app")
        for i in range(30):
            tenant.apply({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"c{i:02d}", "namespace": "app"}, "data": {"n": str(i)}})
        tenant.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "app"},
                      "stringData": {"password": SECRET_VALUE}})
        before = served(tenant)
    finally:
        original.stop()

    # Backup, as the CronJob's ServiceAccount with the Role the render gives it.
    (cluster,) = parse_tenant_documents(docs).clusters
    backup_kubeconfig = grant(admin, management, render_cluster(cluster, [], None), "alpha-backup", tmp_path)
    ran = cli("backup", "run", "alpha", "-n", NS, "--kubeconfig", backup_kubeconfig, "--etcdctl", etcdctl, "--json")
    assert ran.exit_code == 0, ran.output
    stored = json.loads(ran.stdout)
    assert stored["keys"] > 30 and stored["revision"] > 0
    # What the bucket holds is sealed: no Secret value, no key name, no PKI.
    raw = bucket_object(s3, stored["object"])
    assert raw.startswith(b"TCTLBKP1"), "sealed, not a bare gzip'd bundle (whose compression would hide plaintext)"
    for plain in (SECRET_VALUE.encode(), b"/secrets/app/db", b"CA KEY alpha", b"SA KEY alpha", KEY):
        assert plain not in raw
    verified = cli("backup", "verify", "alpha", "-n", NS, "--kubeconfig", str(management.admin_kubeconfig_path))
    assert verified.exit_code == 0 and f"{stored['keys']} keys of {NS}/alpha" in verified.stdout, verified.output
    # Whoever may write the bucket can copy alpha's bundle under another tenant's keys (one key seals both):
    # the sealed manifest still says whose it is, and the bundle is refused there.
    moved = stored["object"].replace(f"{NS}/alpha/", f"{NS}/elsewhere/")
    boto3.client("s3", endpoint_url=s3, region_name="us-east-1", aws_access_key_id="test-access",
                 aws_secret_access_key="test-secret").put_object(Bucket="tenants", Key=moved, Body=raw)
    swapped = cli("backup", "verify", "alpha", "-n", NS, "--from", f"{NS}/elsewhere", "--kubeconfig",
                  str(management.admin_kubeconfig_path))
    assert swapped.exit_code == 2, swapped.output
    assert f"holds {NS}/alpha's backup, not {NS}/elsewhere's" in swapped.output, swapped.output
    # describe and plan show it: time, size, revision.
    mgmt = str(management.admin_kubeconfig_path)
    described = cli("describe", "tenant", "alpha", "-n", NS, "-o", "json", "--kubeconfig", mgmt)
    assert described.exit_code == 0, described.output
    shown = f"last {stored['created']}, {stored['bytes']} bytes sealed, revision {stored['revision']}"
    assert shown in described.stdout and '"backup (0 * * * * UTC, keep 2)"' in described.stdout, described.stdout
    spec_file = tmp_path / "alpha.yaml"
    spec_file.write_text(yaml.safe_dump_all(docs))
    planned = cli("plan", "-f", str(spec_file), "--kubeconfig", mgmt)
    assert f"  backup: {shown}" in planned.stdout, planned.output

    # A restore that would give a second, live tenant alpha's identity is refused, and writes nothing.
    early = tenant_docs("early", s3, {"from": {"name": "alpha"}, "mode": "replace"})
    for d in early:
        admin.apply(d, manager="kubectl")
    refused = cli("backup", "restore", "early", "-n", NS, "--kubeconfig", mgmt, "--etcdctl", etcdctl,
                  "--datastore-timeout", "3")
    assert refused.exit_code == 2 and f"replace is refused while TenantCluster {NS}/alpha exists" in refused.stderr
    admin.delete("tenantctl.io/v1alpha1", "TenantCluster", NS, "early")

    # The loss: the TenantCluster is deleted, and with its TenantControlPlane Kamaji deletes its keys.
    admin.delete("tenantctl.io/v1alpha1", "TenantCluster", NS, "alpha")
    admin.delete("kamaji.clastix.io/v1alpha1", "TenantControlPlane", NS, "alpha")
    etcd.root.run("del", "--prefix", f"/{schema('alpha')}/")
    assert etcd.root.run("get", "--prefix", "--keys-only", f"/{schema('alpha')}/") == b""

    # The restore: a new TenantCluster that starts from alpha's backup, keeping alpha's identity.
    restored_docs = tenant_docs("beta", s3, {"from": {"name": "alpha"}, "mode": "replace"})
    for d in restored_docs:
        admin.apply(d, manager="kubectl")
    (beta,) = parse_tenant_documents(restored_docs).clusters
    held = hold_for_restore(beta, render_cluster(beta, [], None), RestorePhase.IMPORTING, ImagesSpec())
    kcp = next(o for o in held if o["kind"] == "KamajiControlPlane")
    assert kcp["spec"]["replicas"] == 0, "the control plane stays down until the import has finished"
    assert not [o for o in held if o["kind"] in ("HelmRelease", "Deployment")]
    fresh_ca = ControlPlane(tmp_path / "unused", binaries()).ca
    beta_tls = play_kamaji(admin, "beta", etcd, fresh_ca)
    restore_kubeconfig = grant(admin, management, held, "beta-restore", tmp_path)
    done = cli("backup", "restore", "beta", "-n", NS, "--kubeconfig", restore_kubeconfig, "--etcdctl", etcdctl)
    assert done.exit_code == 0, done.output
    assert f"restored {stored['keys']} keys" in done.stdout
    # replace: alpha's CA and service-account key are beta's now; Kamaji issues the leaves from them.
    ca = admin.get("v1", "Secret", NS, "beta-ca")
    assert ca is not None and base64.b64decode(ca["data"]["ca.key"]) == b"CA KEY alpha"

    # The restored tenant's own apiserver, on beta's prefix with beta's etcd user, trusting alpha's CA.
    restored = ControlPlane(tmp_path / "beta", binaries(), controller_manager=False, etcd_url=etcd.url,
                            etcd_prefix=f"/{schema('beta')}", etcd_tls=beta_tls, ca=original.ca)
    restored.start()
    try:
        assert served(Api(restored.server, restored.admin)) == before
    finally:
        restored.stop()

    # A second restore into the same, no longer empty, prefix is refused; nothing is written.
    again = cli("backup", "restore", "beta", "-n", NS, "--kubeconfig", restore_kubeconfig, "--etcdctl", etcdctl)
    assert again.exit_code == 1 and "already holds" in again.stderr, again.output


def _job_complete(admin: Api, name: str) -> None:
    """What the Job controller writes when the restore Pod succeeded (no kubelet runs it here)."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    admin.merge_status("batch/v1", "Job", NS, name, {
        "startTime": now, "completionTime": now, "succeeded": 1, "ready": 0, "terminating": 0,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": now, "lastTransitionTime": now},
            {"type": "Complete", "status": "True", "lastProbeTime": now, "lastTransitionTime": now},
        ],
    })


def test_the_operator_holds_a_restored_tenant_until_it_is_imported_and_scrubbed(
    installed: Any, admin: Api, management: ControlPlane, peers: tuple[SecureEtcd, str], tmp_path: Path,
) -> None:
    """spec.restore through the operator (as its ServiceAccount): control plane at zero replicas and no
    controllers or add-ons while the Job imports; then the control plane up, the restored Nodes, bootstrap
    tokens and Delete volumes scrubbed through the tenant's API; then everything released, the Job gone."""
    etcd, s3 = peers
    etcdctl = str(etcdctl_bin())
    backup_secrets(admin)
    # The source, with what a restore must not bring back alive: a Node, a bootstrap token, a Delete volume.
    _, source = started_tenant(admin, etcd, s3, "gamma", tmp_path)
    try:
        tenant = Api(source.server, source.admin)
        tenant.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gamma-md0-old"}})
        tenant.apply({"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
                      "metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
                      "stringData": {"token-id": "abcdef", "token-secret": "0123456789abcdef",
                                     "usage-bootstrap-authentication": "true"}})
        tenant.apply({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "data"},
                      "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                               "persistentVolumeReclaimPolicy": "Delete",
                               "csi": {"driver": "csi.kubevirt.io", "volumeHandle": "pvc-123"}}})
    finally:
        source.stop()
    ran = cli("backup", "run", "gamma", "-n", NS, "--kubeconfig", str(management.admin_kubeconfig_path),
              "--etcdctl", etcdctl)
    assert ran.exit_code == 0, ran.output

    docs = tenant_docs("delta", s3, {"from": {"name": "gamma"}, "mode": "clone"})
    for d in docs:
        admin.apply(d, manager="kubectl")
    kcp_api = ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")

    async def scenario() -> None:
        async with running_operator(operator_connection(management), FAST):
            await eventually(lambda: admin.get("batch/v1", "Job", NS, "delta-restore"), 60, what="the restore Job")
            kcp = admin.get(*kcp_api, NS, "delta")
            assert kcp is not None and kcp["spec"]["replicas"] == 0
            deployments = admin.list("apps/v1", "Deployment", NS)
            assert not [o for o in deployments if o["metadata"]["name"].startswith("delta-")]
            # The status is written at the end of the pass that applied the Job: wait for it, not for the Job.
            await eventually(lambda: ((admin.get("tenantctl.io/v1alpha1", "TenantCluster", NS, "delta") or {})
                                      .get("status", {}).get("restore", {}).get("phase")) == "Importing",
                             30, what="status.restore.phase Importing")
            # Kamaji sets the datastore up at zero replicas; the Job (played by its own command) imports.
            tls = play_kamaji(admin, "delta", etcd, ControlPlane(tmp_path / "unused", binaries()).ca)
            kubeconfig = grant(admin, management, [], "delta-restore", tmp_path)
            done = await asyncio.to_thread(cli, "backup", "restore", "delta", "-n", NS, "--kubeconfig", kubeconfig,
                                           "--etcdctl", etcdctl)
            assert done.exit_code == 0, done.output
            _job_complete(admin, "delta-restore")
            await eventually(lambda: (admin.get(*kcp_api, NS, "delta") or {}).get("spec", {}).get("replicas") == 2,
                             60, what="the control plane released to its replicas")
            # Kamaji brings the restored apiserver up on the imported prefix.
            restored = ControlPlane(tmp_path / "delta", binaries(), controller_manager=False, etcd_url=etcd.url,
                                    etcd_prefix=f"/{schema('delta')}", etcd_tls=tls)
            restored.start()
            try:
                seed_control_plane(admin, docs, restored)
                await eventually(lambda: condition(admin.get("tenantctl.io/v1alpha1", "TenantCluster", NS, "delta"),
                                                   "Restored").get("status") == "True", 90, what="Restored")
                inside = Api(restored.server, restored.admin)
                assert inside.list("v1", "Node") == []
                assert [s for s in inside.list("v1", "Secret", "kube-system")
                        if s.get("type") == "bootstrap.kubernetes.io/token"] == []
                pv = inside.get("v1", "PersistentVolume", None, "data")
                assert pv is not None and pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
                await eventually(lambda: admin.get("batch/v1", "Job", NS, "delta-restore") is None, 60,
                                 what="the restore Job pruned once Done")
                await eventually(lambda: [o for o in admin.list("apps/v1", "Deployment", NS)
                                          if o["metadata"]["name"].startswith("delta-")], 60,
                                 what="the controllers released")
                tc = admin.get("tenantctl.io/v1alpha1", "TenantCluster", NS, "delta")
                assert tc is not None and tc["status"]["restore"]["phase"] == "Done"
                assert "1 stale Nodes and 1 bootstrap tokens deleted, 1 PersistentVolumes set to Retain" in \
                    tc["status"]["restore"]["message"]
                # The backup CronJob is read as the operator's ServiceAccount: no backup yet, none overdue.
                fresh = condition(tc, "BackupFresh")
                assert (fresh.get("status"), fresh.get("reason")) == ("True", "BackupScheduled"), fresh
                described = await asyncio.to_thread(cli, "describe", "tenant", "delta", "-n", NS, "-o", "json",
                                                    "--kubeconfig", str(management.admin_kubeconfig_path))
                assert f'"restore from {NS}/gamma"' in described.stdout
                assert '"Done (clone, backup latest): restored: 1 stale Nodes' in described.stdout, described.stdout
            finally:
                restored.stop()

    asyncio.run(scenario())


def play_kamaji_postgres(admin: Api, name: str, server: Postgres, password: str) -> PostgresAccess:
    """What Kamaji writes for a TenantControlPlane on a PostgreSQL DataStore without TLS: the login and
    database, `<tcp>-datastore-config`, an empty datastore certificate, the PKI and the TCP's status."""
    access = server.add_tenant(schema(name), password)
    admin.apply({"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": f"{name}-datastore-config", "namespace": NS},
                 "stringData": {"DB_CONNECTION_STRING": f"127.0.0.1:{server.port}", "DB_SCHEMA": schema(name),
                                "DB_USER": schema(name), "DB_PASSWORD": password}}, manager="kamaji")
    admin.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{name}-datastore-certificate",
                                                                     "namespace": NS}}, manager="kamaji")
    for suffix, key in (("ca", "ca.crt"), ("sa-certificate", "sa.key"), ("front-proxy-ca-certificate", "fp.crt")):
        admin.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{name}-{suffix}", "namespace": NS},
                     "data": {key: b64(f"{suffix} of {name}")}}, manager="kamaji")
    play_tenant_control_plane(admin, name, "PostgreSQL", "postgres")
    return access


def test_a_kine_tenant_on_postgresql_is_dumped_and_restored_by_its_own_login(
    installed: Any, admin: Api, management: ControlPlane, peers: tuple[SecureEtcd, str], tmp_path: Path,
) -> None:
    _, s3 = peers
    backup_secrets(admin)
    with postgres() as server:
        docs = tenant_docs("kilo", s3)
        for d in docs:
            admin.apply(d, manager="kubectl")
        source = play_kamaji_postgres(admin, "kilo", server, "kilo-password")
        source.run("psql", "-X", "-v", "ON_ERROR_STOP=1", "-c", KINE_TABLE)
        source.run("psql", "-X", "-v", "ON_ERROR_STOP=1", "-c",
                   "INSERT INTO kine (name, created, deleted, create_revision, prev_revision, lease, value) "
                   f"SELECT '/registry/secrets/app/s' || g, 1, 0, g, 0, 0, convert_to('{SECRET_VALUE}', 'UTF8') "
                   "FROM generate_series(1, 40) g")
        (cluster,) = parse_tenant_documents(docs).clusters
        backup_kubeconfig = grant(admin, management, render_cluster(cluster, [], None), "kilo-backup", tmp_path)
        ran = cli("backup", "run", "kilo", "-n", NS, "--kubeconfig", backup_kubeconfig, "--pg-bin", str(pg_bin()),
                  "--json")
        assert ran.exit_code == 0, ran.output
        stored = json.loads(ran.stdout)
        assert (stored["keys"], stored["revision"]) == (40, 40)
        raw = bucket_object(s3, stored["object"])
        assert raw.startswith(b"TCTLBKP1") and SECRET_VALUE.encode() not in raw

        restored_docs = tenant_docs("lima", s3, {"from": {"name": "kilo"}, "mode": "clone"})
        for d in restored_docs:
            admin.apply(d, manager="kubectl")
        (lima,) = parse_tenant_documents(restored_docs).clusters
        target = play_kamaji_postgres(admin, "lima", server, "lima-password")
        held = hold_for_restore(lima, render_cluster(lima, [], None), RestorePhase.IMPORTING, ImagesSpec())
        restore_kubeconfig = grant(admin, management, held, "lima-restore", tmp_path)
        done = cli("backup", "restore", "lima", "-n", NS, "--kubeconfig", restore_kubeconfig,
                   "--pg-bin", str(pg_bin()))
        assert done.exit_code == 0, done.output
        assert f"restored 40 keys of {stored['object'].rsplit('/', 1)[-1]} into database {schema('lima')}" \
            in done.stdout
        query = ("-X", "-At", "-c", "SELECT id, name, encode(value, 'hex') FROM kine ORDER BY id")
        assert target.run("psql", *query) == source.run("psql", *query)
        # clone: the PKI Kamaji issued lima stays lima's.
        ca = admin.get("v1", "Secret", NS, "lima-ca")
        assert ca is not None and base64.b64decode(ca["data"]["ca.crt"]) == b"ca of lima"
