"""CLI start stays cheap: declaring commands must not import the heavy modules they use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

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


def _plugin_site(tmp_path: Path) -> tuple[Path, Path]:
    """A pydantic plugin installed as any distribution installs one (an entry point in the `pydantic` group),
    which writes a file when pydantic loads it; (its site directory, that file)."""
    site, seen = tmp_path / "site", tmp_path / "plugin-loaded"
    dist = site / "spy_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spy-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nspy = spy_plugin:plugin\n")
    (site / "spy_plugin.py").write_text(
        f"import pathlib\npathlib.Path({str(seen)!r}).write_text('loaded')\n"
        "class _Plugin:\n    def new_schema_validator(self, *args, **kwargs):\n        return None, None, None\n"
        "plugin = _Plugin()\n"
    )
    return site, seen


def test_a_pydantic_plugin_installed_beside_tenantctl_never_sees_its_inputs(tmp_path: Path) -> None:
    site, seen = _plugin_site(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    # The plugin is discoverable: a model built outside the CLI loads it.
    probe = "import pydantic\nclass M(pydantic.BaseModel):\n    x: int\nM(x=1)\n"
    subprocess.run([sys.executable, "-c", probe], env=env, check=True, capture_output=True)
    assert seen.read_text() == "loaded"
    seen.unlink()
    render = (
        "import sys; from tenantctl.cli import main\n"
        f"sys.argv = ['tenantctl', 'render', '-f', {str(EXAMPLES / 'kubevirt.yaml')!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", render], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "kind: TenantCluster" not in done.stdout and "kind: Cluster" in done.stdout
    assert not seen.exists(), "tenantctl's models loaded a pydantic plugin"
