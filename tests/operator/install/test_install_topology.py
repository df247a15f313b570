"""`tenantctl install --shards N --replicas N --service-monitor`: one peered StatefulSet per shard, metrics."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import tenantctl
from tenant_support import REPO
from tenantctl.cli import app
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.config.tuning import TUNABLES, tuned_settings
from tenantctl.operator.install.objects import DEFAULT_IMAGE, IMAGE_REPOSITORY, METRICS_PORT, install_objects
from tenantctl.operator.runtime.flags import image_problem

pytestmark = [pytest.mark.timeout(30)]


def printed(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["install", *args])
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def env_of(workload: dict[str, Any]) -> dict[str, Any]:
    container = workload["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_one_statefulset_per_shard_each_with_the_replicas_and_its_own_peering() -> None:
    objects = printed("--shards", "3", "--replicas", "2")
    workloads = of_kind(objects, "StatefulSet")
    assert [w["metadata"]["name"] for w in workloads] == [f"tenantctl-operator-shard-{i}" for i in range(3)]
    peerings = {p["metadata"]["name"] for p in of_kind(objects, "ClusterKopfPeering")}
    selectors = set()
    for index, workload in enumerate(workloads):
        spec = workload["spec"]
        assert spec["replicas"] == 2 and spec["podManagementPolicy"] == "Parallel"
        env = env_of(workload)
        assert Shard.parse(env["TENANTCTL_SHARD"]) == Shard(index, 3)
        assert env["TENANTCTL_PEERING"] in peerings
        assert env["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}, "the peering priority's ordinal"
        assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
        selectors.add(tuple(sorted(spec["selector"]["matchLabels"].items())))
    assert len(peerings) == len(selectors) == 3, "shards must neither pause each other nor share pods"


def test_a_single_shard_keeps_the_operator_name_and_one_replica() -> None:
    (workload,) = of_kind(install_objects(), "StatefulSet")
    assert workload["metadata"]["name"] == "tenantctl-operator"
    assert workload["spec"]["replicas"] == 1
    assert env_of(workload)["TENANTCTL_SHARD"] == "0/1"


@pytest.mark.parametrize("flag", ["--shards", "--replicas"])
def test_zero_shards_or_replicas_are_refused(flag: str) -> None:
    result = CliRunner().invoke(app, ["install", flag, "0"])
    assert result.exit_code == 2


def test_the_peering_crd_and_rbac_are_rendered() -> None:
    objects = install_objects()
    crd = next(o for o in of_kind(objects, "CustomResourceDefinition") if o["spec"]["group"] == "kopf.dev")
    assert crd["spec"]["scope"] == "Cluster" and crd["spec"]["names"]["kind"] == "ClusterKopfPeering"
    role = next(o for o in of_kind(objects, "ClusterRole") if o["metadata"]["name"] == "tenantctl-operator")
    (rule,) = [r for r in role["rules"] if r["apiGroups"] == ["kopf.dev"]]
    assert rule["resources"] == ["clusterkopfpeerings"]
    assert set(rule["verbs"]) == {"get", "list", "watch", "patch"}
    names = [o["kind"] for o in objects]
    assert names.index("CustomResourceDefinition") < names.index("ClusterKopfPeering") < names.index("StatefulSet")


def test_the_bounds_are_environment_variables_at_their_defaults() -> None:
    (workload,) = of_kind(install_objects(), "StatefulSet")
    env = env_of(workload)
    values = {t.flag: env[t.env] for t in TUNABLES}
    assert tuned_settings(values) == OperatorSettings(), "the rendered values parse back to the defaults"
    assert env["TENANTCTL_REQUEUE"] == "15s" and env["TENANTCTL_TENANT_UNREACHABLE_GRACE"] == "300s"


def test_the_metrics_port_is_exposed_and_served() -> None:
    objects = install_objects()
    (workload,) = of_kind(objects, "StatefulSet")
    container = workload["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "metrics", "containerPort": METRICS_PORT} in container["ports"]
    args = container["args"]
    assert args[args.index("--metrics-port") + 1] == str(METRICS_PORT)
    assert args[args.index("--log-format") + 1] == "json"
    service = next(s for s in of_kind(objects, "Service") if s["metadata"]["name"] == "tenantctl-operator-metrics")
    assert service["spec"]["ports"][0]["targetPort"] == "metrics"
    assert service["spec"]["selector"].items() <= workload["spec"]["template"]["metadata"]["labels"].items()
    assert workload["spec"]["serviceName"] == service["metadata"]["name"]
    assert not of_kind(objects, "ServiceMonitor"), "only with --service-monitor"


def test_the_service_monitor_scrapes_the_metrics_service() -> None:
    objects = printed("--service-monitor", "--namespace", "ops")
    (monitor,) = of_kind(objects, "ServiceMonitor")
    service = next(s for s in of_kind(objects, "Service") if s["metadata"]["name"] == "tenantctl-operator-metrics")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == "ops"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["ops"]}
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "30s"}]


def test_the_rendered_image_is_the_package_version() -> None:
    assert importlib.metadata.version("tenantctl") == tenantctl.__version__
    assert f"{IMAGE_REPOSITORY}:{tenantctl.__version__}" == DEFAULT_IMAGE
    (workload,) = of_kind(printed(), "StatefulSet")
    assert workload["spec"]["template"]["spec"]["containers"][0]["image"] == DEFAULT_IMAGE


def test_the_default_image_is_a_reference_install_itself_accepts() -> None:
    """A package version with a local part (`0.2.0+g1234`) would make a tag no registry takes."""
    assert image_problem(DEFAULT_IMAGE) is None


def test_make_image_tags_the_build_with_the_rendered_reference() -> None:
    recipe = (REPO / "Makefile").read_text().split("\nimage:", 1)[1].split("\n\n", 1)[0]
    assert "from tenantctl.operator.install.objects import DEFAULT_IMAGE" in recipe and "-t $$tag" in recipe


def test_an_image_given_runs_every_shard() -> None:
    image = "registry.example.org/mirror/tenantctl:0.1.0"
    workloads = of_kind(printed("--shards", "3", "--image", image), "StatefulSet")
    assert [w["spec"]["template"]["spec"]["containers"][0]["image"] for w in workloads] == [image] * 3
