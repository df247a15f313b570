"""`tenantctl install`: valid against core schemas, and as narrow as the operator's calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tenant_support import EXAMPLES
from tenantctl.cli import app
from tenantctl.operator.install.objects import install_objects
from tenantctl.validate import SchemaCatalog, validate_objects

pytestmark = [pytest.mark.timeout(30)]


def printed(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["install", *args])
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_install_output_validates_against_core_schemas() -> None:
    objects = printed("-f", str(EXAMPLES / "proxmox.yaml"), "-f", str(EXAMPLES / "kubevirt.yaml"))
    assert [o["kind"] for o in objects][:2] == ["CustomResourceDefinition", "CustomResourceDefinition"]
    problems = validate_objects(objects)
    assert not problems, "\n".join(str(p) for p in problems)


def test_talos_config_template_delete_is_scoped_to_each_tenants_own_names() -> None:
    objects = printed("-f", str(EXAMPLES / "kubevirt.yaml"))
    for cluster_role in _operator_roles(objects):
        for rule in cluster_role["rules"]:
            if "talosconfigtemplates" in rule["resources"]:
                assert "delete" not in rule["verbs"]
    role = next(o for o in objects if o["kind"] == "Role")
    assert role["metadata"]["namespace"] == "tenant-demo"
    assert role["rules"] == [{
        "apiGroups": ["bootstrap.cluster.x-k8s.io"],
        "resources": ["talosconfigtemplates"],
        "resourceNames": ["demo-big", "demo-md0"],
        "verbs": ["delete"],
    }]
    binding = next(o for o in objects if o["kind"] == "RoleBinding")
    account = {"kind": "ServiceAccount", "name": "tenantctl-operator", "namespace": "tenantctl-system"}
    assert binding["subjects"] == [account]


def _operator_roles(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    roles = [o for o in objects if o["kind"] == "ClusterRole"
             and o["metadata"]["name"] in ("tenantctl-operator", "tenantctl-operator-tenant")]
    assert len(roles) == 2
    return roles


def test_the_cluster_roles_grant_no_wildcards_and_no_escalation() -> None:
    """`bind` only of roles named one by one; never `escalate` or `impersonate`, never a wildcard."""
    for cluster_role in _operator_roles(install_objects()):
        for rule in cluster_role["rules"]:
            assert "*" not in rule["verbs"] and "*" not in rule["resources"] and "*" not in rule["apiGroups"]
            assert not {"escalate", "impersonate"} & set(rule["verbs"])
            if "bind" in rule["verbs"]:
                assert rule["verbs"] == ["bind"] and rule["resources"] == ["clusterroles"] and rule["resourceNames"]


def test_no_secret_workload_or_rbac_write_is_held_cluster_wide() -> None:
    """Cluster-wide the operator creates no Secret, account, workload or Role; its one ClusterRole right
    beyond reading is deleting a tenant's own of an earlier release (held to that by a policy)."""
    (cluster_wide, _) = _operator_roles(install_objects())
    assert cluster_wide["metadata"]["name"] == "tenantctl-operator"
    writes = {(g, r, v) for rule in cluster_wide["rules"] for g in rule["apiGroups"] for r in rule["resources"]
              for v in rule["verbs"] if v not in ("get", "list", "watch", "bind")}
    kinds = {("", "secrets"), ("", "serviceaccounts"), ("apps", "deployments"), ("batch", "jobs"),
             ("batch", "cronjobs"), ("rbac.authorization.k8s.io", "roles"),
             ("rbac.authorization.k8s.io", "rolebindings")}
    assert not {(g, r) for g, r, _ in writes} & kinds
    assert {v for g, r, v in writes if r == "clusterroles"} == {"delete"}


def test_the_statefulset_runs_the_operator_command_as_its_service_account() -> None:
    objects = install_objects(namespace="ops", image="example.org/tenantctl:1")
    deployment = next(o for o in objects if o["kind"] == "StatefulSet")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "tenantctl-operator"
    assert pod["containers"][0]["image"] == "example.org/tenantctl:1"
    assert pod["containers"][0]["args"][0] == "operator"
    assert deployment["metadata"]["namespace"] == "ops"
    container = pod["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"], "client certificates load from /tmp"


def test_install_output_validates_with_the_cert_manager_crds(shared: Path, tmp_path: Path) -> None:
    objects = printed("-f", str(EXAMPLES / "kubevirt.yaml"), "--shards", "2", "--replicas", "2")
    # kopf ships its peering CRD only as an example manifest: judge the peerings by the one we render.
    kopf_crd = next(o for o in objects if o["metadata"]["name"] == "clusterkopfpeerings.kopf.dev")
    (tmp_path / "kopf.yaml").write_text(yaml.safe_dump(kopf_crd))
    problems = validate_objects(objects, SchemaCatalog.from_dirs([shared / "crds", tmp_path]))
    assert not problems, "\n".join(str(p) for p in problems)
    assert {"Issuer", "Certificate", "ValidatingWebhookConfiguration"} <= {o["kind"] for o in objects}


