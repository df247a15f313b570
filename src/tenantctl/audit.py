"""`tenantctl audit`: prove from a render that no hypervisor credential can reach a tenant.

A tenant is cluster-admin of its own cluster, so anything applied through its kubeconfig is readable by
it: HelmRelease values and post-renderers, and the bootstrap objects. Those must neither carry a
credential value nor name a credentials Secret (a name is enough to ask for the token in a chart).
Everywhere else a token value must not appear at all, and each credentials Secret may be named only by
the one object that uses it. Sharing one Secret between controllers is allowed but warned about.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.problems import Problem, Problems
from tenantctl.render import Names, render_tenant, render_tenant_bootstrap
from tenantctl.render.chart_sources import ChartSourcesSpec
from tenantctl.render.proxmox_config import CREDENTIALS_VOLUME
from tenantctl.spec import ObservedState, TenantCluster, TenantInput

__all__ = ["TOKEN_PATTERNS", "Credential", "audit_objects", "audit_tenant", "credential_values", "credentials_of"]

# What a Proxmox API token looks like wherever it is written down. Every pattern with a leading run
# starts only where that run starts (a lookbehind), so a megabyte of `a` is scanned once, not n times.
TOKEN_PATTERNS: Mapping[str, re.Pattern[str]] = {
    "a Proxmox API token id (user@realm!name)": re.compile(
        r"(?<![A-Za-z0-9._-])[A-Za-z0-9._-]+@[A-Za-z0-9._-]+![A-Za-z0-9._-]+"
    ),
    "a Proxmox API token header": re.compile(r"PVEAPIToken"),
    "a Proxmox API token secret (UUID)": re.compile(
        r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f])"
    ),
    "a Proxmox ticket": re.compile(r"PVE:[^:\s]+:[0-9A-F]{8}::"),
}
# One pass finds candidates; the table then says which shape matched.
_ANY_TOKEN = re.compile("|".join(f"(?:{p.pattern})" for p in TOKEN_PATTERNS.values()))
_SECRET_VALUE_KEYS = ("token_id", "token_secret")
_MIN_VALUE = 8  # shorter literal values (a region, "true") would match by accident


@dataclass(frozen=True)
class Credential:
    """One controller's credentials Secret, and where the render may name it."""

    namespace: str
    secret: str
    cluster: str
    controller: str
    owner: tuple[str, str]  # (kind, name) of the one object that mounts or references it


def credentials_of(cluster: TenantCluster) -> list[Credential]:
    """capmox, CCM and (while enabled) CSI: three Secrets, three blast radii."""
    px = cluster.spec.proxmox
    if cluster.spec.substrate != "proxmox" or px is None:
        return []
    names = Names(cluster)
    found = [
        ("capmox", px.credentials_secret_name, ("ProxmoxCluster", names.cluster)),
        ("ccm", px.ccm.credentials_secret_name, ("Deployment", names.ccm)),
        ("csi", px.csi.credentials_secret_name if px.csi.enabled else None, ("Deployment", names.csi_controller)),
    ]
    return [Credential(names.namespace, s, names.cluster, c, owner) for c, s, owner in found if s]


