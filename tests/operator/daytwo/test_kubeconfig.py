"""`tenantctl kubeconfig` against an emulated management cluster: Kamaji's Secret, rewritten for outside."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_emulator import KubeEmulator
from operator_support import kubeconfig_for, management, seed_control_plane, seed_documents
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example
from tenantctl.cli import app
from tenantctl.operator.daytwo.kubeconfig import user_kubeconfig
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.problems import InvalidInput

pytestmark = [pytest.mark.timeout(15)]

INTERNAL = {"kubevirt.yaml": "https://demo.tenant-demo.svc:6443", "proxmox.yaml": "https://acme.tenant-acme.svc:6443"}
KEY = {"kubevirt.yaml": ("tenant-demo", "demo"), "proxmox.yaml": ("tenant-acme", "acme")}


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


def seed(mgmt: KubeEmulator, example: str, expose: dict[str, Any] | None = None, *, secret: bool = True) -> None:
    docs = clone(load_example(example))
    if expose is not None:
        doc(docs, "TenantCluster")["spec"]["expose"] = expose
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, INTERNAL[example] if secret else None)


async def fetch(mgmt: KubeEmulator, example: str, *, external: bool) -> dict[str, Any]:
    ns, name = KEY[example]
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        return await user_kubeconfig(api, ns, name, external=external)


def server(config: dict[str, Any]) -> str:
    (entry,) = config["clusters"]
    return str(entry["cluster"]["server"])


async def refusal(mgmt: KubeEmulator, example: str, *, external: bool = True) -> str:
    with pytest.raises(InvalidInput) as caught:
        await fetch(mgmt, example, external=external)
    return "\n".join(str(p) for p in caught.value.problems)


async def test_without_external_the_secret_is_printed_as_kamaji_wrote_it(mgmt: KubeEmulator) -> None:
    """People get Kamaji's `admin.svc` (kubeadm:cluster-admins, revocable), not the system:masters one."""
    seed(mgmt, "kubevirt.yaml")
    config = await fetch(mgmt, "kubevirt.yaml", external=False)
    assert config == yaml.safe_load(kubeconfig_for(INTERNAL["kubevirt.yaml"], user="kubernetes-admin"))


async def test_super_admin_is_given_only_when_asked_and_with_a_warning(mgmt: KubeEmulator, tmp_path: Path) -> None:
    seed(mgmt, "kubevirt.yaml")
    mgmt_config = tmp_path / "mgmt.yaml"
    mgmt_config.write_text(kubeconfig_for(url(mgmt)))
    base = ["kubeconfig", "demo", "-n", "tenant-demo", "--kubeconfig", str(mgmt_config)]
    plain = await asyncio.to_thread(invoke, base)
    assert plain.exit_code == 0 and plain.stderr == "", plain.output
    assert yaml.safe_load(plain.stdout)["users"][0]["name"] == "kubernetes-admin"
    asked = await asyncio.to_thread(invoke, [*base, "--super-admin"])
    assert asked.exit_code == 0, asked.output
    assert yaml.safe_load(asked.stdout) == yaml.safe_load(kubeconfig_for(INTERNAL["kubevirt.yaml"]))
    assert "system:masters" in asked.stderr and "break-glass" in asked.stderr
    both = await asyncio.to_thread(invoke, [*base, "--super-admin", "--oidc"])
    assert both.exit_code == 2 and "--super-admin: not with --oidc" in both.stderr


async def test_external_is_refused_for_a_tenant_reachable_only_inside(mgmt: KubeEmulator) -> None:
    seed(mgmt, "kubevirt.yaml")
    message = await refusal(mgmt, "kubevirt.yaml")
    assert message.startswith("--external: TenantCluster/demo is reachable only inside the management cluster")
    assert "spec.expose: {type: LoadBalancer} or {type: Ingress, hostname: api.example.com}" in message


async def test_an_ingress_tenant_is_reached_at_its_host_on_443(mgmt: KubeEmulator) -> None:
    seed(mgmt, "kubevirt.yaml", {"type": "Ingress", "hostname": "demo.example.com"})
    config = await fetch(mgmt, "kubevirt.yaml", external=True)
    assert server(config) == "https://demo.example.com:443"
    inside = yaml.safe_load(kubeconfig_for(INTERNAL["kubevirt.yaml"], user="kubernetes-admin"))
    assert config["users"] == inside["users"] and config["contexts"] == inside["contexts"]


