"""spec.controlPlane.apiServer.authentication and .audit: every refusal names its path, all at once."""

from __future__ import annotations

from typing import Any

import pytest

from tenant_support import clone, doc, load_example, refused
from tenantctl.spec import parse_tenant_documents

AT = "TenantCluster/demo.spec.controlPlane.apiServer"
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def jwt(**over: Any) -> dict[str, Any]:
    return {"issuer": {"url": "https://idp.example.com", "audiences": ["tenant"]},
            "claimMappings": {"username": {"claim": "email", "prefix": "oidc:"}}, **over}


def with_api_server(version: str = "v1.34", extra_args: dict[str, str] | None = None,
                    **api_server: Any) -> list[dict[str, Any]]:
    docs = clone(load_example("kubevirt.yaml"))
    tc = doc(docs, "TenantCluster")
    tc["spec"]["version"] = version
    tc["spec"].setdefault("controlPlane", {})["apiServer"] = {**api_server, **({"extraArgs": extra_args}
                                                                              if extra_args else {})}
    return docs


def test_a_plain_issuer_is_taken() -> None:
    docs = with_api_server(authentication={"jwt": [jwt()]}, audit={})
    assert parse_tenant_documents(docs).clusters[0].spec.control_plane.api_server.authentication is not None


def test_what_the_apiserver_refuses_at_start_is_refused_here_all_at_once() -> None:
    bad = {
        "issuer": {"url": "http://idp.example.com/?x=1", "audiences": ["a", "b", "a"],
                   "certificateAuthority": "not pem", "discoveryURL": "https://idp.example.com/?x=1"},
        "claimValidationRules": [{"claim": "hd", "expression": "true"}, {"expression": "claims.email_verified =="}],
        "claimMappings": {"username": {"claim": "email"}, "groups": {"expression": "claims.groups.map(g, g"},
                          "uid": {}, "extra": [{"key": "Team", "valueExpression": "claims.team"},
                                               {"key": "example.com/x", "valueExpression": "nope.x"}]},
        "userValidationRules": [{"expression": "claims.sub != ''"}],
    }
    found = refused(with_api_server(authentication={"jwt": [bad]}))
    j = f"{AT}.authentication.jwt[0]"
    assert set(found) == {
        f"{j}.issuer.url", f"{j}.issuer.discoveryURL", f"{j}.issuer.audiences", f"{j}.issuer.audienceMatchPolicy",
        f"{j}.issuer.certificateAuthority", f"{j}.claimValidationRules[0]", f"{j}.claimValidationRules[1].expression",
        f"{j}.claimMappings.username.prefix", f"{j}.claimMappings.groups.expression", f"{j}.claimMappings.uid",
        f"{j}.claimMappings.extra[0].key", f"{j}.claimMappings.extra[1].valueExpression",
        f"{j}.userValidationRules[0].expression",
    }
    assert "only claims exist here" in found[f"{j}.claimMappings.extra[1].valueExpression"]
    assert "only user exist here" in found[f"{j}.userValidationRules[0].expression"]


@pytest.mark.parametrize("url", ["https://kubernetes.default.svc", "https://kubernetes.default.svc.cluster.local/"])
def test_the_shared_service_account_issuer_is_refused(url: str) -> None:
    found = refused(with_api_server(authentication={"jwt": [jwt(issuer={"url": url, "audiences": ["x"]})]}))
    assert "service-account issuer" in found[f"{AT}.authentication.jwt[0].issuer.url"]


def test_two_authenticators_of_one_issuer_are_refused() -> None:
    found = refused(with_api_server(authentication={"jwt": [jwt(), jwt()]}))
    assert "also jwt[0]'s" in found[f"{AT}.authentication.jwt[1].issuer.url"]


@pytest.mark.parametrize("anonymous", [
    {"enabled": False},
    {"enabled": True, "conditions": [{"path": "/livez"}]},
    {"enabled": True, "conditions": [{"path": "/healthz"}]},
])
def test_an_anonymous_block_that_fails_kamajis_probes_is_refused(anonymous: dict[str, Any]) -> None:
    found = refused(with_api_server(authentication={"anonymous": anonymous}))
    assert "Kamaji's probes" in found[f"{AT}.authentication.anonymous"]


def test_minors_that_do_not_serve_the_api_are_refused() -> None:
    assert "from v1.30" in refused(with_api_server("v1.29", authentication={"jwt": [jwt()]}))[f"{AT}.authentication"]
    found = refused(with_api_server("v1.31", authentication={"anonymous": {"enabled": True}}))
    assert "from v1.32" in found[f"{AT}.authentication.anonymous"]


@pytest.mark.parametrize("flag", ["oidc-issuer-url", "authentication-config", "anonymous-auth"])
def test_the_flags_the_block_owns_are_refused_beside_it(flag: str) -> None:
    found = refused(with_api_server(extra_args={flag: "x"}, authentication={"jwt": [jwt()]}))
    assert f"{AT}.extraArgs.{flag}" in found
    assert parse_tenant_documents(with_api_server(extra_args={"oidc-issuer-url": "https://x"})).clusters


