"""`tenantctl audit`: clean on every example, and red wherever a credential could leak.

Fake tokens are planted in every spec field a user controls; for each, either the spec refuses the
value or audit reports it. Nothing in between: a token that reaches a render unreported is a failure.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tenant_support import EXAMPLES, doc, load_example
from tenantctl.audit import audit_objects, audit_tenant, credential_values, credentials_of
from tenantctl.cli import app
from tenantctl.problems import InvalidInput, Severity
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.render.chart_sources import ChartSourcesSpec
from tenantctl.spec import parse_observed, parse_tenant_documents

Docs = list[dict[str, Any]]
TOKEN_ID = "root@pam!leak"
TOKEN_UUID = "0b6c1f2e-1111-4222-8333-444455556666"
TOKEN_HEADER = f"PVEAPIToken={TOKEN_ID}={TOKEN_UUID}"
EXAMPLE_PAIRS = [("proxmox.yaml", "observed-proxmox.yaml"), ("kubevirt.yaml", "observed-kubevirt.yaml")]


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["audit", *args])


def errors(problems: list[Any]) -> list[Any]:
    return [p for p in problems if p.severity is Severity.ERROR]


def audit_docs(docs: Docs, observed: Docs | None = None, values: tuple[str, ...] = ()) -> list[Any]:
    obs = parse_observed(observed) if observed is not None else None
    return audit_tenant(parse_tenant_documents(docs), obs, None, values)


# --- clean ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("example", "observed"), EXAMPLE_PAIRS)
def test_every_example_is_clean_from_the_cli(example: str, observed: str) -> None:
    for extra in ([], ["--observed", str(EXAMPLES / observed)]):
        result = run("-f", str(EXAMPLES / example), *extra)
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("ok: no credential reaches a tenant")
        assert result.stderr == ""


# --- tenant-bound content -------------------------------------------------------------------------


def test_a_release_naming_a_credentials_secret_is_a_finding(tmp_path: Path) -> None:
    docs = load_example("proxmox.yaml")
    doc(docs, "TenantCluster")["spec"]["proxmox"]["csi"]["storageClasses"][0]["name"] = "pve-csi-acme"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    result = run("-f", str(spec), "--observed", str(EXAMPLES / "observed-proxmox.yaml"))
    assert result.exit_code == 1
    assert (
        "HelmRelease/tenant-acme/acme-csi.spec.values.storageClass[0].name: "
        "tenant-bound content names the credentials Secret 'pve-csi-acme'"
    ) in result.stderr


def test_bootstrap_objects_are_tenant_bound_too() -> None:
    """A cluster named like a credentials Secret puts that name into the tenant's bootstrap labels."""
    docs = load_example("proxmox.yaml")
    doc(docs, "TenantCluster")["spec"]["proxmox"]["credentialsSecretName"] = "acme"
    found = errors(audit_docs(docs, load_example("observed-proxmox.yaml")))
    assert any(
        p.path.startswith("ClusterRoleBinding/tenantctl:talos-node-bootstrapper.metadata.labels")
        and "names the credentials Secret 'acme'" in p.message
        for p in found
    ), found


def _objects(
    example: str = "proxmox.yaml", observed: str = "observed-proxmox.yaml"
) -> tuple[Any, list[Any], list[Any]]:
    tenant = parse_tenant_documents(load_example(example))
    obs = parse_observed(load_example(observed))
    objects = render_tenant(tenant, obs)
    bootstrap = [
        o for c in tenant.clusters for o in render_tenant_bootstrap(c, obs[(c.metadata.namespace, c.metadata.name)])
    ]
    creds = [c for cluster in tenant.clusters for c in credentials_of(cluster)]
    return objects, bootstrap, creds


def _release(objects: list[Any], name: str = "acme-csi") -> dict[str, Any]:
    found: dict[str, Any] = next(o for o in objects if o["kind"] == "HelmRelease" and o["metadata"]["name"] == name)
    return found


