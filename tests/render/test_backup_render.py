"""The backup CronJob and its RBAC: pinned in full, least privilege checked object by object, and
judged by the real core schemas like every render."""

from __future__ import annotations

from typing import Any

import yaml
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from tenant_support import clone, doc, load_example
from tenantctl.render import render_cluster
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.spec import parse_tenant_documents
from tenantctl.validate import validate_objects


class YamlSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


def rendered(backup: dict[str, Any] | None, images: ImagesSpec | None = None) -> list[dict[str, Any]]:
    docs = clone(load_example("kubevirt.yaml"))
    if backup is not None:
        doc(docs, "TenantCluster")["spec"]["backup"] = backup
    tenant = parse_tenant_documents(docs)
    (cluster,) = tenant.clusters
    return render_cluster(cluster, tenant.pools_of(cluster), None, images=images)


BACKUP = {
    "schedule": "30 1 * * *", "keep": 14,
    "s3": {"endpoint": "https://s3.example.com", "bucket": "tenant-backups", "credentialsSecretName": "backup-s3"},
    "encryption": {"keySecretName": "backup-key"},
}


def backup_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["metadata"]["name"] == "demo-backup"]


def test_the_backup_objects_are_pinned(snapshot: SnapshotAssertion) -> None:
    objects = backup_objects(rendered(BACKUP))
    assert [o["kind"] for o in objects] == ["ServiceAccount", "Role", "RoleBinding", "CronJob"]
    assert yaml.safe_dump_all(objects, sort_keys=False) == snapshot(extension_class=YamlSnapshot)


def test_no_backup_block_renders_nothing_and_leaves_the_rest_alone() -> None:
    without, with_backup = rendered(None), rendered(BACKUP)
    assert backup_objects(without) == []
    assert [o for o in with_backup if o["metadata"]["name"] != "demo-backup"] == without


def test_the_job_may_only_get_what_it_reads_by_name() -> None:
    (role,) = [o for o in rendered(BACKUP) if o["kind"] == "Role" and o["metadata"]["name"] == "demo-backup"]
    for rule in role["rules"]:
        assert rule["verbs"] == ["get"] and rule["resourceNames"], rule
    secrets = next(r for r in role["rules"] if r["resources"] == ["secrets"])["resourceNames"]
    assert secrets == ["backup-key", "backup-s3", "demo-ca", "demo-datastore-certificate", "demo-datastore-config",
                       "demo-front-proxy-ca-certificate", "demo-sa-certificate"]
    assert "demo-talos-secrets" not in secrets and "demo-admin-kubeconfig" not in secrets


def test_the_cronjob_runs_tenantctl_in_utc_never_twice_at_once() -> None:
    (job,) = [o for o in rendered(BACKUP) if o["kind"] == "CronJob"]
    spec = job["spec"]
    assert (spec["schedule"], spec["timeZone"], spec["concurrencyPolicy"]) == ("30 1 * * *", "Etc/UTC", "Forbid")
    (container,) = spec["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["args"][:5] == ["backup", "run", "--namespace", "tenant-demo", "demo"]
    mirrored = rendered(BACKUP, ImagesSpec.model_validate({"registryMirror": "mirror.example/cache"}))
    (job,) = [o for o in mirrored if o["kind"] == "CronJob"]
    (container,) = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["image"].startswith("mirror.example/cache/")


def test_suspend_reaches_the_cronjob() -> None:
    (job,) = [o for o in rendered({**BACKUP, "suspend": True}) if o["kind"] == "CronJob"]
    assert job["spec"]["suspend"] is True


def test_the_objects_pass_the_core_schemas() -> None:
    assert [p for p in validate_objects(backup_objects(rendered(BACKUP)), None)] == []


def restoring(mode: str = "replace") -> tuple[Any, list[dict[str, Any]]]:
    docs = clone(load_example("kubevirt.yaml"))
    tc = doc(docs, "TenantCluster")
    tc["spec"]["backup"] = BACKUP
    tc["spec"]["restore"] = {"from": {"name": "old"}, "mode": mode}
    tenant = parse_tenant_documents(docs)
    (cluster,) = tenant.clusters
    return cluster, render_cluster(cluster, tenant.pools_of(cluster), None)


def test_until_done_the_control_plane_is_held_and_nothing_acts_on_volumes() -> None:
    from tenantctl.render.restore import RestorePhase, hold_for_restore

    cluster, objects = restoring()
    assert [o for o in objects if o["kind"] in ("Deployment",)], "the render has controllers to hold"
    for phase, replicas in ((None, 0), (RestorePhase.IMPORTING, 0), (RestorePhase.FAILED, 0),
                            (RestorePhase.SCRUBBING, 2)):
        held = hold_for_restore(cluster, objects, phase, ImagesSpec())
        (kcp,) = [o for o in held if o["kind"] == "KamajiControlPlane"]
        assert kcp["spec"]["replicas"] == replicas, phase
        assert not [o for o in held if o["kind"] in ("Deployment", "HelmRelease")], phase
        assert [o["metadata"]["name"] for o in held if o["kind"] == "Job"] == ["demo-restore"]
    assert hold_for_restore(cluster, objects, RestorePhase.DONE, ImagesSpec()) == objects


def test_the_restore_job_may_patch_the_pki_only_in_replace_mode() -> None:
    from tenantctl.render.restore import RestorePhase, hold_for_restore

    for mode, patched in (("replace", ["demo-ca", "demo-sa-certificate", "demo-front-proxy-ca-certificate"]),
                          ("clone", [])):
        cluster, objects = restoring(mode)
        held = hold_for_restore(cluster, objects, RestorePhase.IMPORTING, ImagesSpec())
        (role,) = [o for o in held if o["kind"] == "Role" and o["metadata"]["name"] == "demo-restore"]
        patch = [n for r in role["rules"] if "patch" in r["verbs"] for n in r["resourceNames"]]
        assert patch == patched, mode
        assert all(r["resourceNames"] for r in role["rules"])
        assert validate_objects([o for o in held if o["metadata"]["name"] == "demo-restore"], None) == []
