"""The CLI's face, as a new user meets it (issue 38): each friction found by trying it, with its test."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from cli.test_cli_conventions import commands
from tenantctl.cli import app
from tenantctl.cli.root import build_app
from tenantctl.operator.install.image import DEFAULT_IMAGE
from tenantctl.problems import InvalidInput
from tenantctl.spec import parse_tenant_documents

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def _groups() -> list[list[str]]:
    """Every command group of the whole app, found by walking it (a new group is swept without a list)."""
    found: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        # typer carries click's classes in a module of its own: a group is what lists commands.
        if hasattr(command, "list_commands"):
            found.append(path)
            context = type(command).context_class(command)
            for name in command.list_commands(context):  # the lazy root loads a group when asked for it
                sub = command.get_command(context, name)
                if sub is not None and not sub.hidden:
                    walk(sub, [*path, name])

    walk(typer.main.get_command(build_app()), [])
    return found


GROUPS = _groups()


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env=env)
    return result.exit_code, result.output


def test_the_sweep_reaches_every_group() -> None:
    """The groups a user meets in `--help`, `backup` among them: a walk that missed some would pass vacuously."""
    names = {" ".join(g) for g in GROUPS}
    assert {"", "backup", "doctor", "providers", "secret", "vendor"} <= names, names


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: " ".join(g) or "tenantctl")
def test_every_command_summary_fits_uncut(group: list[str]) -> None:
    code, out = _run([*group, "--help"])
    assert code == 0, out
    listed = out.split("Commands:", 1)[1].strip().splitlines()
    assert listed and not [line for line in listed if line.rstrip().endswith("...")], out


def test_a_bad_choice_is_refused_in_plain_words() -> None:
    code, out = _run(["render", "-f", str(EXAMPLES / "kubevirt.yaml"), "-o", "xml"])
    assert code == 2
    assert "Invalid value for '-o' / '--output': 'xml' is not one of 'yaml', 'json'." in out
    assert "Value error" not in out


def test_the_pools_of_a_refused_cluster_are_not_told_it_is_missing(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all((EXAMPLES / "kubevirt.yaml").read_text()))
    docs[0]["spec"]["controlPlane"]["replicas"] = "many"
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    code, out = _run(["validate", "-f", str(spec)])
    assert code == 2
    assert out.strip().splitlines() == [
        "TenantCluster/demo.spec.controlPlane.replicas: Input should be a valid integer, unable to parse string as "
        "an integer (got 'many')"]


def test_a_missing_pool_cluster_is_still_named() -> None:
    """The other side of the line above: a pool whose cluster is not in the input at all."""
    docs = list(yaml.safe_load_all((EXAMPLES / "kubevirt.yaml").read_text()))
    with pytest.raises(InvalidInput) as refused:
        parse_tenant_documents([docs[0], {**docs[1], "spec": {**docs[1]["spec"], "cluster": "other"}}])
    assert "no TenantCluster 'other' in namespace 'tenant-demo' in the input" in str(refused.value)


def test_no_kubeconfig_given_says_so_and_what_to_do(tmp_path: Path) -> None:
    code, out = _run(["get"], env={"HOME": str(tmp_path), "KUBECONFIG": "", "KUBERNETES_SERVICE_HOST": ""})
    assert code == 2
    assert out.strip() == (f"kubeconfig: none given and '{tmp_path}/.kube/config' does not exist: pass --kubeconfig "
                           "PATH or set $KUBECONFIG (in a pod: its ServiceAccount is used)")


@pytest.mark.parametrize(("text", "said"), [
    ("a: [\n", "is not YAML: line 2, column 1: expected the node content, but found '<stream end>'"),
    ("just words\n", "holds a YAML string, not a kubeconfig (a mapping with clusters, users and contexts)"),
    ("", "holds nothing, not a kubeconfig (a mapping with clusters, users and contexts)"),
])
def test_a_kubeconfig_that_is_not_one_is_said_on_one_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    code, out = _run(["get", "--kubeconfig", str(path)])
    assert code == 2
    assert out.strip() == f"--kubeconfig: '{path}' {said}"


def test_a_silent_management_cluster_is_said_to_be_silent(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "x",
              "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
              "users": [{"name": "u", "user": {"token": "t"}}],
              "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}]}
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    code, out = _run(["get", "--kubeconfig", str(path)])
    assert code == 1
    assert out.startswith(f"management cluster: https://127.0.0.1:{port} did not answer: GET "), out
    assert "0 Unreachable" not in out


def test_install_help_shows_the_image_it_installs() -> None:
    code, out = _run(["install", "--help"])
    assert code == 0
    assert DEFAULT_IMAGE in " ".join(out.split()), out


def test_a_platform_given_as_the_tenant_input_points_at_platform() -> None:
    code, out = _run(["render", "-f", str(EXAMPLES / "platform.yaml")])
    assert code == 2
    assert out.strip() == "input: no TenantCluster in the input; the Platform in it is read with --platform FILE"


PLACEHOLDER = re.compile(r"[A-Z][A-Z_/]*|[a-z0-9.-]+(\|[a-z0-9.-]+)+")


def test_every_value_takes_one_placeholder_style() -> None:
    """An upper-case word for what the value is, or the choices as a|b; never typer's `<path>`, `<str>` or
    `<list[Path]>`, which say only the Python type."""
    unstyled = []
    for name, command in commands(typer.main.get_command(build_app())):
        for param in command.params:
            if param.param_type_name != "option" or param.is_flag:
                continue
            if not (param.metavar and PLACEHOLDER.fullmatch(param.metavar)):
                unstyled.append(f"{name} {'/'.join(param.opts)}: {param.metavar!r}")
    assert unstyled == []
