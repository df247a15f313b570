"""The `Platform` document: which provider packages a management cluster gets, and their settings.

Structure is checked here (unknown fields and package names refused with the closest valid name);
which packages end up enabled, and what that requires, is `bundles`' job.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, StrictBool, ValidationError

from tenantctl.problems import InvalidInput, Problem, Problems
from tenantctl.providers.catalogue import Catalogue, Package
from tenantctl.render.chart_sources import ChartSourcesSpec
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.spec.base import SpecModel
from tenantctl.spec.compat import KamajiRelease, check_kamaji_release
from tenantctl.spec.crds import CrdKind
from tenantctl.spec.errors import problems_from_validation_error
from tenantctl.spec.names import is_dns_label, is_dns_subdomain
from tenantctl.spec.patch_policy import PatchUpgrades, check_patch_upgrades
from tenantctl.spec.patterns import SEMVER_TAG, full_match
from tenantctl.spec.quantity import QuantityError, parse_quantity

__all__ = [
    "API_VERSION",
    "PLATFORM_CRD",
    "Bundles",
    "CredentialsSecret",
    "PackageSettings",
    "Platform",
    "PlatformDocument",
    "load_platform",
    "parse_platform",
    "suggest",
    "tenantctl_crds",
]

API_VERSION = "tenantctl.io/v1alpha1"


class CredentialsSecret(SpecModel):
    name: str | None = None
    namespace: str | None = None


class Resources(SpecModel):
    requests: dict[str, str | int] = Field(default_factory=dict)
    limits: dict[str, str | int] = Field(default_factory=dict)


class PackageSettings(SpecModel):
    """Per-package settings; every field optional, the catalogue supplies what is left out."""

    version: str | None = None
    credentials_secret: CredentialsSecret | None = None
    resources: Resources | None = None


class Bundles(SpecModel):
    enabled_packages: list[str] = Field(default_factory=list)
    disabled_packages: list[str] = Field(default_factory=list)


class _Metadata(SpecModel):
    name: str


class KamajiSettings(SpecModel):
    version: str | None = Field(
        default=None,
        description="The Kamaji release the management cluster runs (e.g. 26.3.6-edge): which Kubernetes "
        "minors its webhook accepts. Unset: what the operator observes, else the tested default.",
    )


class RestoreSettings(SpecModel):
    across_namespaces: StrictBool = Field(
        default=False, alias="acrossNamespaces",
        description="Whether a tenant may be restored from the backup of a tenant in another namespace "
        "(spec.restore.from.namespace): it hands that namespace the other tenant's data.",
    )


class _Spec(SpecModel):
    bundles: Bundles = Field(default_factory=Bundles)
    restore: RestoreSettings = Field(default_factory=RestoreSettings)
    kamaji: KamajiSettings = Field(default_factory=KamajiSettings)
    packages: dict[str, dict[str, Any]] = Field(default_factory=dict)
    charts: ChartSourcesSpec = Field(default_factory=ChartSourcesSpec)
    images: ImagesSpec = Field(default_factory=ImagesSpec)
    patch_upgrades: PatchUpgrades | None = Field(
        default=None, description="Every tenant's patch policy, unless its own spec.patchUpgrades says otherwise."
    )


class PlatformDocument(SpecModel):
    api_version: Literal["tenantctl.io/v1alpha1"]
    kind: Literal["Platform"]
    metadata: _Metadata
    spec: _Spec = Field(default_factory=_Spec)


@dataclass(frozen=True)
class Platform:
    """A checked Platform; `at` prefixes every problem path (`Platform/default`)."""

    name: str
    bundles: Bundles
    settings: Mapping[str, PackageSettings]
    directory: Path
    charts: ChartSourcesSpec = field(default_factory=ChartSourcesSpec)
    images: ImagesSpec = field(default_factory=ImagesSpec)
    kamaji_version: str | None = None
    patch_upgrades: PatchUpgrades | None = None
    restore_across_namespaces: bool = False

    @property
    def at(self) -> str:
        return f"Platform/{self.name}"

    @property
    def kamaji(self) -> KamajiRelease | None:
        """The declared Kamaji release, said as coming from this Platform; None when it declares none."""
        if self.kamaji_version is None:
            return None
        return KamajiRelease(self.kamaji_version, f"{self.at} spec.kamaji.version")

    def setting(self, package: str) -> PackageSettings:
        return self.settings.get(package) or PackageSettings()

    def version(self, package: Package) -> tuple[str, str]:
        """(version, the path that chose it): the platform's override, else the catalogue's."""
        override = self.setting(package.name).version
        if override is not None:
            return override, f"{self.at}.spec.packages.{package.name}.version"
        return package.version, f"{package.name} (tenantctl catalogue version)"


def suggest(name: str, valid: Sequence[str]) -> str:
    """`; did you mean 'x'?` when a close valid name exists, else nothing."""
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def _pick_document(docs: Sequence[Mapping[str, Any]], source: str) -> tuple[Mapping[str, Any], str]:
    platforms = [(i, d) for i, d in enumerate(docs) if d.get("kind") == "Platform"]
    if len(platforms) == 1:
        i, doc = platforms[0]
        meta = doc.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        return doc, f"Platform/{name}" if isinstance(name, str) else f"{source}[document {i}]"
    if not platforms:
        kinds = sorted({str(d.get("kind")) for d in docs})
        hint = "".join(suggest(k, ["Platform"]) for k in kinds)
        found = f"; found kind(s) {', '.join(kinds)}{hint}" if kinds else ""
        raise InvalidInput([Problem(source, f"no Platform document{found}")])
    where = ", ".join(f"document {i}" for i, _ in platforms)
    raise InvalidInput([Problem(source, f"more than one Platform document ({where}); keep one per file")])


def _check_quantities(at: str, resources: Resources, problems: Problems) -> None:
    for section, values in (("requests", resources.requests), ("limits", resources.limits)):
        for key, value in values.items():
            try:
                parse_quantity(value)
            except QuantityError as exc:
                problems.error(f"{at}.resources.{section}.{key}", str(exc))


def _check_settings(at: str, name: str, settings: PackageSettings, catalogue: Catalogue, problems: Problems) -> None:
    package = catalogue.get(name)
    if settings.version is not None and not full_match(SEMVER_TAG, settings.version):
        problems.error(
            f"{at}.version",
            f"{settings.version!r} is not a release tag; capi-operator needs vMAJOR.MINOR.PATCH "
            f"(e.g. {package.version})",
        )
    secret = settings.credentials_secret
    if secret is not None and not package.credentials:
        problems.error(f"{at}.credentialsSecret", f"{name} takes no credentials; only packages that drive "
                       "something outside the cluster do")
    if secret is not None and secret.name is not None and not is_dns_subdomain(secret.name):
        problems.error(f"{at}.credentialsSecret.name", f"{secret.name!r} is not a valid Secret name")
    if secret is not None and secret.namespace is not None and not is_dns_label(secret.namespace):
        problems.error(f"{at}.credentialsSecret.namespace", f"{secret.namespace!r} is not a valid namespace")
    if settings.resources is not None:
        _check_quantities(at, settings.resources, problems)


def parse_platform(
    docs: Sequence[Mapping[str, Any]], catalogue: Catalogue, directory: Path, source: str = "<input>"
) -> Platform:
    """The one Platform among `docs`, checked; raise `InvalidInput` with every problem found."""
    raw, at = _pick_document(docs, source)
    problems = Problems()
    try:
        document = PlatformDocument.model_validate(raw)
    except ValidationError as exc:
        problems.extend(problems_from_validation_error(exc, PlatformDocument, at))
        raise InvalidInput(problems) from None
    if not is_dns_label(document.metadata.name):
        problems.error(f"{at}.metadata.name", f"{document.metadata.name!r} is not a DNS label")
    settings: dict[str, PackageSettings] = {}
    for name, raw_settings in document.spec.packages.items():
        where = f"{at}.spec.packages.{name}"
        if name not in catalogue.names:
            valid = ", ".join(catalogue.names)
            problems.error(where, f"unknown package {name!r}{suggest(name, catalogue.names)} (valid: {valid})")
            continue
        try:
            settings[name] = PackageSettings.model_validate(raw_settings or {})
        except ValidationError as exc:
            problems.extend(problems_from_validation_error(exc, PackageSettings, where))
            continue
        _check_settings(where, name, settings[name], catalogue, problems)
    for path, message in document.spec.images.problems():
        problems.error(f"{at}.spec.images.{path}", message)
    if document.spec.kamaji.version is not None:
        check_kamaji_release(f"{at}.spec.kamaji.version", document.spec.kamaji.version, problems)
    check_patch_upgrades(f"{at}.spec.patchUpgrades", document.spec.patch_upgrades, problems)
    problems.raise_if_errors()
    spec = document.spec
    return Platform(
        document.metadata.name, spec.bundles, settings, directory, spec.charts, spec.images, spec.kamaji.version,
        spec.patch_upgrades, spec.restore.across_namespaces,
    )


def load_platform(path: Path, catalogue: Catalogue) -> Platform:
    """Read a platform file; its directory is where the lock and the vendored packages live."""
    from tenantctl.documents import load_file

    return parse_platform(load_file(path), catalogue, path.parent, str(path))


PLATFORM_CRD = CrdKind("Platform", "platforms", ("pf",), PlatformDocument, _Spec, (), scope="Cluster")
"""The Platform as a cluster-scoped resource: the schema `--platform` files take, one per management
cluster, which the operator renders every tenant with."""


def tenantctl_crds() -> list[dict[str, Any]]:
    """Every CRD of the tenantctl.io group: TenantCluster, NodePool (from the spec) and Platform."""
    from tenantctl.spec.crds import render_crd, render_crds

    return [*render_crds(), render_crd(PLATFORM_CRD)]
