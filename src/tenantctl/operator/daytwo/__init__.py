"""Read-only day-two tools: list tenants and pools, plan a change, describe a tenant, fetch its kubeconfig.

May import the door and the phases' compare and observe code; never kopf, never writes.
"""