async def test_a_load_balancer_tenant_is_reached_at_the_assigned_address(mgmt: KubeEmulator) -> None:
    seed(mgmt, "proxmox.yaml")
    assert server(await fetch(mgmt, "proxmox.yaml", external=True)) == "https://192.0.2.10:6443"


@pytest.mark.parametrize(
    ("ingress", "expected"),
    [
        ([{"hostname": "lb-1.elb.example.com"}], "https://lb-1.elb.example.com:6443"),
        ([{}, {"ip": "2001:db8::10"}], "https://[2001:db8::10]:6443"),
    ],
    ids=["a host name (cloud load balancers)", "the first entry with an address, IPv6 bracketed"],
)
async def test_the_assigned_load_balancer_host_may_be_a_name_or_a_later_entry(
    mgmt: KubeEmulator, ingress: list[dict[str, str]], expected: str
) -> None:
    seed(mgmt, "proxmox.yaml")
    service = mgmt.get("v1/services", "tenant-acme", "acme")
    assert service is not None
    service["status"] = {"loadBalancer": {"ingress": ingress}}
    mgmt.put("v1/services", service)
    assert server(await fetch(mgmt, "proxmox.yaml", external=True)) == expected


@pytest.mark.parametrize(
    ("expose", "expected"),
    [
        ({"hostname": "acme.example.com", "address": "198.51.100.7"}, "https://acme.example.com:6443"),
        ({"address": "198.51.100.7"}, "https://198.51.100.7:6443"),
    ],
)
async def test_a_load_balancer_name_or_address_wins_over_the_observed_one(
    mgmt: KubeEmulator, expose: dict[str, Any], expected: str
) -> None:
    seed(mgmt, "proxmox.yaml", expose)
    assert server(await fetch(mgmt, "proxmox.yaml", external=True)) == expected


async def test_a_load_balancer_without_an_address_yet_is_refused(mgmt: KubeEmulator) -> None:
    seed(mgmt, "proxmox.yaml")
    service = mgmt.get("v1/services", "tenant-acme", "acme")
    assert service is not None
    service.pop("status")
    mgmt.put("v1/services", service)
    assert await refusal(mgmt, "proxmox.yaml") == (
        "--external: TenantCluster/acme: the apiserver's LoadBalancer Service has no address yet; try again later"
    )


async def test_no_secret_yet_is_refused_with_the_reason(mgmt: KubeEmulator) -> None:
    seed(mgmt, "proxmox.yaml", secret=False)
    assert await refusal(mgmt, "proxmox.yaml", external=False) == (
        "TenantCluster/acme: no admin kubeconfig yet (Secret tenant-acme/acme-admin-kubeconfig, key "
        "admin.svc): Kamaji writes it once the control plane is up"
    )


NOT_A_KUBECONFIG = "is not a kubeconfig: it needs clusters[], each with cluster.server"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("not base64!", "is not a base64-encoded YAML kubeconfig (Only base64 data is allowed)"),
        (_b64("clusters: [unclosed"), "is not a base64-encoded YAML kubeconfig (while parsing a flow sequence)"),
        (_b64("- a list"), NOT_A_KUBECONFIG),
        (_b64("clusters: []"), NOT_A_KUBECONFIG),
        (_b64("clusters: [{name: x, cluster: {}}]"), NOT_A_KUBECONFIG),
        (_b64("clusters: [{name: x}]"), NOT_A_KUBECONFIG),
        (_b64("clusters: [x]"), NOT_A_KUBECONFIG),
    ],
    ids=["not base64", "not YAML", "not a mapping", "no clusters", "no server", "no cluster", "entry not a mapping"],
)
async def test_a_secret_that_is_not_a_kubeconfig_is_refused_naming_its_key(
    mgmt: KubeEmulator, data: str, reason: str
) -> None:
    seed(mgmt, "proxmox.yaml")
    secret = mgmt.get("v1/secrets", "tenant-acme", "acme-admin-kubeconfig")
    assert secret is not None
    secret["data"]["admin.svc"] = data
    mgmt.put("v1/secrets", secret)
    assert await refusal(mgmt, "proxmox.yaml", external=False) == (
        f"Secret/tenant-acme/acme-admin-kubeconfig.data.admin.svc: {reason}"
    )


async def test_an_unknown_cluster_is_refused(mgmt: KubeEmulator) -> None:
    management(mgmt)
    assert "no TenantCluster tenant-demo/demo" in await refusal(mgmt, "kubevirt.yaml", external=False)


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


