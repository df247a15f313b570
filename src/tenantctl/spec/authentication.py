"""`spec.controlPlane.apiServer.authentication`: the tenant apiserver's structured authentication
(`AuthenticationConfiguration`, apiserver.config.k8s.io), checked as the apiserver checks it at start.

What the apiserver refuses at start is refused here (a control plane that crash-loops on its own config
is worse than a refusal): Kubernetes' `validateJWTAuthenticator` (staging/src/k8s.io/apiserver/pkg/apis/
apiserver/validation/validation.go): an https issuer without query, fragment or user; unique issuers; at
least one audience, unique, and `MatchAny` when there are several; a username mapping from a claim (with a
prefix) or an expression; CEL that compiles over `claims` (and `user` for the user rules). Beyond it:

- the service-account issuer is refused as a JWT issuer: Kamaji gives every tenant the same one, so a JWT
  authenticator for it would take another tenant's service-account tokens for this tenant's users
  (the check is by URL; Kamaji sets `https://kubernetes.default.svc` and the cluster-domain form);
- the `anonymous` block must keep anonymous requests to `/livez` and `/readyz`: Kamaji's probes call them
  without credentials, and a control plane that fails its probes never becomes ready;
- the flags this block owns (`--authentication-config`, `--oidc-*`, `--anonymous-auth`) are refused in
  `extraArgs` beside it: the apiserver refuses to start with both.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec.base import SpecModel

__all__ = [
    "AUTHN_API_VERSIONS",
    "AnonymousSpec",
    "AuthenticationSpec",
    "ClaimMappingsSpec",
    "JWTAuthenticatorSpec",
    "authn_api_version",
    "check_authentication",
]

# The AuthenticationConfiguration version each minor serves (StructuredAuthenticationConfiguration: beta and
# on by default in 1.30, v1 and GA in 1.34); the anonymous block from 1.32 (AnonymousAuthConfigurableEndpoints).
AUTHN_API_VERSIONS: dict[str, str] = {"v1.30": "v1beta1", "v1.31": "v1beta1", "v1.32": "v1beta1",
                                      "v1.33": "v1beta1", "v1.34": "v1", "v1.35": "v1", "v1.36": "v1"}
ANONYMOUS_FROM = (1, 32)
PROBE_PATHS = ("/livez", "/readyz")
MAX_JWT = 64
OWNED_FLAGS = ("authentication-config", "anonymous-auth")
OWNED_PREFIXES = ("oidc-",)
SERVICE_ACCOUNT_ISSUERS = ("https://kubernetes.default.svc",)
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_EXTRA_KEY = re.compile(rf"^{_LABEL}(\.{_LABEL})*/[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$")
_PEM = "-----BEGIN CERTIFICATE-----"


class IssuerSpec(SpecModel):
    url: str = Field(max_length=2048, description="The issuer URL (https), as in the tokens' `iss`.")
    discovery_url: str | None = Field(default=None, alias="discoveryURL", max_length=2048,
                                      description="Where discovery is read, when not under `url`.")
    certificate_authority: str | None = Field(default=None, max_length=65536,
                                              description="PEM CA the issuer's TLS chain ends in (default: system).")
    audiences: list[str] = Field(min_length=1, max_length=16, description="Accepted `aud` values.")
    audience_match_policy: Literal["MatchAny"] | None = Field(default=None,
                                                              description="Required with several audiences.")


class ClaimValidationRuleSpec(SpecModel):
    claim: str | None = Field(default=None, max_length=256)
    required_value: str | None = Field(default=None, max_length=256)
    expression: str | None = Field(default=None, max_length=4096, description="CEL over `claims`.")
    message: str | None = Field(default=None, max_length=1024)


class PrefixedClaimSpec(SpecModel):
    claim: str | None = Field(default=None, max_length=256)
    prefix: str | None = Field(default=None, max_length=256)
    expression: str | None = Field(default=None, max_length=4096, description="CEL over `claims`.")


class ClaimSpec(SpecModel):
    claim: str | None = Field(default=None, max_length=256)
    expression: str | None = Field(default=None, max_length=4096)


class ExtraMappingSpec(SpecModel):
    key: str = Field(max_length=512, description="Domain-prefixed, lower-case (example.com/team).")
    value_expression: str = Field(max_length=4096, description="CEL over `claims`: a string or list of strings.")


class ClaimMappingsSpec(SpecModel):
    username: PrefixedClaimSpec
    groups: PrefixedClaimSpec | None = None
    uid: ClaimSpec | None = None
    extra: list[ExtraMappingSpec] = Field(default_factory=list, max_length=32)


class UserValidationRuleSpec(SpecModel):
    expression: str = Field(max_length=4096, description="CEL over `user` (the mapped user).")
    message: str | None = Field(default=None, max_length=1024)


class JWTAuthenticatorSpec(SpecModel):
    issuer: IssuerSpec
    claim_validation_rules: list[ClaimValidationRuleSpec] = Field(default_factory=list, max_length=32)
    claim_mappings: ClaimMappingsSpec
    user_validation_rules: list[UserValidationRuleSpec] = Field(default_factory=list, max_length=32)


class AnonymousConditionSpec(SpecModel):
    path: str = Field(max_length=1024)


class AnonymousSpec(SpecModel):
    enabled: bool = True
    conditions: list[AnonymousConditionSpec] = Field(
        default_factory=list, max_length=32,
        description="Paths anonymous requests are served on (empty: all); must keep /livez and /readyz.")


class AuthenticationSpec(SpecModel):
    jwt: list[JWTAuthenticatorSpec] = Field(default_factory=list, max_length=MAX_JWT,
                                            description="JWT issuers the tenant's apiserver accepts tokens of.")
    anonymous: AnonymousSpec | None = Field(default=None, description="Kubernetes ≥ v1.32: where anonymous "
                                            "requests are allowed (replaces --anonymous-auth).")


def authn_api_version(minor: str) -> str | None:
    return AUTHN_API_VERSIONS.get(minor)


def _cel(at: str, source: str, variables: frozenset[str], problems: Problems) -> None:
    """Parse it and check the variables it reads. The functions it calls are not checked here: the list of
    what Kubernetes' CEL provides lives with the judge (validate/cel_library.py), which spec may not import."""
    import cel

    try:
        program = cel.compile(source)
    except Exception as exc:  # cel raises ValueError or RuntimeError for syntax errors
        problems.error(at, f"{source!r} does not compile: {str(exc).splitlines()[0]}")
        return
    bound = set(re.findall(r"\.(?:all|exists|exists_one|map|filter)\(\s*([A-Za-z_]\w*)", source))
    unknown = sorted(set(program.variables()) - variables - bound)
    if unknown:
        problems.error(at, f"{source!r} refers to {', '.join(unknown)}; only {', '.join(sorted(variables))} exist here")


