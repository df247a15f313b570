"""The only door to a Kubernetes API: the client, its wire format, the watch cache, tenant connections.

May import `operator.config`; the cache depends on the client (`ReadCache` is the interface the client consults).
"""
