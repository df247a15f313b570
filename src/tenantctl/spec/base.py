"""The base of every user-facing model: camelCase on the wire, unknown fields refused, immutable."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["SpecModel", "model_in"]


class SpecModel(BaseModel):
    """Strict input model: a typo such as `dnsServer` is an error, never silently dropped."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        str_strip_whitespace=False,
    )


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The model class inside a field annotation (`Foo`, `Foo | None`, `list[Foo]`), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = model_in(arg)
        if found is not None:
            return found
    return None
