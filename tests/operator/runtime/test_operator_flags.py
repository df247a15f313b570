"""Every flag of `tenantctl operator` and `tenantctl install` is checked before anything connects or
renders, and one run names every bad flag and environment variable with its value: exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from operator_support import kubeconfig_for
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.install.objects import DEFAULT_IMAGE
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.flags import image_problem, install_plan, operator_start
from tenantctl.operator.runtime.logs import LogFormat
from tenantctl.problems import InvalidInput

NO_ENV: dict[str, str | None] = {"KUBECONFIG": None, "KUBERNETES_SERVICE_HOST": None, "TENANTCTL_SHARD": None,
                                 "TENANTCTL_PEERING": None, "TENANTCTL_REQUEUE": None}


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env={**NO_ENV, **(env or {})})


def refusals(result: Result) -> list[str]:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    return result.stderr.splitlines()


@pytest.fixture()
def kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig_for("http://127.0.0.1:9"))
    return path


def connect() -> Connection:
    return Connection.from_server("http://127.0.0.1:9")


def test_one_run_of_the_operator_names_every_bad_flag_and_variable(tmp_path: Path) -> None:
    lines = refusals(run(
        "operator", "--kubeconfig", str(tmp_path / "absent"), "--resync", "0", "--liveness", "ftp://x/healthz",
        "--webhook-port", "70000", "--webhook-cert-dir", str(tmp_path), "--metrics-port", "-1",
        "--log-format", "xml", "--management-cluster-domain", "Bad Domain", "--helm-release-timeout", "soon",
        env={"TENANTCTL_SHARD": "3/2", "TENANTCTL_PEERING": "Not A Name", "TENANTCTL_REQUEUE": "5m\n"},
    ))
    assert [line.split(": ", 1)[0] for line in lines] == [
        "--resync",
        "--helm-release-timeout ($TENANTCTL_HELM_RELEASE_TIMEOUT)",
        "--requeue ($TENANTCTL_REQUEUE)",
        "--shard ($TENANTCTL_SHARD)",
        "--liveness",
        "--webhook-port",
        "--metrics-port",
        "--webhook-cert-dir",
        "--peering ($TENANTCTL_PEERING)",
        "--management-cluster-domain",
        "--log-format",
        "--kubeconfig",
    ]
    assert "'5m\\n'" in lines[2] and "'3/2'" in lines[3] and "'xml'" in lines[10]


@pytest.mark.parametrize(
    ("flag", "value", "fragment"),
    [
        ("--resync", "-5", "positive number of seconds"),
        ("--resync", "nan", "positive number of seconds"),
        ("--resync", "0.0", "positive number of seconds"),
        ("--shard", "0/0", "index"),
        ("--shard", "a/b", "I/N"),
        ("--shard", "1/2\n", "whitespace"),
        ("--requeue", "0s", "positive duration"),
        ("--requeue", " 5m", "whitespace"),
        ("--liveness", "http://0.0.0.0:notaport/healthz", "http://host:port/path"),
        ("--liveness", "http://0.0.0.0:8080", "http://host:port/path"),
        ("--webhook-port", "0", "1-65535"),
        ("--webhook-port", "9443x", "1-65535"),
        ("--metrics-port", "65536", "0-65535"),
        ("--metrics-port", "9" * 5000, "0-65535"),
        ("--peering", "-bad-", "DNS subdomain"),
        ("--management-cluster-domain", "cluster.local.", "DNS domain"),
        ("--log-format", "JSON", "text, json"),
        ("--kamaji-version", "latest", "not a Kamaji edge release"),
        ("--pool-rollout-timeout", "0s", "positive duration"),
    ],
)
def test_each_bad_value_is_refused_naming_its_flag(flag: str, value: str, fragment: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        operator_start({flag: value}, connect)
    (problem,) = refused.value.problems
    assert problem.path.split(" ")[0] == flag and fragment in problem.message and repr(value)[:40] in problem.message


def test_good_values_become_the_settings(tmp_path: Path) -> None:
    for name in ("tls.crt", "tls.key"):
        (tmp_path / name).write_text("x")
    start = operator_start(
        {"--resync": "30.5", "--shard": "1/3", "--peering": "tenantctl-operator-shard-1-of-3", "--webhook-port": "9443",
         "--webhook-cert-dir": str(tmp_path), "--metrics-port": "9090", "--liveness": "http://0.0.0.0:8080/healthz",
         "--log-format": "json", "--management-cluster-domain": "mgmt.example", "--requeue": "20s",
         "--kamaji-version": "26.6.5-edge", "--pool-rollout-timeout": "1h"},
        connect,
    )
    settings = start.settings
    assert (settings.resync_interval, settings.shard, settings.requeue_delay) == (30.5, Shard(1, 3), 20.0)
    assert settings.webhook is not None and (settings.webhook.port, settings.webhook.cert_dir) == (9443, str(tmp_path))
    assert settings.metrics is not None and settings.metrics.port == 9090
    assert settings.management_cluster_domain == "mgmt.example"
    assert (settings.kamaji_release, settings.pool_rollout_timeout) == ("26.6.5-edge", 3600.0)
    assert (start.peering, start.liveness, start.log_format) == (
        "tenantctl-operator-shard-1-of-3", "http://0.0.0.0:8080/healthz", LogFormat.JSON
    )


def test_unset_flags_keep_the_defaults() -> None:
    start = operator_start({}, connect)
    assert (start.settings.webhook, start.settings.metrics, start.peering, start.liveness) == (None, None, None, None)
    assert start.settings.resync_interval == 60.0 and start.log_format is LogFormat.TEXT
    assert (start.settings.kamaji_release, start.settings.pool_rollout_timeout) == (None, 1800.0)


def test_another_shards_peering_is_refused_and_a_name_of_ones_own_is_not() -> None:
    with pytest.raises(InvalidInput, match=r"shard 1/2, not of --shard 0/2: replicas of two shards"):
        operator_start({"--shard": "0/2", "--peering": "tenantctl-operator-shard-1-of-2"}, connect)
    with pytest.raises(InvalidInput, match=r"shard 0/3, not of --shard 0/2"):
        operator_start({"--shard": "0/2", "--peering": "tenantctl-operator-shard-0-of-3"}, connect)
    assert operator_start({"--shard": "0/2", "--peering": "my-operators"}, connect).peering == "my-operators"


@pytest.mark.parametrize(
    ("values", "refused"),
    [
        ({"--metrics-port": "8080", "--liveness": "http://0.0.0.0:8080/healthz"}, "--metrics-port"),
        ({"--webhook-port": "9090", "--metrics-port": "9090"}, "--webhook-port"),
        ({"--webhook-port": "80", "--liveness": "http://0.0.0.0/healthz"}, "--webhook-port"),
    ],
)
def test_two_listeners_on_one_port_are_refused(values: dict[str, str], refused: str) -> None:
    with pytest.raises(InvalidInput) as error:
        operator_start(values, connect)
    (problem,) = error.value.problems
    assert problem.path == refused and "is also" in problem.message


def test_metrics_on_any_free_port_collides_with_nothing() -> None:
    assert operator_start({"--metrics-port": "0", "--webhook-port": "9443"}, connect).settings.metrics is not None


def test_the_webhook_certificate_directory_needs_both_files_and_the_webhook(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("x")
    with pytest.raises(InvalidInput) as error:
        operator_start({"--webhook-cert-dir": str(tmp_path)}, connect)
    assert [p.message for p in error.value.problems] == [
        f"{str(tmp_path)!r} has no tls.key", "serves the webhook's certificate: give --webhook-port too"
    ]
    with pytest.raises(InvalidInput, match="is not a directory"):
        operator_start({"--webhook-cert-dir": str(tmp_path / "tls.crt"), "--webhook-port": "9443"}, connect)


@pytest.mark.parametrize(
    ("content", "flag", "fragment"),
    [
        (None, "--kubeconfig", "does not exist"),
        ("a: [", "--kubeconfig", "is not YAML"),
        ("- a\n", "--kubeconfig", "holds a YAML list, not a kubeconfig"),
        ("kind: Config\n", "--kubeconfig", "it has no 'clusters'"),
    ],
)
def test_a_kubeconfig_that_cannot_be_used_is_a_refusal(
    tmp_path: Path, content: str | None, flag: str, fragment: str
) -> None:
    path = tmp_path / "kubeconfig"
    if content is not None:
        path.write_text(content)
    (line,) = refusals(run("operator", "--kubeconfig", str(path)))
    assert line.startswith(f"{flag}: ") and fragment in line


def test_a_context_the_kubeconfig_lacks_and_a_kubeconfig_variable_are_named(kubeconfig: Path, tmp_path: Path) -> None:
    (line,) = refusals(run("operator", "--kubeconfig", str(kubeconfig), "--context", "nope"))
    assert line.startswith("--context: 'nope'")
    (line,) = refusals(run("get", env={"KUBECONFIG": str(tmp_path / "absent")}))
    assert line == f"$KUBECONFIG: '{tmp_path / 'absent'}' does not exist"


def test_one_run_of_install_names_every_bad_flag(tmp_path: Path) -> None:
    lines = refusals(run(
        "install", "--namespace", "Bad_NS", "--image", "tenantctl:dev", "--shards", "0", "--replicas", "x",
        "-f", str(tmp_path / "absent.yaml"),
    ))
    assert [line.split(": ", 1)[0] for line in lines] == [
        "--namespace", "--image", "--shards", "--replicas", str(tmp_path / "absent.yaml")
    ]


@pytest.mark.parametrize(
    ("flag", "value", "fragment"),
    [
        ("--namespace", "a" * 64, "DNS label"),
        ("--namespace", "ns\n", "whitespace"),
        ("--image", "ghcr.io/tenantctl/tenantctl:v 1", "not a tag"),
        ("--image", "ghcr.io/tenantctl/tenantctl@sha256:abc", "not a digest"),
        ("--image", "Ghcr.io/Tenantctl", "fully qualified"),
        ("--shards", "1000", "1-999"),
        ("--shards", "-1", "1-999"),
        ("--replicas", "0", "1-999"),
        ("--replicas", "1.5", "1-999"),
    ],
)
def test_each_bad_install_value_is_refused_naming_its_flag(flag: str, value: str, fragment: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        install_plan({flag: value}, DEFAULT_IMAGE)
    (problem,) = refused.value.problems
    assert problem.path == flag and fragment in problem.message


@pytest.mark.parametrize(
    "image", [DEFAULT_IMAGE, "registry.example.org:5000/team/tenantctl", f"{DEFAULT_IMAGE}@sha256:{'a' * 64}",
              f"localhost/tenantctl@sha256:{'b' * 64}"],
)
def test_fully_qualified_images_are_taken(image: str) -> None:
    assert image_problem(image) is None
    assert install_plan({"--image": image}, DEFAULT_IMAGE).image == image


def test_install_defaults() -> None:
    plan = install_plan({}, DEFAULT_IMAGE)
    assert (plan.namespace, plan.image, plan.shards, plan.replicas) == ("tenantctl-system", DEFAULT_IMAGE, 1, 1)


def test_the_platform_name_is_a_kubernetes_name_and_defaults_to_default() -> None:
    assert operator_start({}, connect).settings.platform_name == "default"
    assert operator_start({"--platform-name": "site-a"}, connect).settings.platform_name == "site-a"
    with pytest.raises(InvalidInput) as refused:
        operator_start({"--platform-name": "Site A"}, connect)
    assert refused.value.problems[0].path == "--platform-name"
