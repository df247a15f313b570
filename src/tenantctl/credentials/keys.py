"""Every key of every Proxmox credentials Secret tenantctl's controllers read, in one table.

The renderer, the `secret` commands, the operator, the doctor and the docs table all take the key
names from here, so a renamed key cannot drift between writer, checker and documentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "CONTROLLER_KEYS",
    "SECRETS",
    "CapmoxKey",
    "ControllerKey",
    "CredentialsSecret",
    "ProviderKey",
    "SecretKey",
    "key_table",
]


class CapmoxKey(StrEnum):
    """capmox v0.7.7 `pkg/scope/cluster.go` reads these from `ProxmoxCluster.spec.credentialsRef`."""

    URL = "url"
    TOKEN = "token"
    SECRET = "secret"
    INSECURE = "insecure"
    ROOT_CA = "root_ca"


class ControllerKey(StrEnum):
    """The CCM's and the CSI controller's Secrets, read by the `compose-config` init container."""

    URL = "url"
    TOKEN_ID = "token_id"
    TOKEN_SECRET = "token_secret"
    REGION = "region"


class ProviderKey(StrEnum):
    """The provider-wide Secret cluster-api-operator hands capmox as environment (`configSecret`)."""

    URL = "PROXMOX_URL"
    TOKEN = "PROXMOX_TOKEN"
    SECRET = "PROXMOX_SECRET"


CONTROLLER_KEYS: tuple[str, ...] = tuple(ControllerKey)


@dataclass(frozen=True)
class SecretKey:
    name: str
    required: bool
    holds: str


@dataclass(frozen=True)
class CredentialsSecret:
    """One Secret: who reads it, which spec field names it, and its keys."""

    reader: str
    named_by: str
    keys: tuple[SecretKey, ...]


_CONTROLLER = (
    SecretKey(ControllerKey.URL, True, "Proxmox URL, `https://host:8006`, no `/api2/json`"),
    SecretKey(ControllerKey.TOKEN_ID, True, "API token id `user@realm!name`"),
    SecretKey(ControllerKey.TOKEN_SECRET, True, "the token's secret value"),
    SecretKey(ControllerKey.REGION, True, "the region name the topology labels carry"),
)

SECRETS: tuple[CredentialsSecret, ...] = (
    CredentialsSecret(
        "capmox, per tenant (`tenantctl secret proxmox-cluster`)",
        "`spec.proxmox.credentialsSecretName`",
        (
            SecretKey(CapmoxKey.URL, True, "Proxmox URL, `https://host:8006`; capmox appends `/api2/json`"),
            SecretKey(CapmoxKey.TOKEN, True, "API token id `user@realm!name`"),
            SecretKey(CapmoxKey.SECRET, True, "the token's secret value"),
            SecretKey(CapmoxKey.INSECURE, True, "`false` to verify TLS; **absent means unverified** in v0.7.7"),
            SecretKey(CapmoxKey.ROOT_CA, False, "PEM CA added to the system roots when verifying"),
        ),
    ),
    CredentialsSecret("cloud-controller-manager", "`spec.proxmox.ccm.credentialsSecretName`", _CONTROLLER),
    CredentialsSecret("CSI controller", "`spec.proxmox.csi.credentialsSecretName`", _CONTROLLER),
    CredentialsSecret(
        "capmox, provider-wide (`tenantctl providers secret proxmox`)",
        "`Platform.spec.packages.infrastructure-proxmox.credentialsSecret`",
        (
            SecretKey(ProviderKey.URL, True, "Proxmox URL, no `/api2/json`"),
            SecretKey(ProviderKey.TOKEN, True, "API token id `user@realm!name`"),
            SecretKey(ProviderKey.SECRET, True, "the token's secret value"),
        ),
    ),
)


def key_table() -> str:
    """The Markdown table the README and docs/storage-chain.md carry (a test compares both)."""
    lines = ["| Secret read by | named by | key | required | holds |", "|---|---|---|---|---|"]
    for secret in SECRETS:
        for key in secret.keys:
            lines.append(
                f"| {secret.reader} | {secret.named_by} | `{key.name}` | {'yes' if key.required else 'no'} "
                f"| {key.holds} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(key_table(), end="")
