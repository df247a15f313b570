"""Which management cluster a command talks to: a kubeconfig named by flag or $KUBECONFIG, else the pod's."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from lightkube.core.exceptions import ConfigError

from tenantctl.operator.kube.client import Connection
from tenantctl.problems import InvalidInput, Problem

__all__ = ["management_connection"]

_YAML_NAMES = {str: "string", int: "number", float: "number", bool: "boolean", list: "list"}


def management_connection(kubeconfig: Path | None, context: str | None) -> Connection:
    """A kubeconfig when one is named (flag or $KUBECONFIG), else the pod's service account.

    A kubeconfig that cannot be read or used, or a context it lacks, is a refusal naming the flag.
    """
    path = kubeconfig or (Path(os.environ["KUBECONFIG"]) if os.environ.get("KUBECONFIG") else None)
    flag = "--kubeconfig" if kubeconfig else "$KUBECONFIG" if path else "kubeconfig"
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            return Connection.in_cluster()
        except ConfigError as exc:
            raise InvalidInput([Problem("ServiceAccount", f"cannot be read: {exc}")]) from None
    default = path is None
    path = path or Path.home() / ".kube" / "config"
    try:
        config = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        if default:
            raise InvalidInput([Problem(flag, f"none given and {str(path)!r} does not exist: pass --kubeconfig PATH "
                                              "or set $KUBECONFIG (in a pod: its ServiceAccount is used)")]) from None
        raise InvalidInput([Problem(flag, f"{str(path)!r} does not exist")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise InvalidInput([Problem(flag, f"cannot read {str(path)!r}: {reason}")]) from None
    except yaml.YAMLError as exc:
        raise InvalidInput([Problem(flag, f"{str(path)!r} is not YAML: {_one_line(exc)}")]) from None
    if not isinstance(config, dict):
        held = "nothing" if config is None else f"a YAML {_YAML_NAMES.get(type(config), type(config).__name__)}"
        raise InvalidInput([Problem(flag, f"{str(path)!r} holds {held}, not a kubeconfig (a mapping with clusters, "
                                          "users and contexts)")])
    try:
        return Connection.from_kubeconfig(config, context, path=path)
    except ConfigError as exc:
        at = "--context" if context and "context" in str(exc).lower() else flag
        raise InvalidInput([Problem(at, f"{context or str(path)!r}: {exc}")]) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"it has no {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise InvalidInput([Problem(flag, f"{str(path)!r} is not a usable kubeconfig: {detail}")]) from None


def _one_line(exc: yaml.YAMLError) -> str:
    """PyYAML's message spans lines (with a caret under the spot); a problem is printed on one."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is not None and problem:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return " ".join(str(exc).split())
