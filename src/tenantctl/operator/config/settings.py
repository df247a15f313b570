"""Every interval, bound and backoff of the operator, in one frozen object tests can shrink."""

from __future__ import annotations

from dataclasses import dataclass, field

from tenantctl.operator.config.sharding import ALL, Shard

__all__ = ["MetricsSettings", "OperatorSettings", "RetryPolicy", "WebhookSettings"]


@dataclass(frozen=True)
class RetryPolicy:
    """How long one request may take and how often a transient failure is tried again."""

    timeout: float = 10.0
    backoffs: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0)
    longest_retry_after: float = 10.0
    """The most a server's `Retry-After` (API Priority and Fairness answers 429 with one) may hold a retry:
    honoured up to here, so a wrong or hostile header cannot stall a pass."""

    def pause(self, backoff: float, retry_after: float | None) -> float:
        """The pause before a retry: the backoff, or longer when the server asked for it (bounded)."""
        if retry_after is None:
            return backoff
        return max(backoff, min(retry_after, self.longest_retry_after))


@dataclass(frozen=True)
class WebhookSettings:
    """Where the validating webhook listens; without a certificate directory it speaks plain HTTP (tests)."""

    port: int = 9443
    addr: str = "0.0.0.0"
    cert_dir: str | None = None
    """Holds `tls.crt` and `tls.key` (the cert-manager Secret `tenantctl install` mounts)."""


@dataclass(frozen=True)
class MetricsSettings:
    """Where `/metrics` is served (port 0: any free port, for tests)."""

    port: int = 9090
    addr: str = "0.0.0.0"


@dataclass(frozen=True)
class OperatorSettings:
    """Defaults fit a production management cluster; tests pass fake-time-friendly ones."""

    field_manager: str = "tenantctl"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    resync_interval: float = 60.0
    """The idle resync: re-read, compare, write nothing when nothing drifted."""
    requeue_delay: float = 15.0
    """How soon a failed or waiting pass is tried again; doubled per further wait, up to the resync."""
    read_from_watches: bool = True
    """Answer the passes' management-API reads from watches (`kube_cache`): an idle resync reads nothing."""
    concurrent_passes: int = 32
    """Reconcile passes running at once; the rest wait their turn instead of timing out in the API."""
    poll_interval: float = 2.0
    tenant_probe_timeout: float = 5.0
    """One bounded probe of the tenant apiserver (GET /version)."""
    tenant_recheck_interval: float = 600.0
    """How long a verified tenant bootstrap is trusted: idle passes in between only probe the tenant."""
    tenant_unreachable_grace: float = 300.0
    """How long teardown keeps probing a silent tenant before it records the disks as leftovers."""
    volume_release_timeout: float = 600.0
    """How long teardown waits for the tenant's PVs to go (the CSI driver freeing the disks)."""
    helm_release_timeout: float = 120.0
    control_plane_timeout: float = 300.0
    cluster_deletion_timeout: float = 900.0
    """How long teardown waits for Cluster API to delete the tenant's Machines (their VMs) and its Cluster."""
    pool_rollout_timeout: float = 1800.0
    """How long one pool's upgrade rollout may take before the upgrade stops there with `Ready=False`."""
    platform_name: str = "default"
    """The cluster-scoped Platform every tenant is rendered with (--platform-name)."""
    kamaji_release: str | None = None
    """The management cluster's Kamaji release (--kamaji-version); None: observed from its controller's
    image tag, else the tested default. It decides which Kubernetes minors a tenant may run."""
    management_cluster_domain: str = "cluster.local"
    """The management cluster's DNS domain, observed at start (`management_domain_from_resolv_conf`)
    or given with --management-cluster-domain; Kubernetes' default only when neither is possible."""
    webhook: WebhookSettings | None = None
    """Serve the validating webhook (`tenantctl install` configures the API server to call it)."""
    shard: Shard = ALL
    """The tenants this replica reconciles (`--shard I/N`); the others belong to sibling shards."""
    metrics: MetricsSettings | None = None
    """Serve Prometheus metrics on `/metrics`; the series are counted either way."""

    def requeue_delay_after(self, waits: int) -> float:
        """The pause before the next pass: the resync when idle, a doubling requeue while waiting.

        A tenant whose address takes minutes to appear must not cost the API a full pass of reads
        every few seconds, a thousand tenants at a time.
        """
        if waits <= 0:
            return self.resync_interval
        return float(min(self.requeue_delay * 2 ** (waits - 1), self.resync_interval))
