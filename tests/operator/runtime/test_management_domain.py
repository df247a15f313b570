"""The management cluster's DNS domain is observed from the operator's pod, never assumed, and reaches
every management-side name the operator renders (certSANs, the worker's endpoint aliases and search)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kube_emulator import KubeEmulator
from operator_support import (
    FAST,
    condition,
    eventually,
    kubeconfig_for,
    management,
    running_operator,
    seed_control_plane,
    seed_documents,
)

from tenant_support import load_example
from tenantctl.operator.phases.observe import management_domain_from_resolv_conf
from tenantctl.operator.runtime.run import observed_management_domain

POD_RESOLV_CONF = """search tenantctl-system.svc.{domain} svc.{domain} {domain}
nameserver 10.96.0.10
options ndots:5
"""


@pytest.mark.parametrize("domain", ["cluster.local", "mgmt.example", "k8s.internal.example.org"])
def test_the_kubelet_written_search_list_names_the_domain(domain: str) -> None:
    assert management_domain_from_resolv_conf(POD_RESOLV_CONF.format(domain=domain)) == domain


@pytest.mark.parametrize(
    ("text", "domain"),
    [
        ("nameserver 1.1.1.1\nsearch example.com\n", None),
        ("nameserver 1.1.1.1\n", None),
        ("", None),
        ("search a.svc.old.example svc.old.example old.example\nsearch b.svc.mgmt.example svc.mgmt.example\n",
         "mgmt.example"),
        ("search ns.svc.mgmt.example. svc.mgmt.example. mgmt.example.\n", "mgmt.example"),
        ("search svc.Bad_Domain\n", None),
        ("# search svc.mgmt.example\n", None),
        ("search\n", None),
    ],
)
def test_search_lists_that_name_no_cluster_domain(text: str, domain: str | None) -> None:
    assert management_domain_from_resolv_conf(text) == domain


def test_observed_from_the_pods_resolv_conf(tmp_path: Path) -> None:
    resolv = tmp_path / "resolv.conf"
    resolv.write_text(POD_RESOLV_CONF.format(domain="mgmt.example"))
    assert observed_management_domain(resolv) == "mgmt.example"
    assert observed_management_domain(tmp_path / "absent") is None


def test_a_given_domain_that_is_not_one_is_refused(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kubeconfig_for("http://127.0.0.1:9"))
    result = subprocess.run(
        [sys.executable, "-m", "tenantctl", "operator", "--management-cluster-domain", "Bad Domain",
         "--kubeconfig", str(kubeconfig)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == "--management-cluster-domain: 'Bad Domain' is not a DNS domain (e.g. cluster.local)\n"
    assert result.stdout == ""


@pytest.mark.timeout(15)
@pytest.mark.looptime
async def test_the_operator_renders_with_its_observed_domain(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = load_example("kubevirt.yaml")
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    settings = dataclasses.replace(FAST, management_cluster_domain="mgmt.example")
    async with running_operator(mgmt, settings):
        await eventually(
            lambda: condition(mgmt.get("tenantctl.io/v1alpha1/tenantclusters", "tenant-demo", "demo"), "Ready")
            .get("status") == "True"
        )
    kcp = mgmt.get("controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes", "tenant-demo", "demo")
    assert kcp is not None and "demo.tenant-demo.svc.mgmt.example" in kcp["spec"]["network"]["certSANs"]
    tct = mgmt.get("bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates", "tenant-demo", "demo-md0")
    assert tct is not None
    network = yaml.safe_load(tct["spec"]["template"]["spec"]["data"])["machine"]["network"]
    assert network["searchDomains"] == ["svc.mgmt.example", "mgmt.example"]
    assert "cluster.local" not in yaml.safe_dump(network) + yaml.safe_dump(kcp["spec"]["network"])