def test_audit_refusals_and_the_secret_body_warning() -> None:
    found = refused(with_api_server(extra_args={"audit-log-path": "/x"}, audit={
        "preset": "Metadata", "rules": [{"level": "Request", "nonResourceURLs": ["healthz"], "namespaces": ["a"]},
                                        {"level": "Metadata", "resources": [{"resourceNames": ["x"]}]}]}))
    assert set(found) == {f"{AT}.extraArgs.audit-log-path", f"{AT}.audit.rules",
                          f"{AT}.audit.rules[0].nonResourceURLs", f"{AT}.audit.rules[0].nonResourceURLs[0]",
                          f"{AT}.audit.rules[1].resources[0].resourceNames"}
    assert f"{AT}.audit.maxSizeMB" in refused(with_api_server(audit={"maxSizeMB": 0}))
    assert f"{AT}.audit.shipping" in refused(with_api_server(audit={"shipping": "syslog"}))
    tenant = parse_tenant_documents(with_api_server(audit={"rules": [{"level": "RequestResponse"}]}))
    assert [w.path for w in tenant.warnings if "Secret bodies" in w.message] == [f"{AT}.audit.rules"]
    guarded = with_api_server(audit={"rules": [{"level": "Metadata", "resources": [{"resources": ["secrets"]}]},
                                               {"level": "RequestResponse"}]})
    assert not [w for w in parse_tenant_documents(guarded).warnings if "Secret bodies" in w.message]


# -- the edges (issue 59): each way an issuer URL is not plain https, each audit level, each rule shape -----

@pytest.mark.parametrize("url", [
    "http://idp.example.com",                  # the scheme alone: no query to be refused first
    "https://idp.example.com/?tenant=a",       # a query
    "https://idp.example.com/#top",            # a fragment
    "https://admin@idp.example.com",           # a user
    "https:///realms/a",                       # no host
    "ftp://idp.example.com",
])
@pytest.mark.parametrize("field", ["url", "discoveryURL"])
def test_every_issuer_url_that_is_not_plain_https_is_refused_alone(url: str, field: str) -> None:
    issuer = {"url": "https://idp.example.com", "audiences": ["tenant"], field: url}
    found = refused(with_api_server(authentication={"jwt": [jwt(issuer=issuer)]}))
    where = f"{AT}.authentication.jwt[0].issuer.{field}"
    assert set(found) == {where}, found
    assert "must be an https URL without query, fragment or user" in found[where]


def test_a_plain_https_discovery_url_is_taken() -> None:
    issuer = {"url": "https://idp.example.com", "discoveryURL": "https://idp.internal/.well-known/openid-configuration",
              "audiences": ["tenant"]}
    assert parse_tenant_documents(with_api_server(authentication={"jwt": [jwt(issuer=issuer)]})).clusters


def _secret_warnings(rules: list[dict[str, Any]]) -> list[str]:
    tenant = parse_tenant_documents(with_api_server(audit={"rules": rules}))
    return [w.path for w in tenant.warnings if "Secret bodies" in w.message]


@pytest.mark.parametrize(("level", "logs_bodies"), [("None", False), ("Metadata", False), ("Request", True),
                                                    ("RequestResponse", True)])
def test_each_audit_level_warns_exactly_when_it_logs_secret_bodies(level: str, logs_bodies: bool) -> None:
    """Request logs a write's body as RequestResponse does: both warn; None and Metadata log no body."""
    for rule in ({"level": level}, {"level": level, "resources": [{"group": "", "resources": ["secrets"]}]},
                 {"level": level, "verbs": ["create"]}):
        assert _secret_warnings([rule]) == ([f"{AT}.audit.rules"] if logs_bodies else []), rule


@pytest.mark.parametrize("first", [
    {"level": "Request", "resources": [{"group": "", "resources": ["configmaps"]}]},   # not secrets
    {"level": "Request", "resources": [{"group": "apps", "resources": ["secrets"]}]},  # another group's kind
    {"level": "Request", "verbs": ["get", "list"]},                                    # no write
    {"level": "Request", "namespaces": ["team-a"]},                                    # some namespaces only
    {"level": "Request", "users": ["alice"]},
    {"level": "Request", "resources": [{"group": "", "resources": ["secrets"], "resourceNames": ["one"]}]},
])
def test_a_rule_a_secret_write_does_not_match_is_passed_over(first: dict[str, Any]) -> None:
    """The apiserver takes the first rule a request matches: one that does not match a Secret write is
    passed over, and the next one decides."""
    assert _secret_warnings([first, {"level": "Metadata"}]) == []
    assert _secret_warnings([first, {"level": "Request"}]) == [f"{AT}.audit.rules"]


@pytest.mark.parametrize("resources", [["secrets"], ["*"], []])
def test_a_metadata_rule_for_secrets_first_guards_every_level_after_it(resources: list[str]) -> None:
    guard = {"level": "Metadata", "resources": [{"group": "", "resources": resources}]}
    for level in ("Request", "RequestResponse"):
        assert _secret_warnings([guard, {"level": level}]) == []
