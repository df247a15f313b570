"""The kopf operator: reconcile TenantClusters and NodePools, tear them down in order.

Layers, low to high: `kube` (the only API client) → `observe`/`apply`/`tenant` (phases over dicts)
→ `reconcile`/`teardown` (phase lists building status) → `handlers` (kopf) → `commands` (CLI).
"""

from tenantctl.operator.conditions import ConditionType, Phase, Reason, StepOutcome, TeardownStep
from tenantctl.operator.settings import OperatorSettings

__all__ = ["ConditionType", "OperatorSettings", "Phase", "Reason", "StepOutcome", "TeardownStep"]