def _https(at: str, url: str, problems: Problems) -> None:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment or parts.username:
        problems.error(at, f"{url!r} must be an https URL without query, fragment or user (the apiserver refuses it)")


def _claims(at: str, claims: frozenset[str], jwt: JWTAuthenticatorSpec, problems: Problems) -> None:
    for i, rule in enumerate(jwt.claim_validation_rules):
        where = f"{at}.claimValidationRules[{i}]"
        if (rule.claim is None) == (rule.expression is None):
            problems.error(where, "exactly one of claim (with requiredValue) or expression")
        elif rule.expression is not None:
            _cel(f"{where}.expression", rule.expression, claims, problems)
            if rule.required_value is not None:
                problems.error(f"{where}.requiredValue", "goes with claim, not with expression")
        if rule.message is not None and rule.expression is None:
            problems.error(f"{where}.message", "goes with expression")
    mappings = jwt.claim_mappings
    username = mappings.username
    if (username.claim is None) == (username.expression is None):
        problems.error(f"{at}.claimMappings.username", "exactly one of claim or expression")
    elif username.claim is not None and username.prefix is None:
        problems.error(f"{at}.claimMappings.username.prefix", "required with claim (\"\" for none): a prefix keeps "
                       "the issuer's users apart from the tenant's own (system:, service accounts)")
    elif username.expression is not None:
        _cel(f"{at}.claimMappings.username.expression", username.expression, claims, problems)
        if username.prefix is not None:
            problems.error(f"{at}.claimMappings.username.prefix", "goes with claim; write it into the expression")
    for name in ("groups", "uid"):
        mapping = getattr(mappings, name)
        if mapping is None:
            continue
        if (mapping.claim is None) == (mapping.expression is None):
            problems.error(f"{at}.claimMappings.{name}", "exactly one of claim or expression")
        elif mapping.expression is not None:
            _cel(f"{at}.claimMappings.{name}.expression", mapping.expression, claims, problems)
        if name == "groups" and mapping.claim is not None and mapping.prefix is None:
            problems.error(f"{at}.claimMappings.groups.prefix", "required with claim (\"\" for none)")
    seen: set[str] = set()
    for i, extra in enumerate(mappings.extra):
        if not _EXTRA_KEY.match(extra.key):
            problems.error(f"{at}.claimMappings.extra[{i}].key", f"{extra.key!r} must be a domain-prefixed path in "
                           "lower case, like example.com/team")
        if extra.key in seen:
            problems.error(f"{at}.claimMappings.extra[{i}].key", f"{extra.key!r} is mapped twice")
        seen.add(extra.key)
        _cel(f"{at}.claimMappings.extra[{i}].valueExpression", extra.value_expression, claims, problems)
    for i, user_rule in enumerate(jwt.user_validation_rules):
        _cel(f"{at}.userValidationRules[{i}].expression", user_rule.expression, frozenset({"user"}), problems)


