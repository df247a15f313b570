"""How the operator's client reads a real kube-apiserver's refusals: an immutable field by the Status's
structured causes (`field is immutable`), never by a word anywhere in the message."""

from __future__ import annotations

import pytest

from real_control_plane import ControlPlane
from tenantctl.operator.kube.client import APIError, Connection, ImmutableFieldError, KubeClient

pytestmark = [pytest.mark.timeout(60)]

NS = "client-refusals"


def _deployment(selector: str) -> dict[str, object]:
    labels = {"app": selector}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "immutable-probe", "namespace": NS},
        "spec": {"selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "pause:3.10"}]}}},
    }


async def test_a_changed_selector_is_an_immutable_field_and_a_bad_key_is_not(management: ControlPlane) -> None:
    async with KubeClient(Connection.from_kubeconfig(management.admin_kubeconfig)) as api:
        namespaces = await api.require("v1", "Namespace")
        await api.apply(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        deployments = await api.require("apps/v1", "Deployment")
        await api.apply(deployments, _deployment("a"))
        with pytest.raises(ImmutableFieldError) as immutable:
            await api.apply(deployments, _deployment("b"))
        assert immutable.value.status == 422 and "spec.selector" in immutable.value.message

        # Refused as Invalid with "immutable" in its text (the object's name), but no field is immutable.
        config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "immutable-config", "namespace": NS},
                  "data": {"not a key!": "x"}}
        with pytest.raises(APIError) as invalid:
            await api.apply(await api.require("v1", "ConfigMap"), config)
        assert invalid.value.status == 422 and "immutable" in invalid.value.message
        assert not isinstance(invalid.value, ImmutableFieldError)
