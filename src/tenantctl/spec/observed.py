"""Runtime facts of a provisioned tenant that the renderer needs but must never invent.

The operator reads them from the cluster (Service address, CAs, Talos secrets generated once);
the CLI takes them with `--observed FILE`. Without them the TalosConfigTemplate is not rendered.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tenantctl.spec.base import SpecModel
from tenantctl.spec.patterns import BASE64, BOOTSTRAP_TOKEN_ID, BOOTSTRAP_TOKEN_SECRET, TALOS_MACHINE_TOKEN
from tenantctl.spec.tenant import ObjectMeta

__all__ = ["ObservedState", "TalosSecrets"]

# base64 of a PEM CA bundle, of 32 random bytes: generous ceilings, far below a Secret's 1 MiB.
_CA_MAX = 64 * 1024
_SECRET_MAX = 1024


class TalosSecrets(SpecModel):
    """Generated once per cluster and never regenerated: a new token orphans every joined node."""

    token: str = Field(pattern=TALOS_MACHINE_TOKEN)
    cluster_id: str = Field(alias="clusterID", pattern=BASE64, max_length=_SECRET_MAX)
    cluster_secret: str = Field(pattern=BASE64, max_length=_SECRET_MAX)
    bootstrap_token_id: str = Field(alias="bootstrapTokenID", pattern=BOOTSTRAP_TOKEN_ID)
    bootstrap_token_secret: str = Field(pattern=BOOTSTRAP_TOKEN_SECRET)


class ObservedState(SpecModel):
    api_version: Literal["tenantctl.io/v1alpha1"]
    kind: Literal["ObservedState"]
    metadata: ObjectMeta
    endpoint: str = Field(description="The apiserver Service's address: a literal IP or a DNS name.")
    kubernetes_ca: str = Field(alias="kubernetesCA", pattern=BASE64, max_length=_CA_MAX)
    talos_ca: str = Field(alias="talosCA", pattern=BASE64, max_length=_CA_MAX)
    talos_secrets: TalosSecrets
    cluster_dns: str | None = Field(default=None, alias="clusterDNS")
    management_cluster_domain: str = "cluster.local"
