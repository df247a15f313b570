"""Render a live-stand fixture from `${VAR}` placeholders, with the defaults held here, in code.

GNU envsubst does not expand `${VAR:-default}`, so a fixture that relies on it ships the literal text
to the cluster. Here every stand variable is declared once with its default or as required; rendering
refuses a placeholder it cannot fill and names every required variable that is unset, instead of
falling back to an address that belongs to somebody else's stand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tenantctl.documents import RENDERED_LIMITS, load_documents
from tenantctl.problems import InvalidInput, Problems

__all__ = ["STAND_SECRETS", "STAND_VARIABLES", "StandVariable", "render_fixture", "stand_values"]


@dataclass(frozen=True)
class StandVariable:
    """`default` None means required: the render fails while it is unset or empty."""

    name: str
    meaning: str
    default: str | None = None

    @property
    def required(self) -> bool:
        return self.default is None


STAND_VARIABLES: tuple[StandVariable, ...] = (
    StandVariable("TENANTCTL_KUBECONFIG", "kubeconfig of the management cluster, reachable from the runner"),
    StandVariable("TENANTCTL_PVE_URL", "Proxmox URL without /api2/json, e.g. https://pve.example:8006"),
    StandVariable("TENANTCTL_PVE_TOKEN_ID", "API token id the harness reads the hypervisor with"),
    StandVariable("TENANTCTL_PVE_NODE", "Proxmox node the workers are cloned on"),
    StandVariable("TENANTCTL_PVE_STORAGE", "storage of the tenant's volumes (StorageClass and PVC probe)"),
    StandVariable("TENANTCTL_PVE_POOL", "the stand's Proxmox resource pool every worker joins"),
    StandVariable("TENANTCTL_PVE_ADDRESSES", "worker IPv4 addresses: an IP, CIDR or a-b range"),
    StandVariable("TENANTCTL_PVE_GATEWAY", "gateway of the worker subnet"),
    StandVariable("TENANTCTL_PVE_DNS", "a DNS server the workers can reach"),
    StandVariable("TENANTCTL_PVE_PREFIX", "prefix length of the worker subnet", "24"),
    StandVariable("TENANTCTL_PVE_BRIDGE", "bridge of the worker NIC", "vmbr0"),
    StandVariable("TENANTCTL_PVE_INSECURE", "true only for a stand with a self-signed certificate", "false"),
    StandVariable(
        "TENANTCTL_PVE_TEMPLATE_TAGS", "tags of the Talos template besides talos-<version>, comma-separated", "talos"
    ),
    StandVariable("TENANTCTL_TENANT_NAMESPACE", "namespace of the throwaway tenant", "tenant-e2e"),
    StandVariable("TENANTCTL_TENANT_NAME", "name of the throwaway TenantCluster", "e2e"),
    StandVariable("TENANTCTL_WORKERS", "worker replicas to wait for", "1"),
    StandVariable("TENANTCTL_KUBERNETES_VERSION", "Kubernetes minor of the tenant", "v1.33"),
    StandVariable("TENANTCTL_TALOS_VERSION", "Talos version of the template", "v1.13.6"),
)

# Required of the stand like the variables above, but never rendered into a fixture.
STAND_SECRETS: tuple[StandVariable, ...] = (
    StandVariable("PROXMOX_TOKEN_SECRET", "secret of TENANTCTL_PVE_TOKEN_ID, read by `e2e run` from the environment"),
)

_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_BARE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")
_KNOWN = {v.name: v for v in STAND_VARIABLES}


def stand_values(env: Mapping[str, str]) -> dict[str, str]:
    """Every stand variable's value: the environment's when set and non-empty, else the default in code.

    Raises `InvalidInput` naming every required variable that is unset, in one go.
    """
    problems = Problems()
    values: dict[str, str] = {}
    for secret in STAND_SECRETS:
        if not env.get(secret.name):
            problems.error(secret.name, f"required stand secret is unset ({secret.meaning})")
    for var in STAND_VARIABLES:
        value = env.get(var.name, "")
        if value:
            values[var.name] = value
        elif var.default is not None:
            values[var.name] = var.default
        else:
            problems.error(var.name, f"required stand variable is unset ({var.meaning})")
    problems.raise_if_errors()
    return values


def render_fixture(template: str, env: Mapping[str, str], source: str = "<template>") -> str:
    """Fill `${VAR}` placeholders; refuse unknown ones, `${VAR:-default}` forms and bare `$VAR` leftovers."""
    problems = Problems()
    for lineno, line in enumerate(template.splitlines(), 1):
        for match in _PLACEHOLDER.finditer(line):
            inner = match.group(1)
            if inner in {s.name for s in STAND_SECRETS}:
                problems.error(f"{source}:{lineno}", f"{match.group(0)}: a secret never goes into a fixture; "
                               "name the Secret that holds it instead")
            elif inner not in _KNOWN:
                hint = (
                    "shell defaults are not expanded; defaults live in tenantctl.e2e.fixture.STAND_VARIABLES"
                    if ":" in inner or "-" in inner
                    else f"not a stand variable (known: {', '.join(_KNOWN)})"
                )
                problems.error(f"{source}:{lineno}", f"{match.group(0)} would be left in the fixture: {hint}")
        for match in _BARE.finditer(_PLACEHOLDER.sub("", line)):
            problems.error(f"{source}:{lineno}", f"{match.group(0)} would be left in the fixture: write ${{NAME}}")
    try:
        values = stand_values(env)
    except InvalidInput as exc:
        problems.extend(exc.problems)
        values = {}
    problems.raise_if_errors()
    rendered = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
    for lineno, line in enumerate(rendered.splitlines(), 1):
        if "${" in line:
            problems.error(f"{source} (rendered):{lineno}", f"a value brought a placeholder in: {line.strip()!r}")
    problems.raise_if_errors()
    load_documents(rendered, f"{source} (rendered)", RENDERED_LIMITS)
    return rendered
