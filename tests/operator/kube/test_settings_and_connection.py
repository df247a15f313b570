"""Small pure pieces: kubeconfig parsing for the tenant's admin access, the requeue schedule."""

from __future__ import annotations

import base64

import pytest

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import Connection

pytestmark = [pytest.mark.timeout(5)]


async def test_a_kamaji_style_kubeconfig_gives_server_ca_and_client_certificate() -> None:
    b64 = lambda text: base64.b64encode(text.encode()).decode()  # noqa: E731
    config = {
        "clusters": [{"name": "c", "cluster": {"server": "https://acme.tenant-acme.svc:6443/",
                                               "certificate-authority-data": b64("CA")}}],
        "users": [{"name": "u", "user": {"client-certificate-data": b64("CERT"), "client-key-data": b64("KEY")}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    conn = Connection.from_kubeconfig(config)
    assert conn.server == "https://acme.tenant-acme.svc:6443"
    login = await conn.login()
    assert (login["ca_data"], login["certificate_data"], login["private_key_data"]) == (b"CA", b"CERT", b"KEY")
    assert login["token"] is None and not login["insecure"]


def test_the_requeue_delay_doubles_while_waiting_and_never_exceeds_the_resync() -> None:
    settings = OperatorSettings(requeue_delay=15, resync_interval=60)
    assert [settings.requeue_delay_after(n) for n in range(5)] == [60, 15, 30, 60, 60]
