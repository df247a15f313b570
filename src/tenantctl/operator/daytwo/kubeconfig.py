"""`tenantctl kubeconfig`: the tenant's admin kubeconfig Kamaji writes, made usable from outside.

Kamaji's Secret points at the apiserver Service's in-cluster name. With `--external` the server
becomes the address `spec.expose` publishes: the Ingress host on 443, or the LoadBalancer's host
name, pre-assigned address or assigned address on the Service's port.
"""

from __future__ import annotations

import base64
import copy
from typing import Any
from urllib.parse import urlsplit

from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.kube.tenants import (
    PEOPLE_KUBECONFIG_KEY,
    UnusableKubeconfig,
    admin_kubeconfig,
    parse_kubeconfig,
)
from tenantctl.problems import InvalidInput, Problem
from tenantctl.render import Names
from tenantctl.render.exposure import expose_type
from tenantctl.render.kamaji import KUBECONFIG_KEY
from tenantctl.spec import API_VERSION, TenantCluster, parse_tenant_documents
from tenantctl.spec.authentication import JWTAuthenticatorSpec

__all__ = ["INGRESS_PORT", "external_server", "oidc_kubeconfig", "user_kubeconfig"]

INGRESS_PORT = 443
_NOT_EXPOSED = (
    "is reachable only inside the management cluster (spec.expose.type is ClusterIP); expose it with "
    "spec.expose: {type: LoadBalancer} or {type: Ingress, hostname: api.example.com}, then run this again"
)


async def _tenant_cluster(api: KubeClient, namespace: str, name: str) -> TenantCluster:
    found = await api.get(await api.require(API_VERSION, "TenantCluster"), name, namespace)
    if found is None:
        raise InvalidInput([Problem(f"TenantCluster/{name}", f"no TenantCluster {namespace}/{name} in the cluster")])
    doc = {"apiVersion": API_VERSION, "kind": "TenantCluster", "metadata": {"name": name, "namespace": namespace}}
    return parse_tenant_documents([{**doc, "spec": found.get("spec") or {}}]).clusters[0]


async def _admin_kubeconfig(api: KubeClient, cluster: TenantCluster, key: str = KUBECONFIG_KEY) -> dict[str, Any]:
    names = Names(cluster)
    data = await admin_kubeconfig(api, cluster, key)
    if data is None:
        raise InvalidInput([
            Problem(
                f"TenantCluster/{names.cluster}",
                f"no admin kubeconfig yet (Secret {names.namespace}/{names.admin_kubeconfig}, key {key}): "
                "Kamaji writes it once the control plane is up",
            )
        ])
    return _parse_kubeconfig(data, f"Secret/{names.namespace}/{names.admin_kubeconfig}.data.{key}")


def _parse_kubeconfig(data: str, where: str) -> dict[str, Any]:
    """The Secret's kubeconfig; anything but what Kamaji writes is a refusal naming the key, not a traceback."""
    try:
        return parse_kubeconfig(data)
    except UnusableKubeconfig as exc:
        raise InvalidInput([Problem(where, str(exc))]) from None


