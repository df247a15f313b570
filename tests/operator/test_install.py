"""`tenantctl install`: valid against core schemas, and as narrow as the operator's calls."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tenant_support import EXAMPLES
from tenantctl.cli import app
from tenantctl.operator.install import install_objects
from tenantctl.validate import validate_objects

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
    cluster_role = next(o for o in objects if o["kind"] == "ClusterRole")
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


def test_the_cluster_role_grants_no_wildcards_and_no_escalation() -> None:
    cluster_role = next(o for o in install_objects() if o["kind"] == "ClusterRole")
    for rule in cluster_role["rules"]:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"] and "*" not in rule["apiGroups"]
        assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"])


def test_the_deployment_runs_the_operator_command_as_its_service_account() -> None:
    objects = install_objects(namespace="ops", image="example.org/tenantctl:1")
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "tenantctl-operator"
    assert pod["containers"][0]["image"] == "example.org/tenantctl:1"
    assert pod["containers"][0]["args"][0] == "operator"
    assert deployment["metadata"]["namespace"] == "ops"
    container = pod["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"], "client certificates load from /tmp"


def test_tenant_control_planes_are_only_read_and_patched() -> None:
    cluster_role = next(o for o in install_objects() if o["kind"] == "ClusterRole")
    rules = [r for r in cluster_role["rules"] if "tenantcontrolplanes" in r["resources"]]
    assert rules == [{"apiGroups": ["kamaji.clastix.io"], "resources": ["tenantcontrolplanes"],
                      "verbs": ["get", "patch"]}]
    crds = [r for r in cluster_role["rules"] if "customresourcedefinitions" in r["resources"]]
    assert crds and "get" in crds[0]["verbs"], "the pass reads the TenantControlPlane CRD"