def test_the_webhook_is_served_by_the_operator_with_cert_managers_certificate() -> None:
    from tenantctl.operator.install.webhook import CLUSTER_WEBHOOK, POOL_WEBHOOK

    objects = install_objects(namespace="ops")
    by_kind = {o["kind"]: o for o in objects if o["kind"] != "CustomResourceDefinition"}
    config, service = by_kind["ValidatingWebhookConfiguration"], by_kind["Service"]
    certificate, deployment = by_kind["Certificate"], by_kind["StatefulSet"]
    injected = config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
    assert injected == f"ops/{certificate['metadata']['name']}"
    assert certificate["spec"]["issuerRef"]["name"] == by_kind["Issuer"]["metadata"]["name"]
    assert f"{service['metadata']['name']}.ops.svc" in certificate["spec"]["dnsNames"]
    scoped: dict[str, Any] = {}
    for hook in config["webhooks"]:
        assert hook["failurePolicy"] == "Fail" and hook["sideEffects"] == "None"
        assert 1 <= hook["timeoutSeconds"] <= 30
        assert hook["clientConfig"]["service"]["name"] == service["metadata"]["name"]
        assert hook["clientConfig"]["service"]["namespace"] == "ops"
        (rule,) = hook["rules"]
        assert rule["apiGroups"] == ["tenantctl.io"] and rule["scope"] == "Namespaced"
        scoped[rule["resources"][0]] = (hook["clientConfig"]["service"]["path"], rule["operations"])
    assert scoped == {
        "tenantclusters": (f"/{CLUSTER_WEBHOOK}", ["CREATE", "UPDATE", "DELETE"]),
        "nodepools": (f"/{POOL_WEBHOOK}", ["CREATE", "UPDATE"]),
    }
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    port = next(p for p in container["ports"] if p["name"] == service["spec"]["ports"][0]["targetPort"])
    args = container["args"]
    assert args[args.index("--webhook-port") + 1] == str(port["containerPort"])
    cert_dir = args[args.index("--webhook-cert-dir") + 1]
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == cert_dir)
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    assert volume["secret"]["secretName"] == certificate["spec"]["secretName"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_tenant_control_planes_are_only_read_watched_and_patched() -> None:
    cluster_role, tenant_role = _operator_roles(install_objects())
    rules = [r for r in cluster_role["rules"] if "tenantcontrolplanes" in r["resources"]]
    assert rules == [{"apiGroups": ["kamaji.clastix.io"], "resources": ["tenantcontrolplanes"],
                      "verbs": ["get", "list", "watch"]}]
    rules = [r for r in tenant_role["rules"] if "tenantcontrolplanes" in r["resources"]]
    assert rules == [{"apiGroups": ["kamaji.clastix.io"], "resources": ["tenantcontrolplanes"], "verbs": ["patch"]}]
    crds = [r for r in cluster_role["rules"] if "customresourcedefinitions" in r["resources"]]
    assert crds and "get" in crds[0]["verbs"], "the pass reads the TenantControlPlane CRD"


def test_install_carries_the_platform_crd_and_reads_platforms_and_applies_chart_sources() -> None:
    from tenantctl.operator.install.objects import install_objects

    objects = install_objects("tenantctl-system", "example.org/tenantctl:1", [])
    crd = next(o for o in objects if o["kind"] == "CustomResourceDefinition" and o["metadata"]["name"] ==
               "platforms.tenantctl.io")
    assert crd["spec"]["scope"] == "Cluster"
    rules = [r for o in objects if o["kind"] == "ClusterRole" for r in o.get("rules", [])]
    assert {"apiGroups": ["tenantctl.io"], "resources": ["platforms"], "verbs": ["get", "list", "watch"]} in rules
    assert any(r["apiGroups"] == ["source.toolkit.fluxcd.io"] and "delete" not in r["verbs"] for r in rules)


def test_the_security_docs_show_the_rights_the_operator_is_given() -> None:
    """docs/security.md's rights table is the one `install` renders from (issue 61)."""
    from tenantctl.operator.install.rights import rights_table

    text = (Path(__file__).resolve().parents[3] / "docs" / "security.md").read_text()
    shown = text.split("<!-- rights-table:begin -->\n", 1)[1].split("<!-- rights-table:end -->", 1)[0]
    assert shown == rights_table()


def test_the_operator_namespace_enforces_restricted_and_its_pods_take_traffic_only_on_their_ports() -> None:
    """Pod Security `restricted` on the operator's namespace; its NetworkPolicy admits the webhook and the
    health probe from anywhere (the API server and kubelet are no Pods) and /metrics from one namespace."""
    objects = install_objects(namespace="ops", metrics_namespace="prometheus")
    namespace = next(o for o in objects if o["kind"] == "Namespace")
    assert {namespace["metadata"]["labels"][f"pod-security.kubernetes.io/{m}"] for m in ("enforce", "audit", "warn")} \
        == {"restricted"}
    policy = next(o for o in objects if o["kind"] == "NetworkPolicy")
    assert policy["metadata"]["namespace"] == "ops" and policy["spec"]["policyTypes"] == ["Ingress"]
    workload = next(o for o in objects if o["kind"] == "StatefulSet")
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= workload["spec"]["template"]["metadata"][
        "labels"].items()
    ports = {p["name"]: p["containerPort"] for p in workload["spec"]["template"]["spec"]["containers"][0]["ports"]}
    anywhere, metrics = policy["spec"]["ingress"]
    assert "from" not in anywhere and {p["port"] for p in anywhere["ports"]} == {ports["webhook"], ports["health"]}
    assert [p["port"] for p in metrics["ports"]] == [ports["metrics"]]
    assert metrics["from"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "prometheus"}}}]