def test_values_from_a_credentials_secret_is_a_finding() -> None:
    objects, bootstrap, creds = _objects()
    _release(objects)["spec"]["valuesFrom"] = [{"kind": "Secret", "name": "pve-csi-acme"}]
    found = errors(audit_objects(objects, bootstrap, creds))
    assert [p.path for p in found] == ["HelmRelease/tenant-acme/acme-csi.spec.valuesFrom[0].name"]


def test_a_token_inside_an_object_applied_in_the_tenant_is_found_at_its_path() -> None:
    objects, bootstrap, creds = _objects()
    secret = next(o for o in bootstrap if o["kind"] == "Secret")
    secret.setdefault("stringData", {})["leak"] = "PVEAPIToken=capmox@pve!capi=x"
    found = errors(audit_objects(objects, bootstrap, creds))
    assert {(p.path, p.message) for p in found} == {
        (f"Secret/kube-system/{secret['metadata']['name']}.stringData.leak", "carries a Proxmox API token header"),
        (f"Secret/kube-system/{secret['metadata']['name']}.stringData.leak",
         "carries a Proxmox API token id (user@realm!name)"),
    }


def test_a_release_without_a_spec_hands_nothing_to_the_tenant() -> None:
    objects, bootstrap, creds = _objects()
    del _release(objects)["spec"]
    assert errors(audit_objects(objects, bootstrap, creds)) == []


def test_a_post_renderer_naming_a_credentials_secret_is_a_finding() -> None:
    objects, bootstrap, creds = _objects()
    _release(objects)["spec"]["postRenderers"][0]["kustomize"]["patches"][0]["patch"] += (
        "- op: add\n  path: /spec/x\n  value: pve-ccm-acme\n"
    )
    found = errors(audit_objects(objects, bootstrap, creds))
    assert found and all("pve-ccm-acme" in p.message for p in found)


# --- management side ------------------------------------------------------------------------------


def test_each_controller_must_mount_its_own_secret() -> None:
    objects, bootstrap, creds = _objects()
    ccm = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "acme-pccm")
    volume = next(v for v in ccm["spec"]["template"]["spec"]["volumes"] if v["name"] == "proxmox-credentials")
    volume["secret"]["secretName"] = "pve-csi-acme"
    assert [(p.path, p.message) for p in errors(audit_objects(objects, bootstrap, creds))] == [
        ("Deployment/tenant-acme/acme-pccm",
         "the ccm controller must name its own Secret 'pve-ccm-acme', found ['pve-csi-acme']"),
        ("Deployment/tenant-acme/acme-pccm.spec.template.spec.volumes[0].secret.secretName",
         "names the csi credentials Secret 'pve-csi-acme' outside the object that uses it"),
    ]


def test_a_controller_that_mounts_no_volume_at_all_is_a_finding() -> None:
    """A post-render edit that drops the pod's volumes leaves the controller without its Secret."""
    objects, bootstrap, creds = _objects()
    ccm = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "acme-pccm")
    del ccm["spec"]["template"]["spec"]["volumes"]
    messages = [p.message for p in errors(audit_objects(objects, bootstrap, creds))]
    assert "the ccm controller must name its own Secret 'pve-ccm-acme', found []" in messages


def test_a_proxmox_cluster_without_a_credentials_ref_is_a_finding() -> None:
    """capmox then falls back to its own global credentials: not the tenant's Secret, and told so."""
    objects, bootstrap, creds = _objects()
    cluster = next(o for o in objects if o["kind"] == "ProxmoxCluster")
    del cluster["spec"]["credentialsRef"]
    messages = [p.message for p in errors(audit_objects(objects, bootstrap, creds))]
    assert [m for m in messages if "capmox" in m] == [
        "the capmox controller must name its own Secret 'capmox-acme', found []"]


def test_a_kubevirt_tenant_with_a_stray_proxmox_block_has_no_proxmox_credentials() -> None:
    """The substrate decides which controllers run: a proxmox block left on a KubeVirt tenant renders
    none of them, so there is no Secret to hold them to."""
    docs = load_example("kubevirt.yaml")
    doc(docs, "TenantCluster")["spec"]["proxmox"] = doc(load_example("proxmox.yaml"), "TenantCluster")["spec"][
        "proxmox"]
    (cluster,) = parse_tenant_documents(docs).clusters
    assert cluster.spec.proxmox is not None
    assert credentials_of(cluster) == []


