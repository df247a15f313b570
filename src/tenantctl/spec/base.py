"""The base of every user-facing model: camelCase on the wire, unknown fields refused, immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["SpecModel"]


class SpecModel(BaseModel):
    """Strict input model: a typo such as `dnsServer` is an error, never silently dropped."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        str_strip_whitespace=False,
    )
