"""The operator's own deployment: CRDs, RBAC, StatefulSets, webhook objects, and applying them with --apply.

May import `operator.kube` and `operator.config` (and the renderer for RBAC scoping); never kopf.
"""
