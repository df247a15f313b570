"""Pure functions from a checked platform to capi-operator objects (plain dicts), in apply order.

Per package: its Namespace, the ConfigMap carrying the gzip components and metadata (left out in
planning mode), then the provider object whose `fetchConfig.selector` matches that ConfigMap's labels.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.providers.catalogue import OPERATOR_API_VERSION, Catalogue, Package
from tenantctl.providers.platform import Platform

__all__ = [
    "COMPRESSED_ANNOTATION",
    "MANAGED_LABELS",
    "NAME_LABEL",
    "PACKAGE_LABEL",
    "TYPE_LABEL",
    "VERSION_LABEL",
    "Vendored",
    "configmap_name",
    "render_providers",
    "selector_labels",
]

# capi-operator's own names (api/v1alpha2/provider_types.go): the selector it lists ConfigMaps with,
# the version it reads off each one, and the annotation that says `components` is gzip in binaryData.
NAME_LABEL = "provider.cluster.x-k8s.io/name"
TYPE_LABEL = "provider.cluster.x-k8s.io/type"
VERSION_LABEL = "provider.cluster.x-k8s.io/version"
COMPRESSED_ANNOTATION = "provider.cluster.x-k8s.io/compressed"
PACKAGE_LABEL = "tenantctl.io/package"
PLATFORM_LABEL = "tenantctl.io/platform"
MANAGED_LABELS = {"app.kubernetes.io/managed-by": "tenantctl"}


@dataclass(frozen=True)
class Vendored:
    """What a package ships: the gzip blob (never the readable YAML as well) and metadata.yaml."""

    blob: bytes
    metadata: str


def configmap_name(package: Package, version: str) -> str:
    """capi-operator's own naming, `<type>-<name>-<version>`: the version is in the name on purpose."""
    return f"{package.provider_type}-{package.provider}-{version}"


def selector_labels(package: Package, version: str) -> dict[str, str]:
    return {NAME_LABEL: package.provider, TYPE_LABEL: package.provider_type, VERSION_LABEL: version}


def _meta(name: str, namespace: str | None, platform: Platform, package: Package) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {**MANAGED_LABELS, PLATFORM_LABEL: platform.name, PACKAGE_LABEL: package.name}
    return meta


def _namespace(platform: Platform, package: Package) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(package.namespace, None, platform, package)}


def _resources(platform: Platform, package: Package) -> dict[str, Any]:
    override = platform.setting(package.name).resources
    chosen: Mapping[str, Mapping[str, Any]] = (
        {"requests": override.requests, "limits": override.limits}
        if override is not None
        else {"requests": package.resources.requests, "limits": package.resources.limits}
    )
    return {section: dict(values) for section, values in chosen.items() if values}


def _provider(platform: Platform, package: Package, version: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "version": version,
        "fetchConfig": {"selector": {"matchLabels": selector_labels(package, version)}},
    }
    secret = platform.setting(package.name).credentials_secret
    if secret is not None and secret.name:
        spec["configSecret"] = {"name": secret.name, "namespace": secret.namespace or package.namespace}
    resources = _resources(platform, package)
    if resources:
        spec["deployment"] = {"containers": [{"name": package.container, "resources": resources}]}
    return {
        "apiVersion": OPERATOR_API_VERSION,
        "kind": package.kind,
        "metadata": _meta(package.provider, package.namespace, platform, package),
        "spec": spec,
    }


def _configmap(platform: Platform, package: Package, version: str, vendored: Vendored) -> dict[str, Any]:
    meta = _meta(configmap_name(package, version), package.namespace, platform, package)
    meta["labels"] = {**meta["labels"], **selector_labels(package, version)}
    meta["annotations"] = {COMPRESSED_ANNOTATION: "true"}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {"metadata": vendored.metadata},
        "binaryData": {"components": base64.b64encode(vendored.blob).decode("ascii")},
    }


def render_providers(
    platform: Platform,
    packages: tuple[str, ...],
    catalogue: Catalogue,
    vendored: Mapping[str, Vendored] | None,
) -> list[dict[str, Any]]:
    """Objects for `packages`; `vendored=None` is planning mode (no ConfigMaps, all else identical)."""
    objects: list[dict[str, Any]] = []
    for name in packages:
        package = catalogue.get(name)
        version, _ = platform.version(package)
        objects.append(_namespace(platform, package))
        if vendored is not None:
            objects.append(_configmap(platform, package, version, vendored[name]))
        objects.append(_provider(platform, package, version))
    return objects
