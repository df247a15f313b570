"""kopf's own HTTP session: the credentials kopf would use, over a pool of at most `KOPF_CONNECTIONS`.

For a `ConnectionInfo`, kopf builds `TCPConnector(limit=0)`: no bound. Each finalizer and status patch
it has in flight then opens a connection of its own, and a burst of new tenants became a connection
storm: 880 TLS connections to the API server for 500 tenants created at once, each a handshake on both
sides. Handing kopf a session (`kopf.AiohttpSession`) keeps its TLS material and headers and bounds the
pool; kopf still owns it, closing it and logging in again after a 401.
"""

from __future__ import annotations

import aiohttp
import kopf

__all__ = ["KOPF_CONNECTIONS", "bounded_session"]

KOPF_CONNECTIONS = 32
"""kopf holds a connection per watch stream (a handful: TenantClusters, NodePools, Platforms, peering)
and one per request in flight; client-go keeps 25 idle connections per host (`MaxIdleConnsPerHost`),
and our own client 100 (`Connection.session`)."""


def bounded_session(info: kopf.ConnectionInfo, limit: int = KOPF_CONNECTIONS) -> kopf.AiohttpSession:
    """The session kopf would build for `info`, with its connection pool bounded by `limit`."""
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit, ssl=info.as_ssl_context()),
        headers=info.as_http_headers(),
        proxy=info.proxy_url,
        trust_env=info.trust_env,
    )
    return kopf.AiohttpSession(
        server=info.server,
        default_namespace=info.default_namespace,
        priority=info.priority,
        expiration=info.expiration,
        aiohttp_session=session,
    )
