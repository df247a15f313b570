"""What a capmox Secret's keys mean (capmox v0.7.7 `pkg/scope/cluster.go`), checked once for operator and doctor."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tenantctl.credentials.capmox import (
    CredentialsFinding,
    capmox_skips_verification,
    check_capmox_secret,
    secret_data,
)
from tenantctl.credentials.url import UrlFault, url_problems
from tenantctl.operator.phases.conditions import Reason

GOOD = {"url": "https://pve.example:8006", "token": "capmox@pve!capi", "secret": "s3cr3t-value", "insecure": "false"}


def without(key: str) -> dict[str, str]:
    return {k: v for k, v in GOOD.items() if k != key}


@pytest.mark.parametrize(
    ("value", "skips"),
    [(None, True), ("true", True), ("TRUE", True), ("1", True), ("on", True), ("yes", True), ("y", True),
     ("false", False), ("0", False), ("no", False), ("", False), ("t", False)],
)
def test_capmox_skips_verification_when_insecure_is_absent_or_true_ish(value: str | None, skips: bool) -> None:
    data = without("insecure") if value is None else {**GOOD, "insecure": value}
    assert capmox_skips_verification(data) is skips


CASES = {
    "complete, verifying": (GOOD, False, []),
    "complete, insecure as the spec says": ({**GOOD, "insecure": "true"}, True, []),
    "insecure absent while the spec verifies": (without("insecure"), False, [CredentialsFinding.MISSING_INSECURE]),
    "insecure absent while the spec accepts insecure": (without("insecure"), True, []),
    "insecure true while the spec verifies": (
        {**GOOD, "insecure": "yes"}, False, [CredentialsFinding.INSECURE_CONTRADICTS_SPEC]),
    "insecure false while the spec accepts insecure": (
        GOOD, True, [CredentialsFinding.INSECURE_CONTRADICTS_SPEC]),
    "url missing": (without("url"), False, [CredentialsFinding.MISSING_URL]),
    "token missing": (without("token"), False, [CredentialsFinding.MISSING_TOKEN]),
    "secret empty": ({**GOOD, "secret": ""}, False, [CredentialsFinding.MISSING_SECRET]),
    "root_ca not PEM": ({**GOOD, "root_ca": "junk"}, False, [CredentialsFinding.UNREADABLE_ROOT_CA]),
    "everything missing": ({}, False, [CredentialsFinding.MISSING_URL, CredentialsFinding.MISSING_TOKEN,
                                       CredentialsFinding.MISSING_SECRET, CredentialsFinding.MISSING_INSECURE]),
}


@pytest.mark.parametrize(("data", "spec_insecure", "expected"), CASES.values(), ids=CASES.keys())
def test_findings(data: dict[str, str], spec_insecure: bool, expected: list[CredentialsFinding]) -> None:
    findings = check_capmox_secret(data, spec_insecure)
    assert [f.finding for f in findings] == expected
    for f in findings:
        assert f"key {f.key}" in f.message
        assert "capmox@pve!capi" not in f.message and (data.get("secret") or "\0") not in f.message


def test_a_valid_root_ca_is_no_finding(fakepve_cafile: str) -> None:
    assert check_capmox_secret({**GOOD, "root_ca": Path(fakepve_cafile).read_text()}, False) == []


def test_every_finding_is_an_operator_reason_naming_its_key() -> None:
    for finding in CredentialsFinding:
        assert Reason(finding.value)
        assert "Key" in finding.value


def test_secret_data_decodes_data_and_overlays_string_data() -> None:
    secret = {"data": {"url": base64.b64encode(b"https://a:8006").decode(), "token": "%%%"},
              "stringData": {"secret": "s"}}
    assert secret_data(secret) == {"url": "https://a:8006", "token": "", "secret": "s"}


@pytest.mark.parametrize(
    ("data", "spec_insecure", "says"),
    [({**GOOD, "insecure": "yes"}, False, "skip TLS verification while the spec says insecure: false; "
                                           'write insecure: "false"'),
     (GOOD, True, 'require TLS verification while the spec says insecure: true; write insecure: "true"')],
)
def test_a_contradicting_insecure_key_says_what_capmox_does_and_what_to_write(
    data: dict[str, str], spec_insecure: bool, says: str
) -> None:
    (finding,) = check_capmox_secret(data, spec_insecure)
    assert finding.message == f"key insecure makes capmox {says}"


def test_the_secret_is_labelled_as_tenantctls() -> None:
    from tenantctl.credentials.capmox import capmox_secret

    secret = capmox_secret("capmox-acme", "tenant-acme", url="https://pve.example:8006", token_id="t@pve!x",
                           token_secret="s", insecure=False)
    assert secret["metadata"] == {"name": "capmox-acme", "namespace": "tenant-acme",
                                  "labels": {"app.kubernetes.io/managed-by": "tenantctl"}}


@pytest.mark.parametrize(
    ("url", "faults"),
    [("https://pve.example:8006", []),
     ("https://pve.example:8006/api2/json", [UrlFault.API_SUFFIX]),
     ("http://pve.example:8006/api2/json/", [UrlFault.PLAIN_HTTP, UrlFault.API_SUFFIX]),
     ("https://pve.example:8006/pve?x=1", [UrlFault.PATH]),
     ("https://pve.example:port", [UrlFault.NOT_A_URL]),
     ("pve.example:8006", [UrlFault.NOT_A_URL])],
)
def test_each_url_problem_names_its_fault(url: str, faults: list[UrlFault]) -> None:
    """The doctor tells plain HTTP (a warning when the spec says insecure) from the others by its fault."""
    assert [p.fault for p in url_problems(url)] == faults