def credential_values(secrets: Sequence[Mapping[str, Any]]) -> list[str]:
    """Literal token values from Secret manifests (`data` base64 or `stringData`), to search renders for."""
    values: list[str] = []
    for secret in secrets:
        if secret.get("kind") != "Secret":
            continue
        entries: dict[str, str] = dict(secret.get("stringData") or {})
        for key, encoded in (secret.get("data") or {}).items():
            try:
                entries[key] = base64.b64decode(str(encoded), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                continue
        wanted = [k for k in _SECRET_VALUE_KEYS if k in entries] or list(entries)
        values += [entries[k].strip() for k in wanted if len(entries[k].strip()) >= _MIN_VALUE]
    return sorted(set(values))


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string in an object, keys included, with a JSON-ish path."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield f"{path}.{key}", str(key)
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


def _ref(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata", {})
    ns = meta.get("namespace")
    return f"{obj.get('kind')}/{ns + '/' if ns else ''}{meta.get('name')}"


def _names_pattern(names: Sequence[str]) -> re.Pattern[str]:
    """A whole-word match of any of `names` (`pve-csi` does not match inside `pve-csi-fast`)."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9.-])({alternatives})(?![A-Za-z0-9.-])")


def _scan_tokens(at: str, text: str, values: Sequence[str], problems: Problems) -> None:
    if _ANY_TOKEN.search(text):
        for what, pattern in TOKEN_PATTERNS.items():
            if pattern.search(text):
                problems.error(at, f"carries {what}")
    for value in values:
        if value in text:
            problems.error(at, "carries the value of a credentials Secret")


def _tenant_bound(objects: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, Any]]:
    """What a HelmRelease hands to the tenant: its values, post-renderers and any valuesFrom."""
    for obj in objects:
        if obj.get("kind") == "HelmRelease":
            for key in ("values", "postRenderers", "valuesFrom"):
                if key in obj.get("spec", {}):
                    yield f"{_ref(obj)}.spec.{key}", obj["spec"][key]


def _is_owner(obj: Mapping[str, Any], credential: Credential) -> bool:
    meta = obj.get("metadata", {})
    return (obj.get("kind"), meta.get("name"), meta.get("namespace")) == (*credential.owner, credential.namespace)


def _check_owner_references(
    objects: Sequence[Mapping[str, Any]], creds: Sequence[Credential], problems: Problems
) -> None:
    """Each controller mounts exactly its own Secret; the capmox one is only the ProxmoxCluster's."""
    for cred in creds:
        kind, name = cred.owner
        owner = next((o for o in objects if _is_owner(o, cred)), None)
        if owner is None:
            problems.error(f"{kind}/{cred.namespace}/{name}", f"the {cred.controller} controller is not rendered")
            continue
        if kind == "ProxmoxCluster":
            ref = owner["spec"].get("credentialsRef") or {}
            actual = [ref["name"]] if ref.get("name") else []
        else:
            volumes = owner["spec"]["template"]["spec"].get("volumes", [])
            actual = [v["secret"]["secretName"] for v in volumes if v.get("name") == CREDENTIALS_VOLUME]
        if actual != [cred.secret]:
            problems.error(
                f"{kind}/{cred.namespace}/{name}",
                f"the {cred.controller} controller must name its own Secret {cred.secret!r}, found {actual}",
            )


def _check_sharing(creds: Sequence[Credential], problems: Problems) -> None:
    users: dict[tuple[str, str], list[Credential]] = defaultdict(list)
    for cred in creds:
        users[(cred.namespace, cred.secret)].append(cred)
    for (ns, secret), sharing in sorted(users.items()):
        if len(sharing) > 1:
            who = ", ".join(f"{c.cluster}/{c.controller}" for c in sharing)
            problems.warn(
                f"Secret/{ns}/{secret}",
                f"shared by {who}: one token for several controllers widens the blast radius of each "
                "(scope a token per controller; see the Proxmox token privileges)",
            )


def audit_objects(
    objects: Sequence[Mapping[str, Any]],
    tenant_objects: Sequence[Mapping[str, Any]],
    creds: Sequence[Credential],
    values: Sequence[str] = (),
) -> list[Problem]:
    """Judge a render: `objects` applied here, `tenant_objects` applied through the tenant kubeconfig."""
    problems = Problems()
    secret_names = {c.secret for c in creds}
    names_pattern = _names_pattern(sorted(secret_names)) if secret_names else None
    tenant_bound = [*_tenant_bound(objects), *((_ref(o), o) for o in tenant_objects)]
    for base, content in tenant_bound:
        for at, text in _walk(content, base):
            for name in sorted(set(names_pattern.findall(text))) if names_pattern else ():
                problems.error(at, f"tenant-bound content names the credentials Secret {name!r}")
    owners: dict[str, list[Credential]] = defaultdict(list)
    for cred in creds:
        owners[cred.secret].append(cred)
    bound_paths = tuple(base for base, _ in tenant_bound)
    for obj in objects:
        for at, text in _walk(obj, _ref(obj)):
            _scan_tokens(at, text, values, problems)
            users = owners.get(text)
            if users and not at.startswith(bound_paths) and not any(_is_owner(obj, c) for c in users):
                which = "/".join(sorted({c.controller for c in users}))
                problems.error(at, f"names the {which} credentials Secret {text!r} outside the object that uses it")
    for obj in tenant_objects:
        for at, text in _walk(obj, _ref(obj)):
            _scan_tokens(at, text, values, problems)
    _check_owner_references(objects, creds, problems)
    _check_sharing(creds, problems)
    return sorted(set(problems), key=lambda p: (p.severity, p.path, p.message))


def audit_tenant(
    tenant: TenantInput,
    observed: Mapping[tuple[str, str], ObservedState] | None = None,
    charts: ChartSourcesSpec | None = None,
    values: Sequence[str] = (),
) -> list[Problem]:
    """Render the input (with observations, the add-ons and bootstrap objects too) and audit it."""
    observed = observed or {}
    objects = render_tenant(tenant, observed, charts)
    tenant_objects = [
        obj
        for cluster in tenant.clusters
        if (key := (cluster.metadata.namespace, cluster.metadata.name)) in observed
        for obj in render_tenant_bootstrap(cluster, observed[key])
    ]
    creds = [c for cluster in tenant.clusters for c in credentials_of(cluster)]
    return audit_objects(objects, tenant_objects, creds, values)