def test_a_missing_controller_is_a_finding() -> None:
    objects, bootstrap, creds = _objects()
    objects = [o for o in objects if o["metadata"]["name"] != "acme-pcsi-controller"]
    messages = [p.message for p in errors(audit_objects(objects, bootstrap, creds))]
    assert messages == ["the csi controller is not rendered"]


def test_every_controller_is_checked_after_one_that_is_missing() -> None:
    """The capmox owner (the ProxmoxCluster) comes first: gone, the others are still held to their Secret."""
    objects, bootstrap, creds = _objects()
    objects = [o for o in objects if o["kind"] != "ProxmoxCluster"]
    ccm = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "acme-pccm")
    volume = next(v for v in ccm["spec"]["template"]["spec"]["volumes"] if v["name"] == "proxmox-credentials")
    volume["secret"]["secretName"] = "elsewhere"
    messages = [p.message for p in errors(audit_objects(objects, bootstrap, creds))]
    assert "the capmox controller is not rendered" in messages
    assert "the ccm controller must name its own Secret 'pve-ccm-acme', found ['elsewhere']" in messages


def test_sharing_a_secret_between_controllers_warns(tmp_path: Path) -> None:
    docs = load_example("proxmox.yaml")
    px = doc(docs, "TenantCluster")["spec"]["proxmox"]
    px["ccm"]["credentialsSecretName"] = px["csi"]["credentialsSecretName"] = "capmox-acme"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    result = run("-f", str(spec), "--observed", str(EXAMPLES / "observed-proxmox.yaml"))
    assert result.exit_code == 0, result.stderr
    assert ("warning: Secret/tenant-acme/capmox-acme: shared by acme/capmox, acme/ccm, acme/csi: one token for "
            "several controllers widens the blast radius of each (scope a token per controller; see the Proxmox "
            "token privileges)\n") in result.stderr


def test_naming_a_shared_secret_elsewhere_names_every_controller_that_uses_it() -> None:
    docs = load_example("proxmox.yaml")
    px = doc(docs, "TenantCluster")["spec"]["proxmox"]
    px["ccm"]["credentialsSecretName"] = px["csi"]["credentialsSecretName"] = "pve-shared-acme"
    tenant = parse_tenant_documents(docs)
    creds = [c for cluster in tenant.clusters for c in credentials_of(cluster)]
    stray = {"kind": "ConfigMap", "metadata": {"name": "notes", "namespace": "tenant-acme"},
             "data": {"secret": "pve-shared-acme"}}
    found = errors(audit_objects([*render_tenant(tenant, {}), stray], [], creds))
    assert [(p.path, p.message) for p in found] == [(
        "ConfigMap/tenant-acme/notes.data.secret",
        "names the ccm/csi credentials Secret 'pve-shared-acme' outside the object that uses it",
    )]


def test_a_disabled_csi_secret_is_not_counted_as_shared() -> None:
    docs = load_example("proxmox.yaml")
    px = doc(docs, "TenantCluster")["spec"]["proxmox"]
    px["csi"] = {"enabled": False, "credentialsSecretName": "pve-ccm-acme"}
    assert audit_docs(docs, load_example("observed-proxmox.yaml")) == []


# --- token values anywhere -------------------------------------------------------------------------

Mutation = Callable[[Docs, Docs], None]


def _tc(path: str, value: str) -> Mutation:
    def mutate(docs: Docs, observed: Docs) -> None:
        target = doc(docs, "TenantCluster")
        *parents, leaf = path.split(".")
        for key in parents:
            target = target.setdefault(key, {}) if not key.isdigit() else target[int(key)]  # type: ignore[index]
        target[leaf] = value

    return mutate


def _pool(path: str, value: Any) -> Mutation:
    def mutate(docs: Docs, observed: Docs) -> None:
        target = doc(docs, "NodePool")
        *parents, leaf = path.split(".")
        for key in parents:
            target = target.setdefault(key, {})
        target[leaf] = value

    return mutate


