"""CLI start stays cheap: declaring commands must not import the heavy modules they use."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("aiohttp", "httpx2", "lightkube", "kopf", "kubernetes", "kubernetes_validate", "proxmoxer", "requests",
         "jsonschema", "cel", "pydantic", "prometheus_client")


def test_importing_the_cli_loads_no_heavy_module() -> None:
    code = f"import sys, tenantctl.cli; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == [], f"imported at CLI start: {loaded}"


def test_running_a_command_assembles_only_its_own_module() -> None:
    code = (
        "import sys; from tenantctl.cli import main; sys.argv = ['tenantctl', 'render', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('tenantctl.cli.'))), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stderr.split())
    assert "tenantctl.cli.tenant" in loaded
    assert not loaded & {f"tenantctl.cli.{m}" for m in ("operator", "providers", "secret", "doctor", "e2e", "daytwo")}