async def _load_balancer_host(api: KubeClient, cluster: TenantCluster) -> str | None:
    names = Names(cluster)
    service = await api.get(await api.require("v1", "Service"), names.apiserver_service, names.namespace)
    for entry in (((service or {}).get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        if host := entry.get("ip") or entry.get("hostname"):
            return str(host)
    return None


async def external_server(api: KubeClient, cluster: TenantCluster, internal_server: str) -> str:
    """The URL a user outside the management cluster dials; refuses a tenant that is not exposed."""
    at = f"TenantCluster/{cluster.metadata.name}"
    kind = expose_type(cluster)
    expose = cluster.spec.expose
    if kind == "ClusterIP":
        raise InvalidInput([Problem("--external", f"{at} {_NOT_EXPOSED}")])
    if kind == "Ingress":
        assert expose is not None and expose.hostname is not None, "checked by the spec"
        return f"https://{expose.hostname}:{INGRESS_PORT}"
    host = (expose.hostname or expose.address if expose else None) or await _load_balancer_host(api, cluster)
    if host is None:
        raise InvalidInput([
            Problem("--external", f"{at}: the apiserver's LoadBalancer Service has no address yet; try again later")
        ])
    port = urlsplit(internal_server).port or 6443
    return f"https://{f'[{host}]' if ':' in host else host}:{port}"


async def user_kubeconfig(api: KubeClient, namespace: str, name: str, *, external: bool,
                          super_admin: bool = False) -> dict[str, Any]:
    """Kamaji's admin kubeconfig, every cluster entry pointed at the external address when asked: the one in
    `kubeadm:cluster-admins` (revocable by RBAC), or with `super_admin` the `system:masters` one."""
    cluster = await _tenant_cluster(api, namespace, name)
    key = KUBECONFIG_KEY if super_admin else PEOPLE_KUBECONFIG_KEY
    config = copy.deepcopy(await _admin_kubeconfig(api, cluster, key))
    if not external:
        return config
    for entry in config.get("clusters") or []:
        entry["cluster"]["server"] = await external_server(api, cluster, str(entry["cluster"]["server"]))
    return config


def _issuer_of(cluster: TenantCluster, issuer: str | None) -> JWTAuthenticatorSpec:
    at = f"TenantCluster/{cluster.metadata.name}.spec.controlPlane.apiServer.authentication"
    authn = cluster.spec.control_plane.api_server.authentication
    jwts = authn.jwt if authn is not None else []
    if not jwts:
        raise InvalidInput([Problem("--oidc", f"{at} names no JWT issuer: the tenant accepts no SSO tokens")])
    if issuer is None:
        if len(jwts) > 1:
            raise InvalidInput([Problem("--issuer", "required: the tenant accepts " + ", ".join(
                j.issuer.url for j in jwts))])
        return jwts[0]
    for jwt in jwts:
        if jwt.issuer.url.rstrip("/") == issuer.rstrip("/"):
            return jwt
    raise InvalidInput([Problem("--issuer", f"{issuer!r} is not among {at}.jwt: "
                                + ", ".join(j.issuer.url for j in jwts))])


def oidc_user(jwt: JWTAuthenticatorSpec, client_id: str | None) -> dict[str, Any]:
    """The kubeconfig user that gets its token from the issuer through kubectl's exec credential plugin
    convention (kubelogin's `kubectl oidc-login get-token`, the client most issuers document): the token's
    audience is the client id, so it defaults to the issuer's first audience; the scopes ask for the
    claims the tenant maps (an `email` or `groups` claim is sent only when its scope is asked for)."""
    claims = {m.claim for m in (jwt.claim_mappings.username, jwt.claim_mappings.groups) if m is not None and m.claim}
    args = ["oidc-login", "get-token", f"--oidc-issuer-url={jwt.issuer.url}",
            f"--oidc-client-id={client_id or jwt.issuer.audiences[0]}"]
    args += [f"--oidc-extra-scope={scope}" for scope in sorted(claims & {"email", "groups", "profile"})]
    if jwt.issuer.certificate_authority:
        ca = base64.b64encode(jwt.issuer.certificate_authority.encode()).decode()
        args.append(f"--certificate-authority-data={ca}")
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "kubectl", "args": args,
                     "interactiveMode": "IfAvailable", "provideClusterInfo": False}}


async def oidc_kubeconfig(api: KubeClient, namespace: str, name: str, *, external: bool, issuer: str | None,
                          client_id: str | None) -> dict[str, Any]:
    """The admin kubeconfig's clusters with a user that signs in through the tenant's issuer: nothing of
    the admin credential is in it."""
    cluster = await _tenant_cluster(api, namespace, name)
    jwt = _issuer_of(cluster, issuer)
    admin = await user_kubeconfig(api, namespace, name, external=external)
    user = f"{name}-oidc"
    clusters = admin.get("clusters") or []
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": clusters,
        "users": [{"name": user, "user": oidc_user(jwt, client_id)}],
        "contexts": [{"name": f"{user}@{entry['name']}", "context": {"cluster": entry["name"], "user": user}}
                     for entry in clusters],
        "current-context": f"{user}@{clusters[0]['name']}" if clusters else "",
    }
