"""Judge rendered Kubernetes objects against the real schemas: upstream CRDs and Kubernetes' own.

Custom kinds are checked against the CRDs in a `SchemaCatalog` (strict OpenAPI, defaults, every CEL
``x-kubernetes-validations`` rule); built-in kinds against Kubernetes' strict OpenAPI at a pinned
version. `validate_objects` returns `Problem`s; nothing here raises for an invalid object.
"""

from tenantctl.validate.core import DEFAULT_KUBERNETES_VERSION
from tenantctl.validate.coverage import Coverage, schema_coverage
from tenantctl.validate.crds import SchemaCatalog
from tenantctl.validate.objects import validate_objects

__all__ = ["DEFAULT_KUBERNETES_VERSION", "Coverage", "SchemaCatalog", "schema_coverage", "validate_objects"]
