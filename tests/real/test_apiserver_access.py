"""SSO and audit on a real kube-apiserver started with exactly what tenantctl renders: the
AuthenticationConfiguration and audit policy ConfigMaps' files (their mount paths mapped into a temp
folder) and the KamajiControlPlane's apiServer flags. The issuer is a real HTTPS server on loopback
serving OIDC discovery and a JWKS; tokens are RS256 JWTs signed by its key."""

from __future__ import annotations

import base64
import json
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from pytest_httpserver import HTTPServer

from real_api import Api
from real_control_plane import CertificateAuthority, ControlPlane, binaries
from tenant_support import clone, doc, load_example
from tenantctl.render import render_cluster
from tenantctl.render.apiserver_access import AUDIT_DIR, AUDIT_LOG_DIR, AUTHN_DIR
from tenantctl.spec import parse_tenant_documents

pytestmark = [pytest.mark.timeout(180)]

SECRET_VALUE = "audit-must-never-see-this"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    def __init__(self, server: HTTPServer) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.url = f"https://127.0.0.1:{server.port}"
        numbers = self.key.public_key().public_numbers()
        jwk = {"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
               "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
               "e": b64url(numbers.e.to_bytes(3, "big"))}
        server.expect_request("/.well-known/openid-configuration").respond_with_json(
            {"issuer": self.url, "jwks_uri": f"{self.url}/keys", "id_token_signing_alg_values_supported": ["RS256"]})
        server.expect_request("/keys").respond_with_json({"keys": [jwk]})

    def token(self, **claims: Any) -> str:
        now = int(time.time())
        payload = {"iss": self.url, "aud": "tenant-demo", "sub": "u-1", "iat": now, "nbf": now - 5,
                   "exp": now + 600, **claims}
        head = b64url(json.dumps({"alg": "RS256", "kid": "k1", "typ": "JWT"}).encode())
        body = b64url(json.dumps(payload).encode())
        signature = self.key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{head}.{body}.{b64url(signature)}"


@pytest.fixture()
def issuer(tmp_path: Path) -> Iterator[tuple[Issuer, bytes]]:
    ca = CertificateAuthority.new("issuer-ca")
    cert, key = ca.issue("issuer", server=True, hosts=("127.0.0.1",))
    (tmp_path / "issuer.crt").write_bytes(cert)
    (tmp_path / "issuer.key").write_bytes(key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "issuer.crt", tmp_path / "issuer.key")
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.start()
    try:
        yield Issuer(server), ca.pem
    finally:
        server.clear()
        server.stop()


