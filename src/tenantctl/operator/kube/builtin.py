"""Resources every Kubernetes apiserver serves, known without asking: a discovery request per tenant saved.

The operator writes Secrets and RBAC inside every tenant; asking each tenant's apiserver where those
live cost two requests per tenant (`/api/v1`, `/apis/rbac.authorization.k8s.io/v1`) for an answer
fixed by the Kubernetes API itself. The answer is taken from lightkube's generated models, not typed
here: only GA built-in kinds, whose plural and scope never change within their version.
"""

from __future__ import annotations

from collections.abc import Mapping

from lightkube.core.resource import NamespacedResource
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap, Namespace, Secret, Service, ServiceAccount
from lightkube.resources.rbac_authorization_v1 import ClusterRole, ClusterRoleBinding, Role, RoleBinding

__all__ = ["BUILTIN"]

_MODELS = (
    Secret, ConfigMap, Namespace, Service, ServiceAccount, Deployment,
    Role, RoleBinding, ClusterRole, ClusterRoleBinding,
)  # fmt: skip


def _served(model: type) -> tuple[tuple[str, str], tuple[str, bool]]:
    """`(apiVersion, kind)` -> `(plural, namespaced)` of one model."""
    info = model._api_info  # type: ignore[attr-defined]
    group, version = info.resource.group, info.resource.version
    api_version = f"{group}/{version}" if group else version
    return (api_version, info.resource.kind), (info.plural, issubclass(model, NamespacedResource))


BUILTIN: Mapping[tuple[str, str], tuple[str, bool]] = dict(map(_served, _MODELS))
