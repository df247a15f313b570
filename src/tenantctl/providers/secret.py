"""The capmox credentials Secret capi-operator reads (`configSecret`), built from checked inputs.

The input checks are the credentials room's, shared with `tenantctl secret proxmox-cluster`.
"""

from __future__ import annotations

from typing import Any

from tenantctl.credentials.inputs import check_proxmox_url, check_token_id, read_token_secret
from tenantctl.credentials.keys import ProviderKey
from tenantctl.providers.render import MANAGED_LABELS

__all__ = ["check_proxmox_url", "check_token_id", "proxmox_secret", "read_token_secret"]


def proxmox_secret(name: str, namespace: str, url: str, token_id: str, token_secret: str) -> dict[str, Any]:
    """capmox reads its provider-wide URL, token id and token secret from this Secret's keys."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_LABELS)},
        "type": "Opaque",
        "stringData": {ProviderKey.URL.value: url, ProviderKey.TOKEN.value: token_id,
                       ProviderKey.SECRET.value: token_secret},
    }
