"""The flags of `tenantctl operator` and `tenantctl install`, parsed and checked in one pass.

Every value reaches the command as text (a flag, or the environment variable standing in for it) and
is parsed here rather than by the command-line parser, which stops at the first bad value: one run
names every bad flag and variable with its value, exit code 2, before anything connects or renders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tenantctl.operator.config.settings import MetricsSettings, OperatorSettings, WebhookSettings
from tenantctl.operator.config.sharding import peering_shard
from tenantctl.operator.config.tuning import PEERING_ENV, SHARD_ENV, TUNABLES, tune
from tenantctl.operator.runtime.logs import LogFormat
from tenantctl.problems import InvalidInput, Problems
from tenantctl.spec.compat import check_kamaji_release
from tenantctl.spec.image_refs import digest_problem, repository_problem, tag_problem
from tenantctl.spec.names import is_dns_label, is_dns_subdomain

if TYPE_CHECKING:
    from tenantctl.operator.kube.client import Connection

__all__ = ["FlagReader", "InstallPlan", "OperatorStart", "image_problem", "install_plan", "operator_start", "where"]

_ENV = {"--shard": SHARD_ENV, "--peering": PEERING_ENV, **{t.flag: t.env for t in TUNABLES}}
_SECONDS = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,9})?")
_WHOLE = re.compile(r"[0-9]{1,9}")
PORT_MAX = 65535
CERT_FILES = ("tls.crt", "tls.key")


def where(flag: str) -> str:
    """A flag as a problem names it: with the environment variable that can stand in for it."""
    env = _ENV.get(flag)
    return f"{flag} (${env})" if env else flag


class FlagReader:
    """The values of one command's flags by flag name; each reading parses one or records its refusal."""

    def __init__(self, values: Mapping[str, str | None]) -> None:
        self.values = values
        self.problems = Problems()

    def refuse(self, flag: str, message: str) -> None:
        self.problems.error(where(flag), message)

    def text(self, flag: str) -> str | None:
        """The value as given; one with surrounding whitespace (a stray newline) is refused, not trimmed."""
        value = self.values.get(flag)
        if value is not None and value != value.strip():
            self.refuse(flag, f"{value!r} has leading or trailing whitespace")
            return None
        return value

    def seconds(self, flag: str) -> float | None:
        value = self.text(flag)
        if value is None:
            return None
        if not _SECONDS.fullmatch(value) or float(value) <= 0:
            self.refuse(flag, f"{value!r} is not a positive number of seconds (e.g. 60 or 2.5)")
            return None
        return float(value)

    def whole(self, flag: str, lowest: int, highest: int, what: str) -> int | None:
        value = self.text(flag)
        if value is None:
            return None
        if not _WHOLE.fullmatch(value) or not lowest <= int(value) <= highest:
            self.refuse(flag, f"{value!r} is not {what}")
            return None
        return int(value)

    def name(self, flag: str, valid: Callable[[str], bool], what: str) -> str | None:
        value = self.text(flag)
        if value is not None and not valid(value):
            self.refuse(flag, f"{value!r} is not {what}")
            return None
        return value

    def choice(self, flag: str, choices: Sequence[str]) -> str | None:
        value = self.text(flag)
        if value is not None and value not in choices:
            self.refuse(flag, f"{value!r} is not one of {', '.join(choices)}")
            return None
        return value

    def http_url(self, flag: str) -> tuple[str, int] | None:
        """An `http://host:port/path` URL, as kopf serves its liveness probe on; its value and port."""
        value = self.text(flag)
        if value is None:
            return None
        try:
            url = urlsplit(value)
            port = url.port or 80
        except ValueError:
            url, port = None, 0
        if url is None or url.scheme != "http" or not url.hostname or not url.path:
            self.refuse(flag, f"{value!r} is not an http://host:port/path URL (e.g. http://0.0.0.0:8080/healthz)")
            return None
        return value, port

    def directory_with(self, flag: str, files: Sequence[str]) -> Path | None:
        value = self.text(flag)
        if value is None:
            return None
        path = Path(value)
        missing = [name for name in files if not (path / name).is_file()]
        if not path.is_dir() or missing:
            found = "is not a directory" if not path.is_dir() else f"has no {' or '.join(missing)}"
            self.refuse(flag, f"{value!r} {found}")
            return None
        return path


@dataclass(frozen=True)
class OperatorStart:
    """What `tenantctl operator` runs with, every flag parsed."""

    settings: OperatorSettings
    connection: Connection
    peering: str | None
    liveness: str | None
    log_format: LogFormat
    cert_dir: Path | None


