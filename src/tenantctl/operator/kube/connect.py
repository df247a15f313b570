"""Which management cluster a command talks to: a kubeconfig named by flag or $KUBECONFIG, else the pod's."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from lightkube.core.exceptions import ConfigError

from tenantctl.operator.kube.client import Connection
from tenantctl.problems import InvalidInput, Problem

__all__ = ["management_connection"]


def management_connection(kubeconfig: Path | None, context: str | None) -> Connection:
    """A kubeconfig when one is named (flag or $KUBECONFIG), else the pod's service account.

    A kubeconfig that cannot be read or used, or a context it lacks, is a refusal naming the flag.
    """
    path = kubeconfig or (Path(os.environ["KUBECONFIG"]) if os.environ.get("KUBECONFIG") else None)
    flag = "--kubeconfig" if kubeconfig else "$KUBECONFIG" if path else "--kubeconfig"
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            return Connection.in_cluster()
        except ConfigError as exc:
            raise InvalidInput([Problem("ServiceAccount", f"cannot be read: {exc}")]) from None
    path = path or Path.home() / ".kube" / "config"
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise InvalidInput([Problem(flag, f"cannot read {str(path)!r}: {reason}")]) from None
    except yaml.YAMLError as exc:
        raise InvalidInput([Problem(flag, f"{str(path)!r} is not YAML: {exc}")]) from None
    try:
        return Connection.from_kubeconfig(config, context, path=path)
    except ConfigError as exc:
        at = "--context" if context and "context" in str(exc).lower() else flag
        raise InvalidInput([Problem(at, f"{context or str(path)!r}: {exc}")]) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"it has no {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise InvalidInput([Problem(flag, f"{str(path)!r} is not a usable kubeconfig: {detail}")]) from None
