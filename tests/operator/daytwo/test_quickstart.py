"""The README's "Run it on a management cluster" runs, line by line, against an emulated management cluster.

Every `tenantctl` command of the block runs as written (with `$KUBECONFIG` pointing at the emulator);
`kubectl apply`/`delete` are played by storing or deleting the objects, as the API server would; what
the controllers write in between (Kamaji's admin kubeconfig) is seeded where the README says to wait.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_emulator import KubeEmulator, declare, path_of
from operator_support import kubeconfig_for, seed_control_plane
from test_doctor_management import complete
from typer.testing import CliRunner

from tenant_support import REPO, load_example
from tenantctl.cli import app

pytestmark = [pytest.mark.timeout(60)]

INSTALLED = [
    ("apps/v1/statefulsets", "StatefulSet", True, ()),
    ("admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False, ()),
    ("kopf.dev/v1/clusterkopfpeerings", "ClusterKopfPeering", False, ()),
    ("monitoring.coreos.com/v1/servicemonitors", "ServiceMonitor", True, ()),
]


def quickstart() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Run it on a management cluster", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the README's quickstart block"
    commands = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [part.strip() for line in commands if line for part in line.split("&&")]


def _path(mgmt: KubeEmulator, obj: dict[str, Any]) -> str:
    served = path_of(mgmt, obj["apiVersion"], obj["kind"])
    if served is not None:
        return served
    path = f"{obj['apiVersion']}/{obj['kind'].lower()}s"  # a CRD the providers just installed
    declare(mgmt, [(path, obj["kind"], bool(obj["metadata"].get("namespace")), ())])
    return path


def kubectl(mgmt: KubeEmulator, verb: str, objects: list[dict[str, Any]]) -> None:
    for obj in (o for o in objects if o):
        path, meta = _path(mgmt, obj), obj["metadata"]
        if verb == "apply":
            if obj["kind"].endswith("Provider"):  # what capi-operator writes once the provider runs
                obj = {**obj, "status": {"installedVersion": obj.get("spec", {}).get("version"),
                                         "conditions": [{"type": "Ready", "status": "True"}]}}
            mgmt.put(path, obj)
        else:
            mgmt.objects[path, meta.get("namespace"), meta["name"]].delete()


def run(mgmt: KubeEmulator, line: str, env: dict[str, str], tmp_path: Path) -> None:
    command, _, piped = line.partition("|")
    command, _, redirect = command.partition(">")
    args = shlex.split(command)
    if args[0] == "kubectl":
        files = [yaml.safe_load_all((REPO / args[3]).read_text())]
        kubectl(mgmt, args[1], [o for f in files for o in f])
        if args[3].endswith("proxmox.yaml") and args[1] == "apply":
            # What Kamaji and cert-manager write; the tenant apiserver is a closed loopback port (describe says so).
            seed_control_plane(mgmt, load_example("proxmox.yaml"), "https://127.0.0.1:9")
        return
    assert args[0] == "tenantctl", line
    result = CliRunner(env=env).invoke(app, args[1:])
    assert result.exit_code == 0, f"{line}\n{result.output}"
    if piped.strip() == "kubectl apply -f -":
        kubectl(mgmt, "apply", list(yaml.safe_load_all(result.stdout)))
    if redirect.strip():
        (tmp_path / redirect.strip()).write_text(result.stdout)


async def test_the_readme_quickstart_runs_as_written(mgmt: KubeEmulator, shared: Path, tmp_path: Path) -> None:
    complete(mgmt, shared)
    declare(mgmt, INSTALLED)
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_for(str(mgmt.url).rstrip("/")))
    env = {"KUBECONFIG": str(config)}
    lines = quickstart()
    assert [line.split()[1] for line in lines if line.startswith("tenantctl")] == [
        "providers", "install", "doctor", "get", "describe", "kubeconfig"]
    for line in lines:
        await asyncio.to_thread(run, mgmt, line, env, tmp_path)
    assert mgmt.get("tenantctl.io/v1alpha1/tenantclusters", "tenant-acme", "acme") is None, "deleted at the end"
    assert yaml.safe_load((tmp_path / "acme.kubeconfig").read_text())["kind"] == "Config"
