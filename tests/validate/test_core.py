"""Built-in kinds: judged by Kubernetes' own strict OpenAPI at a pinned version, plus metadata syntax."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from kubernetes_validate import utils as kv_utils

from tenantctl.problems import Problem
from tenantctl.validate import DEFAULT_KUBERNETES_VERSION, validate_objects
from tenantctl.validate.core import is_builtin_api_version, schema_version

NS = "tenant-acme"


def meta(name: str, namespace: str | None = NS, **extra: Any) -> dict[str, Any]:
    return {"name": name, **({"namespace": namespace} if namespace else {}), **extra}


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": meta("web", labels={"app.kubernetes.io/name": "web"}),
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "serviceAccountName": "web",
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "name": "http"}],
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                    }
                ],
            },
        },
    },
}

VALID_CORE_OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(NS, None)},
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta("creds"),
        "type": "Opaque",
        "data": {"token": "c2VjcmV0"},
        "stringData": {"user": "root@pam"},
    },
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("settings"), "data": {"a.yaml": "x: 1\n"}},
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta("web")},
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta("web"),
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]},
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta("data"),
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
    DEPLOYMENT,
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta("reader"),
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta("reader"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "web", "namespace": NS}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": meta("system:tenantctl:reader", None),
        "rules": [],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta("tenantctl-reader", None),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:tenantctl:reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "web", "namespace": NS}],
    },
]


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def test_the_pinned_kubernetes_version_ships_with_kubernetes_validate() -> None:
    assert DEFAULT_KUBERNETES_VERSION in kv_utils.all_versions()
    assert schema_version(DEFAULT_KUBERNETES_VERSION) == DEFAULT_KUBERNETES_VERSION
    assert tuple(int(p) for p in DEFAULT_KUBERNETES_VERSION.split(".")[:2]) <= (1, 36)


def test_valid_core_objects_pass() -> None:
    assert validate_objects(VALID_CORE_OBJECTS) == []


@pytest.mark.parametrize(
    ("api_version", "builtin"),
    [
        ("v1", True),
        ("apps/v1", True),
        ("rbac.authorization.k8s.io/v1", True),
        ("cluster.x-k8s.io/v1beta1", False),
        ("cert-manager.io/v1", False),
        ("example.k8s.io/v1", False),
    ],
)
def test_built_in_groups_come_from_the_kubernetes_definitions(api_version: str, builtin: bool) -> None:
    assert is_builtin_api_version(api_version) is builtin


def deployment(**container: Any) -> dict[str, Any]:
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["template"]["spec"]["containers"][0].update(container)
    return obj


def test_a_deployment_with_an_unknown_field_fails() -> None:
    problem = only(validate_objects([deployment(imagePullPolcy="Always")]))
    assert problem.path == "Deployment/web.spec.template.spec.containers[0].imagePullPolcy"
    assert problem.message.startswith("unknown field 'imagePullPolcy'; did you mean 'imagePullPolicy'?")


def test_a_deployment_with_a_wrong_type_fails() -> None:
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["replicas"] = "2"
    problem = only(validate_objects([obj]))
    assert problem.path == "Deployment/web.spec.replicas"
    assert problem.message == 'Invalid value: "2": must be integer or null, not string'


def test_a_missing_required_core_field_fails() -> None:
    obj = copy.deepcopy(DEPLOYMENT)
    del obj["spec"]["selector"]
    assert only(validate_objects([obj])).path == "Deployment/web.spec.selector"


def test_secret_data_must_be_base64() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": meta("creds"), "data": {"token": "not base64!"}}
    problem = only(validate_objects([secret]))
    assert problem.path == "Secret/creds.data.token"
    assert "not a valid byte" in problem.message


def test_a_core_label_value_that_is_too_long_fails() -> None:
    obj = copy.deepcopy(DEPLOYMENT)
    obj["metadata"]["labels"]["tenantctl.io/cluster"] = "c" * 64
    problem = only(validate_objects([obj]))
    assert problem.path == "Deployment/web.metadata.labels[tenantctl.io/cluster]"
    assert "(64 chars)" in problem.message and "no more than 63 characters" in problem.message


def test_unknown_metadata_keys_on_core_kinds_fail() -> None:
    obj = copy.deepcopy(DEPLOYMENT)
    obj["metadata"]["label"] = {"a": "b"}
    assert only(validate_objects([obj])).path == "Deployment/web.metadata.label"


@pytest.mark.parametrize(
    ("obj", "path", "fragment"),
    [
        (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": meta("tenant.acme", None)},
            "Namespace/tenant.acme.metadata.name",
            "must be a DNS label",
        ),
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": meta("1web"), "spec": {}},
            "Service/1web.metadata.name",
            "must be an RFC 1035 label",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("Settings")},
            "ConfigMap/Settings.metadata.name",
            "must be a DNS subdomain",
        ),
        (
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta("a/b")},
            "Role/a/b.metadata.name",
            "must be a path segment",
        ),
        (
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta("reader")},
            "ClusterRole/reader.metadata.namespace",
            "cluster-scoped",
        ),
    ],
)
def test_names_follow_each_kinds_rule(obj: dict[str, Any], path: str, fragment: str) -> None:
    problem = only(validate_objects([obj]))
    assert (problem.path, fragment in problem.message) == (path, True), problem


def test_a_kind_kubernetes_does_not_have_is_an_error() -> None:
    gizmo = {"apiVersion": "apps/v1", "kind": "Gizmo", "metadata": meta("g")}
    assert (
        only(validate_objects([gizmo])).message
        == f"Kubernetes {DEFAULT_KUBERNETES_VERSION} has no kind Gizmo in apps/v1"
    )


def test_the_kubernetes_version_selects_the_schemas() -> None:
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["template"]["spec"]["resources"] = {"limits": {"cpu": "1"}}  # pod-level resources: 1.32+
    assert validate_objects([obj]) == []
    problem = only(validate_objects([obj], kubernetes_version="1.28.4"))
    assert problem.path == "Deployment/web.spec.template.spec.resources"


def test_a_kubernetes_version_without_schemas_is_refused() -> None:
    with pytest.raises(ValueError, match=r"has no schemas for Kubernetes 1\.10"):
        validate_objects([DEPLOYMENT], kubernetes_version="1.10")


def test_core_false_skips_built_in_kinds() -> None:
    assert validate_objects([deployment(bogus=1)], core=False) == []


def test_a_kubernetes_version_may_carry_the_v_of_the_spec_and_a_patch() -> None:
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["template"]["spec"]["resources"] = {"limits": {"cpu": "1"}}
    assert validate_objects([obj], kubernetes_version="v1.36.2") == validate_objects([obj], kubernetes_version="1.36")
    assert len(validate_objects([obj], kubernetes_version="v1.28")) == 1


@pytest.mark.parametrize("version", ["1", "latest", "V1.36", "1.x"])
def test_a_string_that_is_no_kubernetes_version_is_refused_naming_it(version: str) -> None:
    with pytest.raises(ValueError) as refused:
        validate_objects([DEPLOYMENT], kubernetes_version=version)
    assert str(refused.value) == f"not a Kubernetes version: {version!r} (expected e.g. 1.36.0)"
