"""Small pure pieces: kubeconfig parsing for the tenant's admin access, the requeue schedule."""

from __future__ import annotations

import base64

import pytest

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.kube.tenants import UnusableKubeconfig, kubeconfig_connection

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


_CLUSTERS = "clusters: [{name: t, cluster: {server: 'https://t:6443'}}]\n"


@pytest.mark.parametrize(
    ("kubeconfig", "reason"),
    [
        (_CLUSTERS, "(KeyError: 'contexts')"),
        (_CLUSTERS + "contexts: [{name: c, context: {cluster: other}}]\ncurrent-context: c\n", "(KeyError: 'other')"),
        (_CLUSTERS + "contexts: [{name: c, context: {cluster: t, user: u}}]\ncurrent-context: c\n",
         "(KeyError: 'u')"),
        (_CLUSTERS + "contexts: 3\n", "(TypeError: "),
    ],
)
def test_a_kubeconfig_lightkube_trips_on_is_refused_with_what_it_tripped_on(kubeconfig: str, reason: str) -> None:
    with pytest.raises(UnusableKubeconfig) as refused:
        kubeconfig_connection(base64.b64encode(kubeconfig.encode()).decode())
    assert str(refused.value).startswith(f"is not a kubeconfig a connection can be made from {reason}")


def test_a_kubeconfig_with_a_context_is_a_connection_to_its_server() -> None:
    config = _CLUSTERS + "contexts: [{name: c, context: {cluster: t}}]\ncurrent-context: c\n"
    assert kubeconfig_connection(base64.b64encode(config.encode()).decode()).server == "https://t:6443"
