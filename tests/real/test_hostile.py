"""The hostile-input corpus judged twice: by tenantctl and by the real API server with tenantctl's webhook.

The corpus is tests/hostile/test_crd_strictness.py's: every string or integer leaf of the examples'
documents (defaults written out) and of their observed state, given values a CRD commonly refuses.
For each case:

- a TenantCluster or NodePool case is applied with `dryRun=All` to the real server, where the CRD
  (schema, CEL) and the operator's webhook (served by a `tenantctl operator` process, registered by
  install's configuration) judge it; tenantctl's own verdict (`parse_tenant_documents` over the same
  documents the server sees) must be the same: refused by both or admitted by both;
- whatever tenantctl accepts, it renders, and every rendered object the case changed is admitted by
  the real server too (the management objects here, those applied inside a tenant on a tenant API server).

A disagreement is a failing test until one side is fixed: the server is the judge.
"""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from real_api import Api, APIRefusal, wait_for
from real_control_plane import ControlPlane, free_port
from real_seed import OPERATOR_NAMESPACE, OPERATOR_SA, b64
from tenant_support import load_example
from tenantctl.operator.install.webhook import webhook_objects
from tenantctl.problems import InvalidInput
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.spec import parse_observed, parse_tenant_documents

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hostile"))

from test_crd_strictness import CASE_IDS, CASES, Path_, _explicit, mutated

pytestmark = [pytest.mark.timeout(120)]

CLUSTERS_AT = "hostile-clusters"
"""Mutated TenantClusters are judged as creates here (no live object: no transition rules)."""
POOLS_AT = "hostile-pools"
"""The examples' clusters live here, unmutated; mutated NodePools are judged as creates beside them."""


@pytest.fixture(scope="module")
def webhook(installed: Any, admin: Api, management: ControlPlane,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A `tenantctl operator` process serving the webhook, registered for the two namespaces of this module."""
    directory = tmp_path_factory.mktemp("hostile-webhook")
    cert, key = management.ca.issue("tenantctl-operator-webhook", server=True, hosts=("127.0.0.1",))
    (directory / "tls.crt").write_bytes(cert)
    (directory / "tls.key").write_bytes(key)
    kubeconfig = directory / "operator.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(management.kubeconfig_for(OPERATOR_NAMESPACE, OPERATOR_SA)))
    port = free_port()
    for namespace in (CLUSTERS_AT, POOLS_AT):
        admin.namespace(namespace)
    (config,) = [o for o in webhook_objects("tenantctl-hostile", OPERATOR_NAMESPACE, {})
                 if o["kind"] == "ValidatingWebhookConfiguration"]
    del config["metadata"]["annotations"]
    for hook in config["webhooks"]:
        path = hook["clientConfig"]["service"]["path"]
        hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": b64(management.ca.pem)}
        hook["namespaceSelector"] = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                                           "values": [CLUSTERS_AT, POOLS_AT]}]}
    log = directory / "operator.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(Path(sys.executable).with_name("tenantctl")), "operator", "--kubeconfig", str(kubeconfig),
             "--webhook-port", str(port), "--webhook-cert-dir", str(directory), "--resync", "3600"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        admin.apply(config)
        for example in ("proxmox.yaml", "kubevirt.yaml"):
            cluster = _moved(_explicit(example)[0], POOLS_AT)

            def stored(obj: dict[str, Any] = cluster) -> bool:
                try:
                    admin.apply(obj, manager="kubectl")
                except APIRefusal:
                    return False  # until the webhook serves
                return True

            wait_for(stored, 60, 0.2, f"the {example} cluster stored through the webhook")
        yield
    finally:
        admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None,
                     config["metadata"]["name"])
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


def _moved(doc: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    moved = copy.deepcopy(dict(doc))
    moved["metadata"]["namespace"] = namespace
    if moved["kind"] == "NodePool":
        moved["metadata"].pop("finalizers", None)
    return moved


def _tenantctl_refuses(docs: list[dict[str, Any]]) -> str | None:
    try:
        parse_tenant_documents(docs)
    except InvalidInput as exc:
        return "; ".join(str(p) for p in exc.errors)
    return None


def _server_refuses(admin: Api, obj: dict[str, Any]) -> str | None:
    try:
        admin.apply(obj, manager="kubectl", dry_run=True)
    except APIRefusal as exc:
        return str(exc)
    return None


def _key(obj: Mapping[str, Any]) -> str:
    return repr(sorted(obj.items()))


@pytest.fixture(scope="module")
def baseline() -> set[str]:
    """The unmutated renders: only what a case changes is sent to the server."""
    keys: set[str] = set()
    for example in ("proxmox.yaml", "kubevirt.yaml"):
        tenant = parse_tenant_documents(_explicit(example))
        observed = parse_observed(load_example(f"observed-{example}"))
        keys |= {_key(o) for o in render_tenant(tenant, observed)}
        for c in tenant.clusters:
            keys |= {_key(o) for o in render_tenant_bootstrap(c, observed[(c.metadata.namespace, c.metadata.name)])}
    return keys


@pytest.mark.parametrize(("source", "index", "path", "value"), CASES, ids=CASE_IDS)
def test_tenantctl_and_the_real_server_agree(
    source: str, index: int, path: Path_, value: Any, webhook: None, admin: Api, shared_tenant_admin: Api,
    baseline: set[str],
) -> None:
    docs, observed = mutated(source, index, path, value)
    if not source.startswith("observed-"):
        changed_doc = docs[index]
        if changed_doc["kind"] == "TenantCluster":
            seen = [_moved(changed_doc, CLUSTERS_AT)]
        else:
            seen = [_moved(docs[0], POOLS_AT), _moved(changed_doc, POOLS_AT)]
        ours, theirs = _tenantctl_refuses(seen), _server_refuses(admin, seen[-1])
        assert (ours is None) == (theirs is None), f"tenantctl: {ours or 'admits'}\nserver: {theirs or 'admits'}"
    try:
        tenant, states = parse_tenant_documents(docs), parse_observed(observed)
    except InvalidInput:
        return
    cluster = tenant.clusters[0]
    changed = [o for o in render_tenant(tenant, states) if _key(o) not in baseline]
    inside = [o for o in render_tenant_bootstrap(cluster, states[(cluster.metadata.namespace, cluster.metadata.name)])
              if _key(o) not in baseline]
    refused = {f"{o['kind']}/{o['metadata']['name']}": r for o in changed if (r := _server_refuses(admin, o))}
    refused |= {f"in the tenant: {o['kind']}/{o['metadata']['name']}": r
                for o in inside if (r := _server_refuses(shared_tenant_admin, o))}
    assert refused == {}
