"""`vendor check`: the offline drift check, also run by `providers render` before it ships a blob.

Each vendored package must be what the lock says and ship what a reviewer read: the blob decompresses
to exactly the YAML, the files match their pins, every declared patch is in the blob, and the lock's
version is the one asked for. A committed render must agree too: `spec.version`, the ConfigMap's name
and its version label are one value (cozystack#4087, #4483).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tenantctl.problems import Problem, Problems
from tenantctl.providers import patches
from tenantctl.providers.blob import BlobError, decompress, header_problems
from tenantctl.providers.catalogue import OPERATOR_API_VERSION, Package
from tenantctl.providers.contract import check_contracts
from tenantctl.providers.download import sha256
from tenantctl.providers.layout import BLOB, COMPONENTS, METADATA
from tenantctl.providers.manifests import ManifestError, parse_manifest
from tenantctl.providers.render import COMPRESSED_ANNOTATION, NAME_LABEL, TYPE_LABEL, VERSION_LABEL, Vendored
from tenantctl.providers.render import configmap_name as expected_configmap_name
from tenantctl.providers.workspace import Workspace

__all__ = ["MAX_CONFIGMAP_BYTES", "check_package", "check_rendered", "check_vendored", "check_workspace"]

# The API server refuses a ConfigMap whose data and binaryData together exceed 1 MiB.
MAX_CONFIGMAP_BYTES = 1024 * 1024


def _first_difference(blob: bytes, yaml_bytes: bytes) -> str:
    blob_lines, yaml_lines = blob.splitlines(), yaml_bytes.splitlines()
    for i, (x, y) in enumerate(zip(blob_lines, yaml_lines, strict=False), start=1):
        if x != y:
            return f"first difference at line {i}"
    longer = "YAML" if len(blob_lines) < len(yaml_lines) else "blob"
    extra = abs(len(blob_lines) - len(yaml_lines))
    return f"the {longer} has {extra} line(s) more after line {min(len(blob_lines), len(yaml_lines))}"


def _read(path: Path, problems: list[Problem], name: str) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError as exc:
        problems.append(Problem(str(path), f"{name}: cannot read ({exc.strerror or exc}); run `tenantctl vendor "
                                f"fetch {name}`"))
        return None


def _check_pins(ws: Workspace, package: Package, problems: list[Problem]) -> str | None:
    """The pinned vendored digest, if the lock has an entry for the version asked for."""
    version, at = ws.platform.version(package)
    entry = ws.lock.packages.get(package.name)
    lock_at = f"{ws.layout.lock}: packages.{package.name}"
    if entry is None:
        problems.append(Problem(lock_at, f"{package.name} is enabled but not pinned; run `tenantctl vendor lock "
                                f"{package.name}` and `tenantctl vendor fetch {package.name}`"))
        return None
    if entry.version != version:
        problems.append(Problem(at, f"{package.name} is {version} here but {ws.layout.lock} pins "
                                f"{entry.version}; run `tenantctl vendor lock {package.name}` and `vendor fetch`"))
    declared = {p.id: p.digest() for p in package.patches}
    pinned = {p.id: p.sha256 for p in entry.patches}
    for pid in sorted(declared.keys() | pinned.keys()):
        if declared.get(pid) != pinned.get(pid):
            problems.append(Problem(f"{lock_at}.patches", f"patch {pid}: declared sha256 "
                                    f"{declared.get(pid, '(none)')}, pinned {pinned.get(pid, '(none)')}"))
    return entry.vendored_sha256


def check_package(ws: Workspace, package: Package) -> tuple[list[Problem], Vendored | None]:
    """Every drift check for one vendored package; the files it would ship when there is none."""
    problems: list[Problem] = []
    name = package.name
    pinned = _check_pins(ws, package, problems)
    files = {which: _read(ws.layout.file(name, which), problems, name) for which in (COMPONENTS, BLOB, METADATA)}
    yaml_bytes, blob, metadata = files[COMPONENTS], files[BLOB], files[METADATA]
    entry = ws.lock.packages.get(name)
    yaml_path, blob_path = ws.layout.file(name, COMPONENTS), ws.layout.file(name, BLOB)
    if yaml_bytes is not None and pinned is not None and sha256(yaml_bytes) != pinned:
        problems.append(Problem(str(yaml_path), f"{name}: sha256 {sha256(yaml_bytes)} but {ws.layout.lock} pins "
                                f"{pinned}; edited by hand? re-run `tenantctl vendor fetch {name}`"))
    if metadata is not None and entry is not None and sha256(metadata) != entry.metadata.sha256:
        problems.append(Problem(str(ws.layout.file(name, METADATA)), f"{name}: sha256 {sha256(metadata)} but "
                                f"{ws.layout.lock} pins {entry.metadata.sha256}"))
    if blob is not None:
        problems.extend(_check_blob(name, blob, blob_path, yaml_bytes, yaml_path, package))
    if blob is not None and metadata is not None and len(blob) + len(metadata) > MAX_CONFIGMAP_BYTES:
        problems.append(Problem(str(blob_path), f"{name}: blob and metadata take {len(blob) + len(metadata)} "
                                f"bytes, over the {MAX_CONFIGMAP_BYTES}-byte ConfigMap limit"))
    if problems or blob is None or metadata is None:
        return problems, None
    return problems, Vendored(blob, metadata.decode("utf-8", "replace"))


def _check_blob(
    name: str, blob: bytes, blob_path: Path, yaml_bytes: bytes | None, yaml_path: Path, package: Package
) -> list[Problem]:
    problems = [Problem(str(blob_path), f"{name}: not reproducible: {p}") for p in header_problems(blob)]
    try:
        carried = decompress(blob)
    except BlobError as exc:
        return [*problems, Problem(str(blob_path), f"{name}: {exc}")]
    if yaml_bytes is not None and carried != yaml_bytes:
        problems.append(Problem(
            str(blob_path),
            f"{name}: decompresses to sha256 {sha256(carried)}, but {yaml_path} is sha256 {sha256(yaml_bytes)} "
            f"({_first_difference(carried, yaml_bytes)}); the cluster runs the blob, not the YAML — re-run "
            f"`tenantctl vendor fetch {name}`",
        ))
    try:
        absent = patches.missing(parse_manifest(carried.decode("utf-8")), package.patches)
    except (ManifestError, UnicodeDecodeError) as exc:
        return [*problems, Problem(str(blob_path), f"{name}: blob content is not component YAML: {exc}")]
    problems.extend(Problem(str(blob_path), f"{name}: declared patch missing from the blob: {a}") for a in absent)
    return problems


def check_vendored(ws: Workspace) -> tuple[list[Problem], dict[str, Vendored]]:
    """`check_package` for every enabled package, then the contract check on the vendored tables."""
    problems: list[Problem] = []
    vendored: dict[str, Vendored] = {}
    for name in ws.selection.packages:
        found, files = check_package(ws, ws.catalogue.get(name))
        problems.extend(found)
        if files is not None:
            vendored[name] = files
    sources = {
        name: ws.contract_source(ws.catalogue.get(name), v.metadata, str(ws.layout.file(name, METADATA)))
        for name, v in vendored.items()
    }
    core = ws.catalogue.core.name
    if core in sources:
        problems.extend(check_contracts(sources[core], [s for n, s in sources.items() if n != core]))
    return problems, vendored


def _labels(doc: Mapping[str, Any]) -> dict[str, str]:
    labels = (doc.get("metadata") or {}).get("labels") or {}
    return dict(labels) if isinstance(labels, dict) else {}


def _ref(source: str, doc: Mapping[str, Any]) -> str:
    meta = doc.get("metadata") or {}
    return f"{source}: {doc.get('kind')}/{meta.get('namespace', '')}/{meta.get('name')}"


def check_rendered(ws: Workspace, source: str, docs: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """A committed render against the lock and the vendored files: the versions must be one value."""
    problems: list[Problem] = []
    for package in ws.catalogue.packages:
        providers = [d for d in docs if str(d.get("apiVersion", "")).startswith(OPERATOR_API_VERSION.split("/")[0])
                     and d.get("kind") == package.kind and (d.get("metadata") or {}).get("name") == package.provider]
        configmaps = [d for d in docs if d.get("kind") == "ConfigMap"
                      and _labels(d).get(NAME_LABEL) == package.provider
                      and _labels(d).get(TYPE_LABEL) == package.provider_type]
        entry = ws.lock.packages.get(package.name)
        pinned = entry.version if entry else None
        for provider in providers:
            problems.extend(_check_provider(ws, source, package, provider, configmaps, pinned))
        for cm in configmaps:
            problems.extend(_check_configmap_content(ws, source, package, cm))
    return problems


def _check_provider(
    ws: Workspace, source: str, package: Package, provider: Mapping[str, Any],
    configmaps: Sequence[Mapping[str, Any]], pinned: str | None,
) -> list[Problem]:
    problems: list[Problem] = []
    at = _ref(source, provider)
    spec = provider.get("spec") or {}
    version = spec.get("version")
    if pinned is not None and version != pinned:
        problems.append(Problem(f"{at}.spec.version", f"{version} but {ws.layout.lock} pins {package.name} "
                                f"{pinned}; re-render, or capi-operator installs and reports {version}"))
    for cm in configmaps:
        cm_at = _ref(source, cm)
        label = _labels(cm).get(VERSION_LABEL)
        name = (cm.get("metadata") or {}).get("name")
        if label != version:
            problems.append(Problem(f"{cm_at}.metadata.labels", f"{VERSION_LABEL}={label} but {at} has "
                                    f"spec.version {version}; the two must be one value"))
        if name != expected_configmap_name(package, str(version)):
            problems.append(Problem(f"{cm_at}.metadata.name", f"{name} does not carry spec.version {version} of "
                                    f"{at} (expected {expected_configmap_name(package, str(version))}): "
                                    "capi-operator's applied-spec-hash does not cover the ConfigMap, so a change "
                                    "here without spec.version is never applied"))
    wanted = ((spec.get("fetchConfig") or {}).get("selector") or {}).get("matchLabels") or {}
    matched = [cm for cm in configmaps if all(_labels(cm).get(k) == v for k, v in wanted.items())
               and (cm.get("metadata") or {}).get("namespace") == (provider.get("metadata") or {}).get("namespace")]
    if configmaps and not matched:
        problems.append(Problem(f"{at}.spec.fetchConfig.selector", f"matches no ConfigMap in {source} "
                                f"(selector {wanted}); capi-operator would find no components"))
    return problems


def _check_configmap_content(
    ws: Workspace, source: str, package: Package, cm: Mapping[str, Any]
) -> list[Problem]:
    at = _ref(source, cm)
    data = cm.get("data") or {}
    binary = cm.get("binaryData") or {}
    problems: list[Problem] = []
    if "components" in data:
        problems.append(Problem(f"{at}.data.components", "the readable YAML ships here as well as the blob; "
                                "a package ships the blob only"))
    if ((cm.get("metadata") or {}).get("annotations") or {}).get(COMPRESSED_ANNOTATION) != "true":
        problems.append(Problem(f"{at}.metadata.annotations", f"{COMPRESSED_ANNOTATION} must be \"true\" for "
                                "capi-operator to read binaryData.components"))
    vendored_yaml = ws.layout.file(package.name, COMPONENTS)
    try:
        carried = decompress(base64.b64decode(binary.get("components", ""), validate=True))
        expected = vendored_yaml.read_bytes()
    except (BlobError, binascii.Error, OSError) as exc:
        return [*problems, Problem(f"{at}.binaryData.components", f"cannot compare with {vendored_yaml}: {exc}")]
    if carried != expected:
        problems.append(Problem(f"{at}.binaryData.components", f"sha256 {sha256(carried)} decompressed, but "
                                f"{vendored_yaml} is sha256 {sha256(expected)}; re-render"))
    try:
        metadata = ws.layout.file(package.name, METADATA).read_text(encoding="utf-8")
    except OSError:
        metadata = None
    if metadata is not None and data.get("metadata") != metadata:
        problems.append(Problem(f"{at}.data.metadata", f"differs from {ws.layout.file(package.name, METADATA)}; "
                                "re-render"))
    return problems


def check_workspace(ws: Workspace, rendered: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> Problems:
    """Everything `vendor check` reports, errors and warnings, in one collection."""
    problems = Problems(ws.warnings)
    found, _ = check_vendored(ws)
    problems.extend(found)
    for name in sorted(ws.lock.packages.keys() - set(ws.selection.packages)):
        problems.warn(f"{ws.layout.lock}: packages.{name}", f"{name} is pinned but not enabled")
    for source, docs in rendered:
        problems.extend(check_rendered(ws, source, docs))
    return problems