def _by_template_id(path: str, value: Any) -> Mutation:
    """`_pool`'s plant in a pool that selects its template by templateID instead of templateTags."""
    plant = _pool(path, value)

    def mutate(docs: Docs, observed: Docs) -> None:
        proxmox = doc(docs, "NodePool")["spec"]["proxmox"]
        del proxmox["templateTags"]
        proxmox["templateID"] = 9000
        plant(docs, observed)

    return mutate


def _obs(path: str, value: str) -> Mutation:
    def mutate(docs: Docs, observed: Docs) -> None:
        target = observed[0]
        *parents, leaf = path.split(".")
        for key in parents:
            target = target[key]
        target[leaf] = value

    return mutate


# (example, field, mutation): every string a user or the observation feeds in.
PX, KV = "proxmox.yaml", "kubevirt.yaml"
PLANTS: list[tuple[str, str, Mutation]] = [
    (PX, "metadata.name", _tc("metadata.name", TOKEN_UUID)),
    (PX, "spec.controlPlane.dataStoreName", _tc("spec.controlPlane.dataStoreName", TOKEN_HEADER)),
    (PX, "spec.talos.imageFactoryURL", _tc("spec.talos.imageFactoryURL", f"https://{TOKEN_ID}@f.x")),
    (PX, "spec.talos.installerRepository", _tc("spec.talos.installerRepository", f"r.x/{TOKEN_UUID}")),
    (PX, "spec.network.clusterDomain", _tc("spec.network.clusterDomain", TOKEN_UUID)),
    (PX, "spec.proxmox.credentialsSecretName", _tc("spec.proxmox.credentialsSecretName", TOKEN_ID)),
    (PX, "spec.proxmox.allowedNodes[0]", _tc("spec.proxmox.allowedNodes", [TOKEN_ID])),  # type: ignore[arg-type]
    (PX, "spec.proxmox.ccm.credentialsSecretName", _tc("spec.proxmox.ccm.credentialsSecretName", TOKEN_ID)),
    (PX, "spec.proxmox.csi.credentialsSecretName", _tc("spec.proxmox.csi.credentialsSecretName", TOKEN_ID)),
    (PX, "spec.proxmox.csi.storageClasses[0].name", _tc("spec.proxmox.csi.storageClasses.0.name", TOKEN_ID)),
    (
        PX,
        "spec.proxmox.csi.storageClasses[0].storage",
        _tc("spec.proxmox.csi.storageClasses.0.storage", TOKEN_HEADER),
    ),
    # sourceNode reaches the render only beside templateID (beside templateTags capmox refuses it).
    (PX, "NodePool.spec.proxmox.sourceNode", _by_template_id("spec.proxmox.sourceNode", TOKEN_ID)),
    (PX, "NodePool.spec.proxmox.pool", _pool("spec.proxmox.pool", TOKEN_UUID)),
    (PX, "NodePool.spec.proxmox.network.bridge", _pool("spec.proxmox.network.bridge", TOKEN_HEADER)),
    (PX, "NodePool.spec.proxmox.templateTags", _pool("spec.proxmox.templateTags", [TOKEN_UUID])),
    (PX, "ObservedState.endpoint", _obs("endpoint", TOKEN_ID)),
    (PX, "ObservedState.kubernetesCA", _obs("kubernetesCA", TOKEN_HEADER)),
    (PX, "ObservedState.talosSecrets.token", _obs("talosSecrets.token", TOKEN_HEADER)),
    (PX, "ObservedState.talosSecrets.bootstrapTokenSecret", _obs("talosSecrets.bootstrapTokenSecret", "a@b!c")),
    (KV, "spec.osImage", _tc("spec.osImage", f"https://{TOKEN_ID}@img.example/talos.raw.xz")),
    (KV, "NodePool.spec.kubevirt.storageClass", _pool("spec.kubevirt.storageClass", TOKEN_UUID)),
    (KV, "NodePool.spec.kubevirt.instanceType", _pool("spec.kubevirt.instanceType", TOKEN_HEADER)),
    (KV, "ObservedState.clusterDNS", _obs("clusterDNS", TOKEN_ID)),
    (KV, "ObservedState.managementClusterDomain", _obs("managementClusterDomain", TOKEN_UUID)),
]