def check_authentication(at: str, authn: AuthenticationSpec | None, minor: str | None, cluster_domain: str,
                         extra_args: dict[str, str], problems: Problems) -> None:
    if authn is None:
        return
    if minor is not None and authn_api_version(minor) is None:
        problems.error(at, f"Kubernetes {minor} serves no structured AuthenticationConfiguration (from v1.30)")
    for flag in sorted(extra_args):
        if flag in OWNED_FLAGS or flag.startswith(OWNED_PREFIXES):
            problems.error(f"{at.rsplit('.', 1)[0]}.extraArgs.{flag}", "set by spec.controlPlane.apiServer."
                           "authentication: the apiserver refuses --oidc-* and --anonymous-auth beside "
                           "--authentication-config")
    sa_issuers = {*SERVICE_ACCOUNT_ISSUERS, f"https://kubernetes.default.svc.{cluster_domain}"}
    claims = frozenset({"claims"})
    issuers: dict[str, int] = {}
    for i, jwt in enumerate(authn.jwt):
        where = f"{at}.jwt[{i}]"
        issuer = jwt.issuer
        _https(f"{where}.issuer.url", issuer.url, problems)
        if issuer.discovery_url is not None:
            _https(f"{where}.issuer.discoveryURL", issuer.discovery_url, problems)
            if issuer.discovery_url.rstrip("/") == issuer.url.rstrip("/"):
                problems.error(f"{where}.issuer.discoveryURL", "equals the issuer URL: leave it out")
        if issuer.url.rstrip("/") in sa_issuers:
            problems.error(f"{where}.issuer.url", f"{issuer.url!r} is the service-account issuer Kamaji gives every "
                           "tenant: tokens of other tenants' service accounts would pass as this tenant's users")
        if issuer.url in issuers:
            problems.error(f"{where}.issuer.url", f"{issuer.url!r} is also jwt[{issuers[issuer.url]}]'s")
        issuers.setdefault(issuer.url, i)
        if len(set(issuer.audiences)) != len(issuer.audiences) or "" in issuer.audiences:
            problems.error(f"{where}.issuer.audiences", "each audience once, none empty")
        if len(issuer.audiences) > 1 and issuer.audience_match_policy != "MatchAny":
            problems.error(f"{where}.issuer.audienceMatchPolicy", "MatchAny is required with several audiences")
        if issuer.certificate_authority is not None and _PEM not in issuer.certificate_authority:
            problems.error(f"{where}.issuer.certificateAuthority", "must be PEM (-----BEGIN CERTIFICATE-----)")
        _claims(where, claims, jwt, problems)
    anonymous = authn.anonymous
    if anonymous is not None:
        if minor is not None and tuple(int(p) for p in minor[1:].split(".")) < ANONYMOUS_FROM:
            problems.error(f"{at}.anonymous", f"Kubernetes {minor} has no anonymous block (from v1.32); leave it out")
        paths = {c.path for c in anonymous.conditions}
        if not anonymous.enabled or (paths and not set(PROBE_PATHS) <= paths):
            problems.error(f"{at}.anonymous", "must keep anonymous /livez and /readyz: Kamaji's probes call them "
                           "without credentials, and a control plane failing them never becomes ready")
        if anonymous.conditions and not anonymous.enabled:
            problems.error(f"{at}.anonymous.conditions", "only with enabled: true")
