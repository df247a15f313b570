"""Refusals of `spec.controlPlane.resources` and `spec.controlPlane.apiServer.extraArgs`, from the CLI.

Each case mutates the valid kubevirt example in one way; removing the check it guards turns it red.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example
from tenantctl.cli import app
from tenantctl.spec.apiserver_flags import OWNED_APISERVER_FLAGS

AT = "TenantCluster/demo.spec.controlPlane"

# Written out from clastix/kamaji 26.3.6-edge, not from our table: every flag
# `internal/builders/controlplane/deployment.go` `buildKubeAPIServerCommand` sets (its etcd flags from the
# DataStore), and the one `konnectivity_server.go` adds. A flag dropped from OWNED_APISERVER_FLAGS is then
# still refused here, and the test fails.
KAMAJI_SETS = (
    "advertise-address", "allow-privileged", "authorization-mode", "client-ca-file", "enable-admission-plugins",
    "enable-bootstrap-token-auth", "etcd-cafile", "etcd-certfile", "etcd-compaction-interval", "etcd-keyfile",
    "etcd-prefix", "etcd-servers", "etcd-servers-overrides", "kubelet-client-certificate", "kubelet-client-key",
    "kubelet-preferred-address-types", "proxy-client-cert-file", "proxy-client-key-file",
    "requestheader-allowed-names", "requestheader-client-ca-file", "requestheader-extra-headers-prefix",
    "requestheader-group-headers", "requestheader-username-headers", "secure-port", "service-account-issuer",
    "service-account-key-file", "service-account-signing-key-file", "service-cluster-ip-range", "tls-cert-file",
    "tls-private-key-file", "egress-selector-config-file",
)


def _render(tmp_path: Path, control_plane: dict[str, Any]) -> Any:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["spec"]["controlPlane"] = control_plane
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    return CliRunner().invoke(app, ["render", "-f", str(spec)])


def _problems(result: Any) -> dict[str, str]:
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    return dict(line.split(": ", 1) for line in result.stderr.splitlines() if ": " in line)


CASES: dict[str, tuple[dict[str, Any], str, str]] = {
    "unknown preset, with the closest name": (
        {"resources": {"apiServer": {"preset": "c1.medum"}}},
        f"{AT}.resources.apiServer.preset",
        "'c1.medum' is not a preset; did you mean 'c1.medium'? (known: <t1|c1|s1|u1|m1>.<nano|micro|small|",
    ),
    "preset and explicit values together": (
        {"resources": {"scheduler": {"preset": "t1.small", "limits": {"cpu": "1"}}}},
        f"{AT}.resources.scheduler.preset",
        "a preset and explicit requests/limits are exclusive",
    ),
    "cpu limit below its request": (
        {"resources": {"apiServer": {"requests": {"cpu": "2"}, "limits": {"cpu": "1500m"}}}},
        f"{AT}.resources.apiServer.limits.cpu",
        "limit '1500m' is below the request '2'",
    ),
    "memory limit below its request, across units": (
        {"resources": {"konnectivity": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1000Mi"}}}},
        f"{AT}.resources.konnectivity.limits.memory",
        "limit '1000Mi' is below the request '1Gi'",
    ),
    "a quantity that does not parse": (
        {"resources": {"controllerManager": {"requests": {"memory": "lots"}}}},
        f"{AT}.resources.controllerManager.requests.memory",
        "'lots' is not a Kubernetes quantity",
    ),
    "a zero quantity": (
        {"resources": {"controllerManager": {"limits": {"cpu": "0"}}}},
        f"{AT}.resources.controllerManager.limits.cpu",
        "'0' must be positive",
    ),
    "explicit values that name nothing: BestEffort": (
        {"resources": {"apiServer": {"requests": {}, "limits": {}}}},
        f"{AT}.resources.apiServer",
        "would run BestEffort",
    ),
    "a flag Kamaji derives from the DataStore": (
        {"apiServer": {"extraArgs": {"etcd-servers": "https://elsewhere:2379"}}},
        f"{AT}.apiServer.extraArgs.etcd-servers",
        "--etcd-servers is set by Kamaji, from the DataStore",
    ),
    "a flag Kamaji derives from the TenantControlPlane": (
        {"apiServer": {"extraArgs": {"tls-cert-file": "/var/lib/x.crt"}}},
        f"{AT}.apiServer.extraArgs.tls-cert-file",
        "--tls-cert-file is set by Kamaji, from the TenantControlPlane",
    ),
    "the konnectivity egress selector": (
        {"apiServer": {"extraArgs": {"egress-selector-config-file": "/x"}}},
        f"{AT}.apiServer.extraArgs.egress-selector-config-file",
        "set by Kamaji's konnectivity addon",
    ),
    "a flag written with its dashes": (
        {"apiServer": {"extraArgs": {"--feature-gates": "X=true"}}},
        f"{AT}.apiServer.extraArgs.--feature-gates",
        "is not a flag name: lower-case letters and digits joined by single dashes, without the leading --; "
        "write it as 'feature-gates'",
    ),
    "an owned flag written with its dashes is still named as owned": (
        {"apiServer": {"extraArgs": {"--etcd-servers": "https://elsewhere:2379"}}},
        f"{AT}.apiServer.extraArgs.--etcd-servers",
        "--etcd-servers is set by Kamaji, from the DataStore",
    ),
    "a flag name with upper case": (
        {"apiServer": {"extraArgs": {"Audit-Log-Path": "-"}}},
        f"{AT}.apiServer.extraArgs.Audit-Log-Path",
        "'Audit-Log-Path' is not a flag name",
    ),
    "a flag name with an underscore": (
        {"apiServer": {"extraArgs": {"audit_log_path": "-"}}},
        f"{AT}.apiServer.extraArgs.audit_log_path",
        "is not a flag name",
    ),
    "a flag name with a double dash inside": (
        {"apiServer": {"extraArgs": {"audit--log": "-"}}},
        f"{AT}.apiServer.extraArgs.audit--log",
        "is not a flag name",
    ),
}


@pytest.mark.parametrize(("control_plane", "path", "fragment"), CASES.values(), ids=CASES.keys())
def test_refusal_names_the_path_and_value(
    control_plane: dict[str, Any], path: str, fragment: str, tmp_path: Path, snapshot: SnapshotAssertion
) -> None:
    problems = _problems(_render(tmp_path, control_plane))
    assert path in problems, problems
    assert fragment in problems[path]
    assert problems == snapshot, "every problem, word for word"


def test_the_owned_flags_are_exactly_the_ones_kamaji_sets() -> None:
    assert sorted(OWNED_APISERVER_FLAGS) == sorted(KAMAJI_SETS)


@pytest.mark.parametrize("flag", KAMAJI_SETS)
def test_every_owned_flag_is_refused(flag: str, tmp_path: Path) -> None:
    problems = _problems(_render(tmp_path, {"apiServer": {"extraArgs": {flag: "x"}}}))
    assert f"--{flag} is set by" in problems[f"{AT}.apiServer.extraArgs.{flag}"]


def test_every_problem_is_reported_in_one_pass(tmp_path: Path) -> None:
    problems = _problems(
        _render(
            tmp_path,
            {
                "resources": {
                    "apiServer": {"preset": "huge"},
                    "scheduler": {"requests": {"cpu": "1"}, "limits": {"cpu": "500m"}},
                },
                "apiServer": {"extraArgs": {"etcd-prefix": "/x", "--v": "4"}},
            },
        )
    )
    assert {
        f"{AT}.resources.apiServer.preset",
        f"{AT}.resources.scheduler.limits.cpu",
        f"{AT}.apiServer.extraArgs.etcd-prefix",
        f"{AT}.apiServer.extraArgs.--v",
    } <= set(problems)


def test_an_unknown_field_under_resources_suggests_the_name(tmp_path: Path) -> None:
    problems = _problems(_render(tmp_path, {"resources": {"apiserver": {"preset": "c1.large"}}}))
    assert "did you mean 'apiServer'" in problems[f"{AT}.resources.apiserver"]


@pytest.mark.parametrize(
    "control_plane",
    [
        {"resources": {"apiServer": {"preset": "m1.4xlarge"}, "scheduler": {}}},
        {"resources": {"apiServer": {"requests": {"cpu": "250m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}}}},
        {"resources": {"konnectivity": {"limits": {"cpu": 1, "memory": "128Mi"}}}},
        {"apiServer": {"extraArgs": {"feature-gates": "X=true", "audit-log-path": "-", "v": "2", "profiling": ""}}},
    ],
)
def test_accepted_control_plane_settings(control_plane: dict[str, Any], tmp_path: Path) -> None:
    result = _render(tmp_path, control_plane)
    assert result.exit_code == 0, result.stderr