def _plant(example: str, field: str, mutate: Mutation) -> str:
    """'refused' by the spec, 'absent' from every rendered object, or 'reported' by audit; else it fails."""
    docs = load_example(example)
    observed = load_example(f"observed-{example}")
    if field == "metadata.name":
        for d in docs:
            if d["kind"] == "NodePool":
                d["spec"]["cluster"] = TOKEN_UUID
        observed[0]["metadata"]["name"] = TOKEN_UUID
    mutate(docs, observed)
    try:
        tenant, obs = parse_tenant_documents(docs), parse_observed(observed)
        found = errors(audit_tenant(tenant, obs))
        rendered = render_tenant(tenant, obs) + [
            o for c in tenant.clusters for o in render_tenant_bootstrap(c, obs[(c.metadata.namespace, c.metadata.name)])
        ]
    except InvalidInput:
        return "refused"
    present = any(t in yaml.safe_dump_all(rendered) for t in (TOKEN_ID, TOKEN_UUID, "PVEAPIToken"))
    assert not (present and not found), f"a token planted in {field} reached the render unreported"
    assert all("carries" in p.message or "names" in p.message for p in found)
    return "reported" if found else "absent"


@pytest.mark.parametrize(("example", "field", "mutate"), PLANTS, ids=[f"{e}:{f}" for e, f, _ in PLANTS])
def test_a_planted_token_is_refused_absent_or_reported(example: str, field: str, mutate: Mutation) -> None:
    assert _plant(example, field, mutate) in {"refused", "absent", "reported"}


def test_the_plant_table_is_not_vacuous() -> None:
    """Most plants must reach a render and be reported; a table of refusals would prove nothing."""
    outcomes = [_plant(e, f, m) for e, f, m in PLANTS]
    assert outcomes.count("reported") >= 12, outcomes


def test_a_token_in_a_chart_source_url_is_reported() -> None:
    charts = ChartSourcesSpec.model_validate(
        {"sources": {"coredns": {"kind": "HelmRepository", "url": f"https://{TOKEN_ID}@h.example", "chart": "c",
                                 "version": "1"}}}
    )
    tenant = parse_tenant_documents(load_example("proxmox.yaml"))
    found = errors(audit_tenant(tenant, None, charts))
    assert [p.path for p in found] == ["HelmRepository/tenantctl-system/tenantctl-coredns.spec.url"]


def test_a_token_in_any_rendered_field_is_reported() -> None:
    """Beyond the spec: plant the token into every string of a clean render, one at a time."""
    objects, bootstrap, creds = _objects()
    assert audit_objects(objects, bootstrap, creds) == []
    planted = 0
    for index, obj in enumerate(objects):
        for path in _string_paths(obj):
            mutated = copy.deepcopy(objects)
            _set_path(mutated[index], path, TOKEN_UUID)
            found = errors(audit_objects(mutated, bootstrap, creds))
            assert any("UUID" in p.message for p in found), (obj["kind"], path)
            planted += 1
    assert planted > 300


def _string_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _string_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _string_paths(v, (*path, i))]
    return [path] if isinstance(value, str) else []


def _set_path(obj: Any, path: tuple[Any, ...], value: str) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


# --- literal values from the real Secrets --------------------------------------------------------


def _secret(token: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "pve-csi-acme", "namespace": "tenant-acme"},
        "data": {
            "token_secret": base64.b64encode(token.encode()).decode(),
            "region": base64.b64encode(b"pve").decode(),
        },
    }