async def test_the_command_prints_yaml_and_refuses_with_exit_2(mgmt: KubeEmulator, tmp_path: Path) -> None:
    seed(mgmt, "kubevirt.yaml", {"type": "Ingress", "hostname": "demo.example.com"})
    mgmt_config = tmp_path / "mgmt.yaml"
    mgmt_config.write_text(kubeconfig_for(url(mgmt)))
    base = ["kubeconfig", "demo", "-n", "tenant-demo", "--kubeconfig", str(mgmt_config)]
    # The command runs its own event loop; the emulator keeps serving on this one meanwhile.
    result = await asyncio.to_thread(invoke, [*base, "--external"])
    assert result.exit_code == 0, result.output
    assert server(yaml.safe_load(result.stdout)) == "https://demo.example.com:443"

    missing = await asyncio.to_thread(invoke, ["kubeconfig", "nope", "-n", "tenant-demo", "--kubeconfig",
                                               str(mgmt_config)])
    assert missing.exit_code == 2
    assert missing.stdout == "" and "Traceback" not in missing.output
    assert "TenantCluster/nope: no TenantCluster tenant-demo/nope" in missing.stderr


def seed_sso(mgmt: KubeEmulator, jwts: list[dict[str, Any]]) -> None:
    docs = clone(load_example("kubevirt.yaml"))
    tc = doc(docs, "TenantCluster")
    tc["spec"]["version"] = "v1.34"
    tc["spec"].setdefault("controlPlane", {})["apiServer"] = {"authentication": {"jwt": jwts}} if jwts else {}
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, INTERNAL["kubevirt.yaml"])


ISSUER = {"issuer": {"url": "https://idp.example.com/realms/acme", "audiences": ["acme-k8s", "ci"],
                     "audienceMatchPolicy": "MatchAny"},
          "claimMappings": {"username": {"claim": "email", "prefix": "oidc:"},
                            "groups": {"claim": "groups", "prefix": "oidc:"}}}


def oidc(config: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["kubeconfig", "demo", "-n", "tenant-demo", "--kubeconfig", str(config),
                                    "--oidc", *args])


@pytest.fixture()
def mgmt_config(mgmt: KubeEmulator, tmp_path: Path) -> Path:
    path = tmp_path / "mgmt.yaml"
    path.write_text(kubeconfig_for(url(mgmt)))
    return path


async def test_oidc_gives_the_clusters_with_an_exec_user_and_no_admin_credential(
    mgmt: KubeEmulator, mgmt_config: Path
) -> None:
    seed_sso(mgmt, [ISSUER])
    result = await asyncio.to_thread(oidc, mgmt_config)
    assert result.exit_code == 0, result.output
    config = yaml.safe_load(result.stdout)
    admin = yaml.safe_load(kubeconfig_for(INTERNAL["kubevirt.yaml"]))
    assert config["clusters"] == admin["clusters"]
    (user,) = config["users"]
    assert user["user"] == {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": "kubectl", "interactiveMode": "IfAvailable",
        "provideClusterInfo": False,
        "args": ["oidc-login", "get-token", "--oidc-issuer-url=https://idp.example.com/realms/acme",
                 "--oidc-client-id=acme-k8s", "--oidc-extra-scope=email", "--oidc-extra-scope=groups"],
    }}
    assert "client-key-data" not in result.stdout and "token:" not in result.stdout
    chosen = await asyncio.to_thread(oidc, mgmt_config, "--client-id", "cli")
    assert "--oidc-client-id=cli" in chosen.stdout


async def test_oidc_is_refused_without_an_issuer_and_asks_which_of_several(
    mgmt: KubeEmulator, mgmt_config: Path
) -> None:
    seed_sso(mgmt, [])
    none = await asyncio.to_thread(oidc, mgmt_config)
    assert none.exit_code == 2 and "names no JWT issuer" in none.output
    other = {**ISSUER, "issuer": {"url": "https://dex.example.com", "audiences": ["k8s"]}}
    seed_sso(mgmt, [ISSUER, other])
    several = await asyncio.to_thread(oidc, mgmt_config)
    assert several.exit_code == 2 and "--issuer: required" in several.output
    picked = await asyncio.to_thread(oidc, mgmt_config, "--issuer", "https://dex.example.com/")
    assert picked.exit_code == 0 and "--oidc-issuer-url=https://dex.example.com" in picked.stdout
    unknown = await asyncio.to_thread(oidc, mgmt_config, "--issuer", "https://else.example.com")
    assert unknown.exit_code == 2 and "is not among" in unknown.output
    lone = CliRunner().invoke(app, ["kubeconfig", "demo", "-n", "tenant-demo", "--issuer", "https://x"])
    assert lone.exit_code == 2 and "only with --oidc" in lone.output