def rendered(issuer: Issuer, ca: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    docs = clone(load_example("kubevirt.yaml"))
    tc = doc(docs, "TenantCluster")
    tc["spec"]["version"] = "v1.34"
    tc["spec"].setdefault("controlPlane", {})["apiServer"] = {
        "authentication": {
            "jwt": [{
                "issuer": {"url": issuer.url, "audiences": ["tenant-demo"], "certificateAuthority": ca.decode()},
                "claimValidationRules": [{"expression": "claims.email_verified == true",
                                          "message": "the e-mail address is not verified"}],
                "claimMappings": {"username": {"claim": "email", "prefix": "oidc:"},
                                  "groups": {"claim": "groups", "prefix": "oidc:"},
                                  "extra": [{"key": "example.com/team", "valueExpression": "claims.team"}]},
                "userValidationRules": [{"expression": "!user.username.startsWith('oidc:system:')",
                                         "message": "no system names through the issuer"}],
            }],
            "anonymous": {"enabled": True, "conditions": [{"path": "/livez"}, {"path": "/readyz"},
                                                           {"path": "/healthz"}]},
        },
        "audit": {"preset": "RequestBodies", "shipping": "sidecar"},
    }
    tenant = parse_tenant_documents(docs)
    (cluster,) = tenant.clusters
    objects = render_cluster(cluster, tenant.pools_of(cluster), None)
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    return objects, list(kcp["spec"]["apiServer"]["extraArgs"])


def mounted(objects: list[dict[str, Any]], args: list[str], root: Path) -> list[str]:
    """Write each ConfigMap where its volume is mounted, under `root`; the flags with the paths mapped."""
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    volumes = {v["name"]: v for v in kcp["spec"]["deployment"]["extraVolumes"]}
    maps = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ConfigMap"}
    for mount in kcp["spec"]["apiServer"]["extraVolumeMounts"]:
        target = root / mount["mountPath"].lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        source = volumes[mount["name"]]
        if "configMap" in source:
            for key, text in maps[source["configMap"]["name"]]["data"].items():
                (target / key).write_text(text)
    out = []
    for arg in args:
        for path in (AUTHN_DIR, AUDIT_DIR, AUDIT_LOG_DIR):
            arg = arg.replace(path, str(root / path.lstrip("/")))
        out.append(arg)
    return out


def whoami(plane: ControlPlane, token: str | None) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.post(f"{plane.server}/apis/authentication.k8s.io/v1/selfsubjectreviews", headers=headers,
                         json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                         verify=str(plane.ca_path), timeout=10)


def test_the_rendered_config_admits_the_issuers_users_and_audits_without_secret_bodies(
    installed: Any, admin: Api, management: ControlPlane, issuer: tuple[Issuer, bytes], tmp_path: Path,
) -> None:
    idp, ca = issuer
    objects, args = rendered(idp, ca)
    # The real server (with the Kamaji provider's CRD) takes the KamajiControlPlane and the ConfigMaps as rendered.
    for obj in objects:
        if obj["kind"] in ("KamajiControlPlane", "ConfigMap"):
            admin.apply(obj, dry_run=True)
    flags = mounted(objects, args, tmp_path / "pod")
    plane = ControlPlane(tmp_path / "apiserver", binaries(), controller_manager=False,
                         etcd_url=management.etcd_url, etcd_prefix="/access-test", extra_args=tuple(flags))
    plane.start()
    try:
        alice = idp.token(email="alice@example.com", email_verified=True, groups=["dev", "ops"], team="blue")
        deadline = time.monotonic() + 30
        answer = whoami(plane, alice)
        while answer.status_code != 201 and time.monotonic() < deadline:  # the JWKS is fetched after the start
            time.sleep(0.5)
            answer = whoami(plane, alice)
        assert answer.status_code == 201, answer.text
        user = answer.json()["status"]["userInfo"]
        assert user["username"] == "oidc:alice@example.com"
        assert {"oidc:dev", "oidc:ops", "system:authenticated"} <= set(user["groups"])
        assert user["extra"]["example.com/team"] == ["blue"]
        # Refused: another audience, an unverified address, a name the user rule forbids.
        for claims in ({"aud": "another-cluster", "email": "alice@example.com", "email_verified": True},
                       {"email": "alice@example.com", "email_verified": False},
                       {"email": "system:admin", "email_verified": True}):
            assert whoami(plane, idp.token(**claims)).status_code == 401, claims
        # Anonymous: the probe paths Kamaji calls, and nothing else.
        assert requests.get(f"{plane.server}/readyz", verify=str(plane.ca_path), timeout=10).status_code == 200
        assert requests.get(f"{plane.server}/livez", verify=str(plane.ca_path), timeout=10).status_code == 200
        assert requests.get(f"{plane.server}/api", verify=str(plane.ca_path), timeout=10).status_code == 401
        # Audit: a Secret's and a ConfigMap's writes are recorded without their bodies; a ServiceAccount's with it.
        admin = plane.admin
        for kind, body in (("secrets", {"kind": "Secret", "stringData": {"password": SECRET_VALUE}}),
                           ("configmaps", {"kind": "ConfigMap", "data": {"token": SECRET_VALUE}}),
                           ("serviceaccounts", {"kind": "ServiceAccount", "automountServiceAccountToken": False})):
            made = admin.post(f"{plane.server}/api/v1/namespaces/default/{kind}", timeout=10,
                              json={"apiVersion": "v1", "metadata": {"name": "audited"}, **body})
            assert made.status_code == 201, made.text
        log = tmp_path / "pod" / AUDIT_LOG_DIR.lstrip("/") / "audit.log"
        events: list[dict[str, Any]] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
            if sum((e.get("objectRef") or {}).get("name") == "audited" for e in events) >= 3:
                break
            time.sleep(0.3)
        created = {e["objectRef"]["resource"]: e for e in events
                   if (e.get("objectRef") or {}).get("name") == "audited" and e["verb"] == "create"}
        for kind in ("secrets", "configmaps"):
            assert created[kind]["level"] == "Metadata" and "requestObject" not in created[kind]
        assert created["serviceaccounts"]["level"] == "Request"
        assert created["serviceaccounts"]["requestObject"]["automountServiceAccountToken"] is False
        assert SECRET_VALUE not in log.read_text()
        assert not [e for e in events if e.get("requestURI", "").startswith(("/livez", "/readyz"))]
        assert any(e["user"]["username"] == "oidc:alice@example.com" for e in events)
    finally:
        plane.stop()
