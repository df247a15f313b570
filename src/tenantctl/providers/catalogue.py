"""The provider packages tenantctl knows, read from `catalogue.yaml` (data shipped with tenantctl)."""

from __future__ import annotations

import functools
from enum import StrEnum
from importlib import resources
from typing import Literal

import yaml
from pydantic import Field

from tenantctl.providers.patches import Patch
from tenantctl.spec.base import SpecModel

__all__ = [
    "OPERATOR_API_VERSION",
    "PROVIDER_TYPES",
    "Catalogue",
    "Enablement",
    "Package",
    "ResourceRequirements",
    "load_catalogue",
]

OPERATOR_API_VERSION = "operator.cluster.x-k8s.io/v1alpha2"
# capi-operator's `GetType()` per kind: the `provider.cluster.x-k8s.io/type` label value.
PROVIDER_TYPES: dict[str, str] = {
    "CoreProvider": "core",
    "BootstrapProvider": "bootstrap",
    "ControlPlaneProvider": "controlplane",
    "InfrastructureProvider": "infrastructure",
    "IPAMProvider": "ipam",
}
ProviderKind = Literal[
    "CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider", "IPAMProvider"
]


class Enablement(StrEnum):
    ALWAYS = "always"
    OPT_IN = "opt-in"


class ResourceRequirements(SpecModel):
    requests: dict[str, str] = Field(default_factory=dict)
    limits: dict[str, str] = Field(default_factory=dict)


class Package(SpecModel):
    """One provider: where its release lives, how capi-operator names it, what it needs."""

    name: str
    kind: ProviderKind
    provider: str
    namespace: str
    version: str
    contract: str
    container: str
    enablement: Enablement
    components: str
    metadata: str
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)
    dependencies: tuple[str, ...] = ()
    credentials: bool = False
    patches: tuple[Patch, ...] = ()

    @property
    def provider_type(self) -> str:
        return PROVIDER_TYPES[self.kind]

    def components_url(self, version: str) -> str:
        return self.components.format(version=version)

    def metadata_url(self, version: str) -> str:
        return self.metadata.format(version=version)


class Catalogue(SpecModel):
    packages: tuple[Package, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.packages)

    def get(self, name: str) -> Package:
        return next(p for p in self.packages if p.name == name)

    @property
    def core(self) -> Package:
        return next(p for p in self.packages if p.kind == "CoreProvider")


@functools.cache
def load_catalogue() -> Catalogue:
    """The catalogue shipped with tenantctl; its consistency is a test, not a runtime check."""
    text = resources.files("tenantctl.providers").joinpath("catalogue.yaml").read_text(encoding="utf-8")
    return Catalogue.model_validate(yaml.safe_load(text))
