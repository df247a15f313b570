"""Turn pydantic's validation errors into problems that name the user's field path and value."""

from __future__ import annotations

import difflib
from typing import get_origin

from pydantic import BaseModel, ValidationError

from tenantctl.problems import Problem
from tenantctl.spec.base import model_in

__all__ = ["format_path", "problems_from_validation_error", "shown"]

_SHOWN_MAX = 80


def shown(value: object) -> str:
    """`repr` of a user value, cut short: a megabyte string must not flood the terminal."""
    text = repr(value)
    return text if len(text) <= _SHOWN_MAX else f"{text[:_SHOWN_MAX]}… ({len(text)} characters)"


def format_path(loc: tuple[int | str, ...]) -> str:
    """`('spec', 'proxmox', 'dnsServers', 1)` -> `spec.proxmox.dnsServers[1]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model class that validates the mapping at `loc` (list indices and dict keys skipped)."""
    model: type[BaseModel] | None = root
    for part in loc:
        if model is None:
            return None
        if isinstance(part, int):
            continue
        field = next(
            (f for name, f in model.model_fields.items() if part in (name, f.alias)),
            None,
        )
        if field is None:
            return None
        model = model_in(field.annotation)
        if model is None and get_origin(field.annotation) is dict:
            return None
    return model


def _valid_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def problems_from_validation_error(
    exc: ValidationError, root: type[BaseModel], prefix: str
) -> list[Problem]:
    """One problem per pydantic error; unknown fields suggest the closest valid name."""
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        path = f"{prefix}.{format_path(loc)}" if loc else prefix
        kind = err["type"]
        if kind == "extra_forbidden":
            parent = _model_at(root, loc[:-1])
            names = _valid_names(parent) if parent else []
            field = str(loc[-1])
            close = difflib.get_close_matches(field, names, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            valid = f" (valid: {', '.join(sorted(names))})" if names else ""
            problems.append(Problem(path, f"unknown field {field!r}{hint}{valid}"))
        elif kind == "missing":
            problems.append(Problem(path, "required field is missing"))
        elif kind == "string_type" and _is_yaml_number(err.get("input")):
            problems.append(Problem(path, _quote_hint(loc, err["input"])))
        else:
            value = err.get("input")
            got = f" (got {shown(value)})" if not isinstance(value, dict | list) else ""
            problems.append(Problem(path, f"{err['msg']}{got}"))
    return problems


def _is_yaml_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _quote_hint(loc: tuple[int | str, ...], value: object) -> str:
    """`version: 1.30` is the float 1.3 by the time we see it: say so, and show the quoted form."""
    message = f"{value!r} is a YAML number, not a string; quote it"
    if loc and loc[-1] == "version":
        return f'{message} ("v{value}"): unquoted, YAML reads 1.30 as 1.3 and drops the trailing zero'
    return f'{message} ("{value}")'
