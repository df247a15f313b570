"""The credentials refusals word for word: what a person reads when `secret` or the doctor says no.

A message is the interface of a refusal (what is wrong and what to do), so each is pinned whole; the
token secret never appears in one.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tenantctl.credentials.capmox import capmox_secret, check_capmox_secret, secret_data
from tenantctl.credentials.inputs import check_root_ca, check_token_id, read_token_secret
from tenantctl.credentials.url import UrlFault, UrlProblem, url_problems
from tenantctl.problems import Problem, Problems

GOOD = {"url": "https://pve.example:8006", "token": "capmox@pve!capi", "secret": "s3cr3t-value", "insecure": "false"}

URLS = {
    "port not a number": ("https://pve:80x6", [UrlProblem(
        UrlFault.NOT_A_URL, "'https://pve:80x6' has a port that is not a number", "give https://host:8006")]),
    "no scheme": ("pve.example:8006", [UrlProblem(
        UrlFault.NOT_A_URL, "'pve.example:8006' is not an https URL of a Proxmox VE host",
        "give https://host:8006, e.g. https://pve.example:8006")]),
    "plain http": ("http://pve:8006", [UrlProblem(
        UrlFault.PLAIN_HTTP, "'http://pve:8006' is plain http",
        "use https://pve:8006 (Proxmox serves only HTTPS on 8006); the token would cross the network unencrypted")]),
    "api suffix with a slash": ("https://pve:8006/api2/json/", [UrlProblem(
        UrlFault.API_SUFFIX, "'https://pve:8006/api2/json/' ends in /api2/json",
        "drop /api2/json: capmox appends it itself, so every call would go to /api2/json/api2/json/… and fail "
        "with 501; use https://pve:8006")]),
    "a path": ("https://pve:8006/pve?x=1", [UrlProblem(
        UrlFault.PATH, "'https://pve:8006/pve?x=1' has a path, query or fragment",
        "give only scheme, host and port, e.g. https://pve:8006")]),
    "http and a path": ("http://pve/x", [
        UrlProblem(UrlFault.PLAIN_HTTP, "'http://pve/x' is plain http",
                   "use https://pve (Proxmox serves only HTTPS on 8006); the token would cross the network "
                   "unencrypted"),
        UrlProblem(UrlFault.PATH, "'http://pve/x' has a path, query or fragment",
                   "give only scheme, host and port, e.g. https://pve"),
    ]),
    "a path ending in X": ("https://pve:8006/api2/jsonX", [UrlProblem(
        UrlFault.PATH, "'https://pve:8006/api2/jsonX' has a path, query or fragment",
        "give only scheme, host and port, e.g. https://pve:8006")]),
    "a trailing slash only": ("https://pve:8006/", []),
}


@pytest.mark.parametrize(("url", "expected"), URLS.values(), ids=URLS.keys())
def test_url_problems_word_for_word(url: str, expected: list[UrlProblem]) -> None:
    assert url_problems(url) == expected


def test_token_id_refusal() -> None:
    problems = Problems()
    check_token_id("capmox@pve", problems)
    assert list(problems) == [Problem("--token-id", "'capmox@pve' is not a Proxmox API token id; expected "
                                                    "USER@REALM!TOKENNAME (e.g. capmox@pve!capi)")]


@pytest.mark.parametrize(
    ("variable", "environ", "message"),
    [
        ("PVE TOKEN", {}, "not an environment variable name (value not shown: it may be the secret itself); pass "
                          "the NAME of a variable that holds the token secret"),
        ("PVE_TOKEN", {}, "environment variable PVE_TOKEN is unset or empty"),
        ("PVE_TOKEN", {"PVE_TOKEN": "ab cd"}, "environment variable PVE_TOKEN contains whitespace (value not "
                                              "shown); a Proxmox token secret has none"),
    ],
)
def test_token_secret_refusals(variable: str, environ: dict[str, str], message: str) -> None:
    problems = Problems()
    assert read_token_secret(variable, environ, problems) == ""
    assert list(problems) == [Problem("--token-secret-env", message)]


def test_an_unreadable_root_ca_names_the_path_and_the_error(tmp_path: Path) -> None:
    problems = Problems()
    assert check_root_ca(tmp_path / "absent.pem", problems) == ""
    assert list(problems) == [Problem("--root-ca", f"cannot read {str(tmp_path / 'absent.pem')!r}: "
                                                   "FileNotFoundError")]


def test_a_root_ca_without_a_certificate_is_refused_and_yields_nothing(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate\n")
    problems = Problems()
    assert check_root_ca(ca, problems) == ""
    assert list(problems) == [
        Problem("--root-ca", f"{str(ca)!r} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")]


def test_a_root_ca_that_is_not_utf8_is_refused_as_undecodable(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\n\xff\xfe\n")
    problems = Problems()
    assert check_root_ca(ca, problems) == ""
    assert list(problems) == [Problem("--root-ca", f"cannot read {str(ca)!r}: UnicodeDecodeError")]


def test_the_capmox_secret_findings_word_for_word() -> None:
    missing = check_capmox_secret({}, spec_insecure=False)
    assert [f.message for f in missing] == [
        "key url is missing or empty; capmox cannot reach Proxmox without it",
        "key token is missing or empty; capmox cannot reach Proxmox without it",
        "key secret is missing or empty; capmox cannot reach Proxmox without it",
        "key insecure is missing, so capmox v0.7.7 skips TLS verification while the spec says insecure: false; "
        "add insecure: \"false\" (`tenantctl secret proxmox-cluster` writes it)",
    ]
    [unreadable] = check_capmox_secret({**GOOD, "root_ca": "junk"}, spec_insecure=False)
    assert unreadable.message == ("key root_ca holds no PEM certificate (-----BEGIN CERTIFICATE-----); capmox "
                                  "fails with 'certificate was not appended'")


def test_secret_data_decodes_only_strict_base64_as_the_api_server_stores_it() -> None:
    """Go's StdEncoding refuses characters outside the alphabet; Python would skip them unless told to validate."""
    secret = {"data": {"url": base64.b64encode(b"https://pve:8006").decode(), "token": "Y2Fw!bW94",
                       "secret": base64.b64encode(b"\xff").decode()},
              "stringData": {"insecure": "false"}}
    assert secret_data(secret) == {"url": "https://pve:8006", "token": "", "secret": "", "insecure": "false"}


def test_the_capmox_secret_object_whole() -> None:
    assert capmox_secret("acme-capmox", "tenant-acme", url="https://pve:8006", token_id="capmox@pve!capi",
                         token_secret="s3cr3t", insecure=False, root_ca="PEM") == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "acme-capmox", "namespace": "tenant-acme",
                     "labels": {"app.kubernetes.io/managed-by": "tenantctl"}},
        "type": "Opaque",
        "stringData": {"url": "https://pve:8006", "token": "capmox@pve!capi", "secret": "s3cr3t",
                       "insecure": "false", "root_ca": "PEM"},
    }
