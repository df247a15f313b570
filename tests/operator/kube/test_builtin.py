"""The built-in resources the client knows without discovery answer as an apiserver's discovery does."""

from __future__ import annotations

import pytest
from kube_emulator import KubeEmulator

from tenantctl.operator.kube.builtin import BUILTIN
from tenantctl.operator.kube.client import Connection, KubeClient

pytestmark = [pytest.mark.looptime]


async def test_every_builtin_matches_what_discovery_serves(tenant: KubeEmulator) -> None:
    async with KubeClient(Connection.from_server(str(tenant.url).rstrip("/"))) as api:
        for (api_version, kind), (plural, namespaced) in BUILTIN.items():
            served = await api._discover(api_version)
            assert served is not None, api_version
            assert (served[kind].plural, served[kind].namespaced) == (plural, namespaced), kind


def test_the_table_holds_what_the_operator_writes_inside_a_tenant() -> None:
    assert {("v1", "Secret"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding")} <= set(BUILTIN)
