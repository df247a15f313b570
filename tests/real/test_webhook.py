"""The operator's validating webhook, registered by the configuration `install` renders, on the real server.

The operator serves it over TLS on loopback with a certificate of the test's CA; the configuration is
install's own with its `clientConfig` pointed there (`url` and `caBundle`, as cert-manager's cainjector
would fill the bundle). The real API server then calls it on every create, update and delete of a
TenantCluster or NodePool: refusals carry tenantctl's own message, good objects are admitted.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from operator_support import FAST

from real_api import Api, APIRefusal
from real_control_plane import ControlPlane, free_port
from real_seed import b64, eventually, operator_connection, running_operator
from tenant_support import clone, doc, load_example
from tenantctl.operator.config.settings import WebhookSettings
from tenantctl.operator.install.webhook import webhook_objects

pytestmark = [pytest.mark.timeout(240)]

NS = "hook-tenants"
VWC = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")


def _registration(port: int, ca: bytes) -> dict[str, Any]:
    """install's ValidatingWebhookConfiguration, its Service reference swapped for the loopback URL."""
    (config,) = [o for o in webhook_objects("tenantctl-operator-test", "tenantctl-system", {})
                 if o["kind"] == "ValidatingWebhookConfiguration"]
    config = copy.deepcopy(config)
    del config["metadata"]["annotations"]
    for hook in config["webhooks"]:
        path = hook["clientConfig"]["service"]["path"]
        hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": b64(ca)}
    return config


async def _refusal(admin: Api, obj: dict[str, Any]) -> APIRefusal:
    """The API server's refusal of `obj`. Every call leaves the event loop free (a thread): the webhook
    the server calls meanwhile is served on this very loop."""
    with pytest.raises(APIRefusal) as refused:
        await asyncio.to_thread(admin.apply, obj, manager="kubectl")
    return refused.value


async def test_the_webhook_refuses_with_tenantctls_message_and_admits_good_objects(
    installed: Any, admin: Api, management: ControlPlane, tmp_path: Path,
) -> None:
    certs = tmp_path / "tls"
    certs.mkdir()
    cert, key = management.ca.issue("tenantctl-operator-webhook", server=True, hosts=("127.0.0.1",))
    (certs / "tls.crt").write_bytes(cert)
    (certs / "tls.key").write_bytes(key)
    port = free_port()
    settings = dataclasses.replace(FAST, webhook=WebhookSettings(port=port, addr="127.0.0.1", cert_dir=str(certs)))
    docs = clone(load_example("kubevirt.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = NS
    admin.namespace(NS)
    registration = _registration(port, management.ca.pem)
    try:
        async with running_operator(operator_connection(management), settings):
            await asyncio.to_thread(admin.apply, registration)
            cluster, md0 = doc(docs, "TenantCluster"), doc(docs, "NodePool", "md0")

            # Until the webhook answers, a tenant object is not admitted (failurePolicy: Fail).
            def admitted() -> bool:
                try:
                    admin.apply(cluster, manager="kubectl")
                except APIRefusal:
                    return False
                return True

            await eventually(admitted, 30, what="the TenantCluster admitted through the webhook")
            await asyncio.to_thread(admin.apply, md0, manager="kubectl")

            bad = copy.deepcopy(md0)
            bad["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
            refused = await _refusal(admin, bad)
            assert 'admission webhook "validate.nodepools.tenantctl.io" denied the request' in str(refused)
            assert ("NodePool/md0.spec.taints[0].key: taint key 'node.kubernetes.io/unschedulable' is in the "
                    "reserved domain 'kubernetes.io'") in str(refused)

            labelled = copy.deepcopy(md0)
            labelled["spec"]["labels"] = {"kubernetes.io/hostname": "x"}
            assert "label key 'kubernetes.io/hostname' is in the reserved domain 'kubernetes.io'" in str(
                await _refusal(admin, labelled))

            orphan = copy.deepcopy(md0)
            orphan["metadata"]["name"] = "orphan"
            orphan["spec"]["cluster"] = "nonexistent"
            assert "nonexistent" in str(await _refusal(admin, orphan)), "a pool of no TenantCluster"

            skipped = copy.deepcopy(cluster)
            skipped["spec"]["version"] = "v1.35"
            refusal = await _refusal(admin, skipped)
            assert "spec.version" in str(refusal) and "v1.35" in str(refusal), "a skipped minor"

            # A cluster's DELETE is judged too: its pools must go first.
            with pytest.raises(APIRefusal) as deleting:
                await asyncio.to_thread(admin.delete, "tenantctl.io/v1alpha1", "TenantCluster", NS,
                                        cluster["metadata"]["name"])
            assert "validate.tenantclusters.tenantctl.io" in str(deleting.value)
            assert admin.get("tenantctl.io/v1alpha1", "NodePool", NS, "md0") is not None
    finally:
        admin.delete(*VWC, None, registration["metadata"]["name"])
