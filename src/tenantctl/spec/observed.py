"""Runtime facts of a provisioned tenant that the renderer needs but must never invent.

The operator reads them from the cluster (Service address, CAs, Talos secrets generated once);
the CLI takes them with `--observed FILE`. Without them the TalosConfigTemplate is not rendered.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tenantctl.spec.base import SpecModel
from tenantctl.spec.tenant import ObjectMeta

__all__ = ["ObservedState", "TalosSecrets"]


class TalosSecrets(SpecModel):
    """Generated once per cluster and never regenerated: a new token orphans every joined node."""

    token: str
    cluster_id: str = Field(alias="clusterID")
    cluster_secret: str
    bootstrap_token_id: str = Field(alias="bootstrapTokenID")
    bootstrap_token_secret: str


class ObservedState(SpecModel):
    api_version: Literal["tenantctl.io/v1alpha1"]
    kind: Literal["ObservedState"]
    metadata: ObjectMeta
    endpoint: str
    kubernetes_ca: str = Field(alias="kubernetesCA")
    talos_ca: str = Field(alias="talosCA")
    talos_secrets: TalosSecrets
    cluster_dns: str | None = Field(default=None, alias="clusterDNS")
    management_cluster_domain: str = "cluster.local"
