"""The hosted control plane's knobs: container resources (preset or explicit) and apiserver flags."""

from __future__ import annotations

from pydantic import Field, JsonValue

from tenantctl.spec.audit import AuditSpec
from tenantctl.spec.authentication import AuthenticationSpec
from tenantctl.spec.base import SpecModel
from tenantctl.spec.resource_presets import DEFAULT_PRESETS, PRESETS

__all__ = ["ApiServerSpec", "ComponentResourcesSpec", "ControlPlaneResourcesSpec", "ResourceAmountsSpec"]

Quantity = str | int | float


class ResourceAmountsSpec(SpecModel):
    cpu: Quantity | None = Field(
        default=None, description="CPU quantity (e.g. 250m, 2).", json_schema_extra={"maxLength": 64}
    )
    memory: Quantity | None = Field(
        default=None, description="Memory quantity (e.g. 512Mi, 2Gi).", json_schema_extra={"maxLength": 64}
    )


class ComponentResourcesSpec(SpecModel):
    """A preset name, or explicit requests/limits; neither means the component's default preset."""

    preset: str | None = Field(
        default=None,
        description="Named preset (docs/rendering.md: control-plane resources).",
        json_schema_extra={"enum": list[JsonValue](sorted(PRESETS))},
    )
    requests: ResourceAmountsSpec | None = Field(default=None, description="Explicit requests (no preset).")
    limits: ResourceAmountsSpec | None = Field(default=None, description="Explicit limits, ≥ requests (no preset).")


def _described(field: str, what: str) -> str:
    return f"{what}; default preset {DEFAULT_PRESETS[field]}."


class ControlPlaneResourcesSpec(SpecModel):
    """Keyed like `DEFAULT_PRESETS`; the four containers Kamaji runs for the tenant."""

    api_server: ComponentResourcesSpec = Field(
        default_factory=ComponentResourcesSpec, description=_described("apiServer", "kube-apiserver")
    )
    controller_manager: ComponentResourcesSpec = Field(
        default_factory=ComponentResourcesSpec,
        description=_described("controllerManager", "kube-controller-manager"),
    )
    scheduler: ComponentResourcesSpec = Field(
        default_factory=ComponentResourcesSpec, description=_described("scheduler", "kube-scheduler")
    )
    konnectivity: ComponentResourcesSpec = Field(
        default_factory=ComponentResourcesSpec, description=_described("konnectivity", "konnectivity server")
    )

    def component(self, field: str) -> ComponentResourcesSpec:
        """The entry named as on the wire (`apiServer`), for renderers keyed by KamajiControlPlane fields."""
        name = next(n for n, f in type(self).model_fields.items() if (f.alias or n) == field)
        value: ComponentResourcesSpec = getattr(self, name)
        return value


class ApiServerSpec(SpecModel):
    extra_args: dict[str, str] = Field(
        default_factory=dict,
        description="Extra kube-apiserver flags, name (no leading --) to value; flags Kamaji sets are refused.",
    )
    authentication: AuthenticationSpec | None = Field(
        default=None, description="JWT issuers (SSO) and anonymous access, as a structured AuthenticationConfiguration "
                                  "(docs/access.md).")
    audit: AuditSpec | None = Field(default=None, description="The apiserver's audit log (docs/access.md).")
