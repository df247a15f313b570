"""`tenantctl operator` as a process: kubeconfig login, reconcile to Ready, clean exit on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import pytest
from kube_emulator import KubeEmulator
from operator_support import condition, eventually, kubeconfig_for, management, seed_control_plane, seed_documents

from tenant_support import load_example

pytestmark = [pytest.mark.timeout(40)]


async def test_the_operator_command_reconciles_a_tenant_and_stops_on_sigterm(
    mgmt: KubeEmulator, tenant: KubeEmulator, tmp_path: Path
) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kubeconfig_for(str(mgmt.url).rstrip("/")))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tenantctl", "operator", "--kubeconfig", str(kubeconfig), "--verbose",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    try:
        ready = lambda: condition(mgmt.get("tenantctl.io/v1alpha1/tenantclusters", "tenant-acme", "acme"), "Ready")  # noqa: E731
        await eventually(lambda: ready().get("status") == "True", timeout=25)
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(process.communicate(), 15)
    assert process.returncode == 0, output.decode()[-2000:]
    assert b"[tenant-acme/acme] generated Talos secrets acme-talos-secrets" in output
    assert b"event loop: uvloop" in output  # as `kopf run` chooses, where uvloop is installed (Linux, here)
    # Nothing of ours or kopf's is left for kopf to wait out: with a task left (its own waiter on our stop
    # flag, before the cleanup set the flag) it waited 5 s for it, and logged that it stopped it instead.
    assert b"Hung tasks stopping is skipped: no tasks given." in output, output.decode()[-3000:]
