"""`spec.controlPlane.apiServer.audit`: the tenant apiserver's audit log: a policy (a preset or the user's
own `audit.k8s.io/v1` rules, checked as the apiserver's audit validation checks them), size limits, and
where the events go (the apiserver's stdout, or a sidecar that tails the log file).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec.base import SpecModel

__all__ = ["PRESETS", "AuditRuleSpec", "AuditSpec", "GroupResourcesSpec", "audit_rules", "check_audit"]

Level = Literal["None", "Metadata", "Request", "RequestResponse"]
Stage = Literal["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"]
OWNED_PREFIX = "audit-"
# The health endpoints Kamaji's probes and load balancers call every few seconds: noise, never a subject.
_PROBES = ["/livez", "/livez/*", "/readyz", "/readyz/*", "/healthz", "/healthz/*"]
# Objects whose bodies are credentials: their events never carry a body.
_SECRET_BODIES = [
    {"group": "", "resources": ["secrets", "configmaps", "serviceaccounts/token"]},
    {"group": "authentication.k8s.io", "resources": ["tokenreviews"]},
    {"group": "certificates.k8s.io", "resources": ["certificatesigningrequests"]},
]
PRESETS: dict[str, list[dict[str, object]]] = {
    # Who did what to which object, for every request; no body ever.
    "Metadata": [
        {"level": "None", "nonResourceURLs": _PROBES},
        {"level": "Metadata"},
    ],
    # Also the body of every change, except of the objects whose bodies are credentials.
    "RequestBodies": [
        {"level": "None", "nonResourceURLs": _PROBES},
        {"level": "Metadata", "resources": _SECRET_BODIES},
        {"level": "Request", "verbs": ["create", "update", "patch", "delete", "deletecollection"]},
        {"level": "Metadata"},
    ],
}


class GroupResourcesSpec(SpecModel):
    group: str = Field(default="", max_length=253)
    resources: list[str] = Field(default_factory=list, max_length=64)
    resource_names: list[str] = Field(default_factory=list, max_length=64)


class AuditRuleSpec(SpecModel):
    """An `audit.k8s.io/v1` PolicyRule."""

    level: Level
    users: list[str] = Field(default_factory=list, max_length=64)
    user_groups: list[str] = Field(default_factory=list, max_length=64)
    verbs: list[str] = Field(default_factory=list, max_length=16)
    resources: list[GroupResourcesSpec] = Field(default_factory=list, max_length=64)
    namespaces: list[str] = Field(default_factory=list, max_length=64)
    non_resource_urls: list[str] = Field(default_factory=list, alias="nonResourceURLs", max_length=64)
    omit_stages: list[Stage] = Field(default_factory=list, max_length=4)


class AuditSpec(SpecModel):
    preset: Literal["Metadata", "RequestBodies"] | None = Field(
        default=None, description="Metadata (default without rules): every request, no body; RequestBodies: "
                                  "also the bodies of changes, never of Secrets, ConfigMaps or tokens.")
    rules: list[AuditRuleSpec] = Field(default_factory=list, max_length=256,
                                       description="Your own audit.k8s.io/v1 rules instead of a preset.")
    max_size_mb: int = Field(default=100, ge=1, le=10240, alias="maxSizeMB", description="Rotate at this size.")
    max_backups: int = Field(default=5, ge=0, le=100, description="Rotated files kept.")
    max_age_days: int = Field(default=7, ge=1, le=365, description="Rotated files older than this go.")
    shipping: Literal["stdout", "sidecar"] = Field(
        default="stdout", description="stdout: the apiserver's own log stream; sidecar: a file, tailed by an "
                                      "`audit` container (its own stream, rotated by the limits above).")


def audit_rules(audit: AuditSpec) -> list[dict[str, object]]:
    """The rules a policy is made of: the user's, or the preset's."""
    if audit.rules:
        return [r.model_dump(by_alias=True, exclude_defaults=True) | {"level": r.level} for r in audit.rules]
    return PRESETS[audit.preset or "Metadata"]


def _logs_bodies_of_secrets(rules: list[AuditRuleSpec]) -> bool:
    """Whether the first rule a Secret write would match logs its body (the apiserver takes the first match)."""
    for rule in rules:
        if rule.non_resource_urls or rule.users or rule.user_groups or rule.namespaces:
            continue
        if rule.verbs and not {"create", "update", "patch"} & set(rule.verbs):
            continue
        if rule.resources and not any(
            r.group == "" and (not r.resources or {"secrets", "*"} & set(r.resources)) and not r.resource_names
            for r in rule.resources
        ):
            continue
        return rule.level in ("Request", "RequestResponse")
    return False


def check_audit(at: str, audit: AuditSpec | None, extra_args: dict[str, str], problems: Problems) -> None:
    if audit is None:
        return
    for flag in sorted(extra_args):
        if flag.startswith(OWNED_PREFIX):
            problems.error(f"{at.rsplit('.', 1)[0]}.extraArgs.{flag}", "set by spec.controlPlane.apiServer.audit")
    if audit.preset is not None and audit.rules:
        problems.error(f"{at}.rules", "either a preset or your own rules, not both")
    for i, rule in enumerate(audit.rules):
        where = f"{at}.rules[{i}]"
        if rule.non_resource_urls and (rule.resources or rule.namespaces):
            problems.error(f"{where}.nonResourceURLs", "a rule matches either resources or non-resource URLs")
        for j, url in enumerate(rule.non_resource_urls):
            if not url.startswith("/") or "*" in url[:-1]:
                problems.error(f"{where}.nonResourceURLs[{j}]", f"{url!r} must start with / and may end in * only")
        for j, group in enumerate(rule.resources):
            if group.resource_names and (not group.resources or any("*" in r for r in group.resources)):
                problems.error(f"{where}.resources[{j}].resourceNames", "needs resources named without wildcards")
    if audit.rules and _logs_bodies_of_secrets(audit.rules):
        problems.warn(f"{at}.rules", "Secret bodies reach the audit log: the first rule a Secret write matches "
                      "logs its body; put a Metadata rule for secrets before it")
