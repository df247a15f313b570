"""What authentication and audit add to the render: pinned in full, judged by the Kamaji provider's CRD,
and what a change does (a policy change renames its ConfigMap and so rolls the apiserver; an issuer
change does not; removing the blocks removes every flag, mount, volume and object)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from tenant_support import clone, doc, load_example
from tenantctl.render import render_cluster
from tenantctl.spec import parse_tenant_documents
from tenantctl.validate import SchemaCatalog, validate_objects


class YamlSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


AUTHN = {"jwt": [{"issuer": {"url": "https://idp.example.com/realms/acme", "audiences": ["acme"]},
                  "claimMappings": {"username": {"claim": "email", "prefix": "oidc:"},
                                    "groups": {"claim": "groups", "prefix": "oidc:"}}}]}


def rendered(api_server: dict[str, Any] | None) -> list[dict[str, Any]]:
    docs = clone(load_example("kubevirt.yaml"))
    tc = doc(docs, "TenantCluster")
    tc["spec"]["version"] = "v1.34"
    if api_server is not None:
        tc["spec"].setdefault("controlPlane", {})["apiServer"] = api_server
    tenant = parse_tenant_documents(docs)
    (cluster,) = tenant.clusters
    return render_cluster(cluster, tenant.pools_of(cluster), None)


def access_part(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    deployment = kcp["spec"]["deployment"]
    return [*(o for o in objects if o["kind"] == "ConfigMap" and "-cloud-config" not in o["metadata"]["name"]),
            {"apiServer": kcp["spec"]["apiServer"], "extraVolumes": deployment["extraVolumes"],
             "extraContainers": [c["name"] for c in deployment["extraContainers"]]}]


def kcp_of(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "KamajiControlPlane")


def test_the_blocks_are_pinned(snapshot: SnapshotAssertion) -> None:
    objects = rendered({"authentication": AUTHN, "audit": {"preset": "RequestBodies", "shipping": "sidecar"}})
    assert yaml.safe_dump_all(access_part(objects), sort_keys=False) == snapshot(extension_class=YamlSnapshot)


def test_the_render_passes_the_kamaji_providers_crd(shared: Path) -> None:
    catalog = SchemaCatalog.from_dirs([shared / "crds" / "kamaji-cp-v0.19.0"])
    for audit in ({"shipping": "stdout"}, {"shipping": "sidecar", "preset": "RequestBodies"}):
        objects = rendered({"authentication": AUTHN, "audit": audit})
        judged = [o for o in objects if o["kind"] in ("KamajiControlPlane", "ConfigMap")]
        assert validate_objects(judged, catalog) == []


def test_an_audit_policy_change_renames_its_configmap_and_an_issuer_change_does_not() -> None:
    metadata = rendered({"authentication": AUTHN, "audit": {"preset": "Metadata"}})
    bodies = rendered({"authentication": AUTHN, "audit": {"preset": "RequestBodies"}})
    names = [{o["metadata"]["name"] for o in r if o["kind"] == "ConfigMap"} for r in (metadata, bodies)]
    assert names[0] - names[1] and names[1] - names[0]
    assert kcp_of(metadata)["spec"]["deployment"] != kcp_of(bodies)["spec"]["deployment"], "the Pod rolls"
    other = {"jwt": [{**AUTHN["jwt"][0], "issuer": {"url": "https://idp.example.com/realms/acme",
                                                     "audiences": ["acme", "ci"], "audienceMatchPolicy": "MatchAny"}}]}
    moved = rendered({"authentication": other, "audit": {"preset": "Metadata"}})
    assert kcp_of(moved) == kcp_of(metadata), "an issuer change reaches the file, not the Pod: it reloads live"
    assert [o for o in moved if o["kind"] == "ConfigMap"] != [o for o in metadata if o["kind"] == "ConfigMap"]


def test_removing_the_blocks_removes_every_flag_mount_volume_and_object() -> None:
    plain = rendered(None)
    assert rendered({"authentication": None, "audit": None}) == plain
    kcp = kcp_of(plain)
    assert "extraArgs" not in kcp["spec"]["apiServer"] and "extraVolumeMounts" not in kcp["spec"]["apiServer"]
    assert [v["name"] for v in kcp["spec"]["deployment"]["extraVolumes"]] == ["talos-ca", "talos-tls-cert"]


def test_the_user_flags_and_the_blocks_flags_sit_side_by_side_sorted() -> None:
    objects = rendered({"extraArgs": {"max-requests-inflight": "800"}, "audit": {}})
    assert kcp_of(objects)["spec"]["apiServer"]["extraArgs"] == [
        "--audit-log-format=json", "--audit-log-path=-",
        "--audit-policy-file=/etc/kubernetes/tenantctl/audit/policy.yaml", "--max-requests-inflight=800",
    ]


def test_before_v1_34_the_beta_api_is_rendered() -> None:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["spec"].setdefault("controlPlane", {})["apiServer"] = {"authentication": AUTHN}
    tenant = parse_tenant_documents(docs)
    (cluster,) = tenant.clusters
    (config,) = [o for o in render_cluster(cluster, [], None) if o["metadata"]["name"] == "demo-apiserver-authn"]
    assert yaml.safe_load(config["data"]["config.yaml"])["apiVersion"] == "apiserver.config.k8s.io/v1beta1"
