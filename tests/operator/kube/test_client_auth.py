"""Credentials the maintained client brings: exec credential plugins and a rotating token file.

Both run against the emulator over loopback HTTP with bearer authentication switched on, so what
is checked is what the server saw.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from kube_emulator import KubeEmulator

from tenantctl.e2e.kube import Kube
from tenantctl.operator.kube.client import APIError, Connection, KubeClient

pytestmark = [pytest.mark.timeout(20)]

SECRETS = ("v1", "Secret")


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


def kubeconfig(server: str, user: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    }


def exec_plugin(tmp_path: Path, token: str) -> dict[str, Any]:
    """A credential plugin as kubectl runs it: a program printing an ExecCredential; it counts its runs."""
    script = tmp_path / "credential-plugin.py"
    script.write_text(
        "import json, pathlib, sys\n"
        "runs = pathlib.Path(sys.argv[1])\n"
        "runs.write_text(str(int(runs.read_text() or 0) + 1) if runs.exists() else '1')\n"
        f"print(json.dumps({{'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        f" 'status': {{'token': {token!r}}}}}))\n"
    )
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(script), str(tmp_path / "runs")]}}


async def test_an_exec_plugin_kubeconfig_authenticates_with_the_token_the_plugin_prints(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    mgmt.accepted_tokens = frozenset({"from-the-plugin"})
    connection = Connection.from_kubeconfig(kubeconfig(url(mgmt), exec_plugin(tmp_path, "from-the-plugin")))
    async with KubeClient(connection) as api:
        secrets = await api.require(*SECRETS)
        assert await api.get(secrets, "missing", "ns") is None
        assert await api.list(secrets, "ns") == []
    assert set(mgmt.bearers) == {"from-the-plugin"}
    assert (tmp_path / "runs").read_text() == "1", "the credential is cached, not fetched per request"


async def test_kopf_logs_in_with_the_plugins_token(mgmt: KubeEmulator, tmp_path: Path) -> None:
    connection = Connection.from_kubeconfig(kubeconfig(url(mgmt), exec_plugin(tmp_path, "for-kopf")))
    assert (await connection.login())["token"] == "for-kopf"


async def test_a_plugin_that_fails_is_an_api_error_not_a_crash(mgmt: KubeEmulator, tmp_path: Path) -> None:
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": ["-c", "import sys; sys.exit(3)"]}}
    async with KubeClient(Connection.from_kubeconfig(kubeconfig(url(mgmt), user))) as api:
        secrets = await api.require(*SECRETS)  # a built-in: known without a request
        with pytest.raises(APIError, match="returned 3"):
            await api.get(secrets, "a", "ns")


async def test_a_rotated_token_file_is_read_again_and_the_server_sees_the_new_token(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    mgmt.accepted_tokens = frozenset({"first"})
    connection = Connection.from_kubeconfig(kubeconfig(url(mgmt), {"tokenFile": str(token_file)}))
    async with KubeClient(connection) as api:
        secrets = await api.require(*SECRETS)
        assert await api.get(secrets, "a", "ns") is None
        # The kubelet rotates the projected token; the old one stops being accepted.
        token_file.write_text("second\n")
        mgmt.accepted_tokens = frozenset({"second"})
        assert await api.get(secrets, "b", "ns") is None
    assert mgmt.bearers[0] == "first"
    assert mgmt.bearers[-1] == "second"


async def test_the_in_cluster_account_reads_its_rotating_token_file(
    mgmt: KubeEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "token").write_text("sa-1")
    (tmp_path / "namespace").write_text("tenantctl-system")
    (tmp_path / "ca.crt").write_text("")
    host, port = url(mgmt).removeprefix("http://").rsplit(":", 1)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    connection = Connection.in_cluster(tmp_path)
    assert connection.server == f"https://{host}:{port}"
    assert (await connection.login())["token"] == "sa-1"
    (tmp_path / "token").write_text("sa-2")
    assert (await connection.login())["token"] == "sa-2", "kopf's next login sees the rotated token"


async def test_the_e2e_harness_goes_through_the_same_client(mgmt: KubeEmulator, tmp_path: Path) -> None:
    mgmt.accepted_tokens = frozenset({"harness"})
    kube = Kube.from_dict(kubeconfig(url(mgmt), exec_plugin(tmp_path, "harness")), timeout=5)

    def calls() -> None:  # the harness is synchronous: it runs beside the emulator's loop, as in e2e
        assert kube.get("/api/v1/namespaces/ns/secrets/missing") is None
        assert kube.items("/api/v1/namespaces/ns/secrets") == []

    try:
        await asyncio.to_thread(calls)
    finally:
        kube.close()
    assert set(mgmt.bearers) == {"harness"}