def operator_start(values: Mapping[str, str | None], connect: Callable[[], Connection]) -> OperatorStart:
    """Parse the operator's flags (keyed by flag name) and open the management connection; all refusals at once."""
    read = FlagReader(values)
    resync = read.seconds("--resync")
    base = OperatorSettings() if resync is None else OperatorSettings(resync_interval=resync)
    settings = tune(values, values.get("--shard"), base, read.problems)
    liveness = read.http_url("--liveness")
    webhook_port = read.whole("--webhook-port", 1, PORT_MAX, f"a port number, 1-{PORT_MAX}")
    metrics_port = read.whole("--metrics-port", 0, PORT_MAX, f"a port number, 0-{PORT_MAX} (0: any free port)")
    cert_dir = read.directory_with("--webhook-cert-dir", CERT_FILES)
    if values.get("--webhook-cert-dir") is not None and values.get("--webhook-port") is None:
        read.refuse("--webhook-cert-dir", "serves the webhook's certificate: give --webhook-port too")
    ports = {"--liveness": liveness[1] if liveness else None, "--metrics-port": metrics_port or None,
             "--webhook-port": webhook_port}
    _refuse_shared_ports(read, ports)
    peering = read.name("--peering", is_dns_subdomain, "a kopf peering name (a DNS subdomain, e.g. tenantctl-operator)")
    owner = peering_shard(peering) if peering else None
    if owner is not None and values.get("--shard") is not None and owner != settings.shard:
        read.refuse("--peering", f"{peering!r} is the peering of shard {owner}, not of --shard {settings.shard}: "
                    "replicas of two shards in one peering pause each other")
    domain = read.name("--management-cluster-domain", is_dns_subdomain, "a DNS domain (e.g. cluster.local)")
    platform_name = read.name("--platform-name", is_dns_subdomain, "a Platform name (a DNS subdomain, e.g. default)")
    kamaji = values.get("--kamaji-version")
    if kamaji is not None:
        check_kamaji_release("--kamaji-version ($TENANTCTL_KAMAJI_VERSION)", kamaji, read.problems)
    log_format = read.choice("--log-format", [f.value for f in LogFormat])
    connection: Connection | None = None
    try:
        connection = connect()
    except InvalidInput as exc:
        read.problems.extend(exc.problems)
    read.problems.raise_if_errors()
    assert connection is not None
    settings = replace(
        settings,
        webhook=WebhookSettings(port=webhook_port, cert_dir=str(cert_dir) if cert_dir else None)
        if webhook_port is not None else None,
        metrics=MetricsSettings(port=metrics_port) if metrics_port is not None else None,
        management_cluster_domain=domain or settings.management_cluster_domain,
        kamaji_release=kamaji,
        platform_name=platform_name or settings.platform_name,
    )
    return OperatorStart(
        settings, connection, peering, liveness[0] if liveness else None, LogFormat(log_format or "text"), cert_dir
    )


def _refuse_shared_ports(read: FlagReader, ports: Mapping[str, int | None]) -> None:
    """Two listeners on one port: the second one would fail to bind once the operator is up."""
    seen: dict[int, str] = {}
    for flag, port in ports.items():
        if port is None:
            continue
        if port in seen:
            read.refuse(flag, f"port {port} is also {seen[port]}'s")
        seen.setdefault(port, flag)


def image_problem(value: str) -> str | None:
    """A fully qualified image reference, `registry/path[:tag][@digest]`: the reason it is not one, or None."""
    rest, _, digest = value.partition("@")
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    repository, tag = (rest[:colon], rest[colon + 1:]) if colon > slash else (rest, None)
    return (
        repository_problem(repository)
        or (tag_problem(tag) if tag is not None else None)
        or (digest_problem(digest) if "@" in value else None)
    )


@dataclass(frozen=True)
class InstallPlan:
    """What `tenantctl install` renders, every flag parsed."""

    namespace: str
    image: str
    shards: int
    replicas: int


def install_plan(values: Mapping[str, str | None], default_image: str) -> InstallPlan:
    """Parse install's flags (keyed by flag name); all refusals at once."""
    read = FlagReader(values)
    namespace = read.name("--namespace", is_dns_label, "a namespace name (a DNS label, e.g. tenantctl-system)")
    image = read.text("--image")
    if image is not None and (why := image_problem(image)):
        read.refuse("--image", f"{image!r} is not registry/path[:tag][@digest]: {why}")
    shards = read.whole("--shards", 1, 999, "a number of shards, 1-999")
    replicas = read.whole("--replicas", 1, 999, "a number of pods per shard, 1-999")
    for flag in ("--prune", "--kubeconfig", "--context"):
        if values.get(flag) is not None and values.get("--apply") is None:
            read.refuse(flag, "acts on the management cluster: only with --apply (without it, install prints)")
    read.problems.raise_if_errors()
    return InstallPlan(namespace or "tenantctl-system", image or default_image, shards or 1, replicas or 1)
