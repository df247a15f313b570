"""No credential is echoed: URL userinfo and credential-named parameters are masked wherever a value is quoted
(issue 61: an S3 endpoint with userinfo reached the error, the Warning Event, the Ready message and the log)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tenant_support import doc, load_example
from tenantctl.cli import app
from tenantctl.problems import InvalidInput, Problem
from tenantctl.redaction import redact
from tenantctl.spec import parse_tenant_documents


@pytest.mark.parametrize(("text", "shown"), [
    ("https://admin:hunter2@s3.example.com", "https://***@s3.example.com"),
    ("http://admin:hunter2@s3.example.com:9000/x", "http://***@s3.example.com:9000/x"),
    ("'s3://AKIAX:hunter2@bucket' is not", "'s3://***@bucket' is not"),
    ("https://hunter2@factory.example", "https://***@factory.example"),
    ("https://s3.example.com/?X-Amz-Signature=hunter2&a=1", "https://s3.example.com/?X-Amz-Signature=***&a=1"),
    ("https://h/p?token=hunter2", "https://h/p?token=***"),
    ("http://h/p?a=1&password=hunter2#f", "http://h/p?a=1&password=***#f"),
    ("api_key=hunter2 and secret_key=hunter2", "api_key=*** and secret_key=***"),
])
def test_credentials_in_a_url_or_a_parameter_are_masked(text: str, shown: str) -> None:
    assert redact(text) == shown and "hunter2" not in redact(text)


@pytest.mark.parametrize("text", [
    "capmox@pve!capi is not a token id",  # a Proxmox token id: user@realm, no URL
    "https://pve.example:8006",
    "ops@example.com wrote: x=1",
    "spec.version: 'v1.33' is fine",
])
def test_what_is_no_credential_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_problem_never_holds_the_credential_it_quotes() -> None:
    problem = Problem("--url 'https://root:hunter2@pve:8006'", "'https://root:hunter2@pve:8006' is refused")
    assert "hunter2" not in problem.path + problem.message + str(problem)


def _refusal(docs: list[dict[str, object]]) -> str:
    with pytest.raises(InvalidInput) as refused:
        parse_tenant_documents(docs)
    return "\n".join(str(p) for p in refused.value.problems)


def test_a_backup_endpoint_with_userinfo_is_refused_without_showing_it() -> None:
    docs = load_example("kubevirt.yaml")
    doc(docs, "TenantCluster")["spec"]["backup"] = {
        "schedule": "@daily", "s3": {"endpoint": "https://AKIAX:hunter2@s3.example.com", "bucket": "backups",
                                     "credentialsSecretName": "s3"}, "encryption": {"keySecretName": "k"}}
    said = _refusal(docs)
    assert "s3.endpoint" in said and "***@s3.example.com" in said and "hunter2" not in said


def test_an_image_factory_url_with_userinfo_is_refused_and_plain_http_warned() -> None:
    docs = load_example("kubevirt.yaml")
    doc(docs, "TenantCluster")["spec"]["talos"]["imageFactoryURL"] = "https://u:hunter2@factory.example"
    said = _refusal(docs)
    assert "spec.talos.imageFactoryURL" in said and "user name or password" in said and "hunter2" not in said
    doc(docs, "TenantCluster")["spec"]["talos"]["imageFactoryURL"] = "http://factory.example"
    warned = [str(w) for w in parse_tenant_documents(docs).warnings]
    assert any("imageFactoryURL" in w and "plain HTTP" in w for w in warned), warned


def test_secret_url_with_userinfo_is_refused_without_showing_it() -> None:
    result = CliRunner().invoke(app, ["secret", "proxmox-cluster", "capmox", "-n", "t", "--url",
                                      "https://root:hunter2@pve.example:8006", "--token-id", "capmox@pve!capi",
                                      "--token-secret-env", "PVE_SECRET"], env={"PVE_SECRET": "s"})
    assert result.exit_code == 2, result.output
    assert "user name or password" in result.output and "hunter2" not in result.output


def test_a_condition_masks_what_an_api_error_quoted() -> None:
    """A condition's message may come from the API server's answer, not a Problem: masked there too."""
    from tenantctl.operator.phases.conditions import ConditionType, Reason, condition

    made = condition(ConditionType.APPLIED, False, Reason.API_ERROR, "500: GET https://u:hunter2@s3/x failed", 3)
    assert made["message"] == "500: GET https://***@s3/x failed"


def test_plan_shows_which_credential_of_a_machine_config_changes_but_never_its_value() -> None:
    """A TalosConfigTemplate is no Secret, yet its patches carry the machine token and CA keys (issue 61)."""
    from tenantctl.operator.daytwo.plan import changed_fields

    def template(token: str, replicas: int) -> dict[str, object]:
        patch = f"machine:\n  token: {token}\n  ca:\n    key: {token}-key\ncluster:\n  secret: {token}-s\n"
        return {"spec": {"template": {"spec": {"strategicPatches": [patch], "replicas": replicas,
                                               "bootstrapToken": token}}}}

    lines = changed_fields("TalosConfigTemplate", template("hunter2", 1), template("hunter3", 2))
    shown = "\n".join(lines)
    assert "hunter" not in shown, shown
    assert "token: ***" in shown and "key: ***" in shown
    assert "spec.template.spec.bootstrapToken: (value not shown)" in shown
    assert "~ spec.template.spec.replicas: 1 -> 2" in shown, "what is no credential is shown as before"