def test_a_literal_secret_value_of_any_shape_is_found(tmp_path: Path) -> None:
    token = "no-known-shape-but-secret"
    docs = load_example("proxmox.yaml")
    doc(docs, "TenantCluster")["spec"]["proxmox"]["csi"]["storageClasses"][0]["storage"] = token
    spec, secrets = tmp_path / "spec.yaml", tmp_path / "secrets.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    secrets.write_text(yaml.safe_dump(_secret(token)))
    observed = str(EXAMPLES / "observed-proxmox.yaml")
    assert run("-f", str(spec), "--observed", observed).exit_code == 0
    result = run("-f", str(spec), "--observed", observed, "--credentials", str(secrets))
    assert result.exit_code == 1
    assert "acme-csi.spec.values.storageClass[0].storage: carries the value of a credentials Secret" in result.stderr


def test_a_secret_value_inside_a_longer_string_is_found_where_it_sits() -> None:
    """A token pasted into a config blob (a values string, a tenant-side file) is still that token."""
    value = "no-known-shape-but-secret"
    objects, bootstrap, creds = _objects()
    _release(objects)["spec"]["values"]["extraConfig"] = f"[global]\nsecret = {value}\nregion = pve\n"
    secret = next(o for o in bootstrap if o["kind"] == "Secret")
    secret.setdefault("stringData", {})["config.ini"] = f"password={value};"
    found = {(p.path, p.message) for p in errors(audit_objects(objects, bootstrap, creds, [value]))}
    assert found == {
        ("HelmRelease/tenant-acme/acme-csi.spec.values.extraConfig", "carries the value of a credentials Secret"),
        (f"Secret/kube-system/{secret['metadata']['name']}.stringData.config.ini",
         "carries the value of a credentials Secret"),
    }
    assert not errors(audit_objects(*_objects(), [value])), "the same render without the pasted value is clean"


def test_credential_values_take_token_keys_and_skip_short_ones() -> None:
    assert credential_values([_secret("long-enough-token")]) == ["long-enough-token"]
    assert credential_values([_secret("short")]) == []
    assert credential_values([{"kind": "ConfigMap", "data": {"token_secret": "x" * 20}}]) == []
    assert credential_values([{"kind": "Secret", "stringData": {"password": "hunter2-hunter2"}}]) == ["hunter2-hunter2"]


def _secret_manifest(data: dict[str, str] | None = None, string_data: dict[str, str] | None = None) -> dict[str, Any]:
    """A Secret manifest; `data` values are given already encoded, as a manifest carries them."""
    secret: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}}
    if data is not None:
        secret["data"] = data
    if string_data is not None:
        secret["stringData"] = string_data
    return secret


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_a_secret_after_another_kind_is_still_read() -> None:
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"token": "not-a-secret"}}
    assert credential_values([other, _secret_manifest(string_data={"token": "value-after-a-configmap"})]) == [
        "value-after-a-configmap"
    ]


def test_an_entry_that_is_not_base64_is_skipped_and_the_next_still_read() -> None:
    """The API server refuses such `data`; decoding it leniently would hunt for garbage (or a near miss)."""
    lenient = base64.b64encode(b"decoded-only-leniently").decode()
    broken = lenient[:4] + "*" + lenient[4:]
    secret = _secret_manifest(data={"a-broken": broken, "token": _b64("read-after-the-broken-one")})
    assert credential_values([secret]) == ["read-after-the-broken-one"]


def test_a_value_of_exactly_the_minimum_length_counts() -> None:
    assert credential_values([_secret_manifest(string_data={"token": "12345678"})]) == ["12345678"]
    assert credential_values([_secret_manifest(string_data={"token": "1234567"})]) == []


@pytest.mark.parametrize("which", [0, 1, 2])
def test_the_value_of_each_of_several_credentials_is_searched_for(which: int) -> None:
    """The capmox, CCM and CSI Secrets each hold a token: a paste of any one of them is found (issue 59:
    every test planted the only value given)."""
    values = ["capmox-token-value-1234", "ccm-token-value-56789", "csi-token-value-abcdef"]
    objects, bootstrap, creds = _objects()
    _release(objects)["spec"]["values"]["extraConfig"] = f"secret = {values[which]}\n"
    found = {(p.path, p.message) for p in errors(audit_objects(objects, bootstrap, creds, values))}
    assert found == {("HelmRelease/tenant-acme/acme-csi.spec.values.extraConfig",
                      "carries the value of a credentials Secret")}
