"""Container image reference syntax: each check returns the reason a value is refused, or None."""

from __future__ import annotations

import re

__all__ = [
    "digest_problem",
    "endpoint_problem",
    "mirror_problem",
    "registry_host_problem",
    "repository_problem",
    "tag_problem",
]

# The distribution reference grammar (github.com/distribution/reference), fully qualified: a registry
# host (with a dot or a port, or localhost) first, so a mirror knows where each image comes from.
_HOST_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_HOST_PART}(?:\.{_HOST_PART})+(?::[0-9]+)?|{_HOST_PART}:[0-9]+|localhost)"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"^{_HOST}(?:/{_PATH_PART})+$")
_MIRROR = re.compile(rf"^{_HOST}(?:/{_PATH_PART})*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST = re.compile(r"^(?:sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$")
_MAX_NAME = 255
_REGISTRY_HOST = re.compile(rf"^(?:{_HOST}|{_HOST_PART})$")
_ENDPOINT = re.compile(rf"^https?://(?:{_HOST}|{_HOST_PART}|\[[0-9A-Fa-f:.]+\](?::[0-9]+)?)(?:/[A-Za-z0-9._~/-]*)?$")


def repository_problem(value: str) -> str | None:
    if len(value) > _MAX_NAME:
        return f"{value[:40]!r}… is longer than {_MAX_NAME} characters"
    if not _REPOSITORY.fullmatch(value):
        return (
            f"{value!r} is not a fully qualified repository: registry host first, lowercase path, "
            "no tag or digest (e.g. registry.example.org/team/image)"
        )
    return None


def tag_problem(value: str) -> str | None:
    if not _TAG.fullmatch(value):
        return f"{value!r} is not a tag: up to 128 of [A-Za-z0-9_.-], not starting with '.' or '-'"
    return None


def digest_problem(value: str) -> str | None:
    if not _DIGEST.fullmatch(value):
        return f"{value!r} is not a digest: sha256:<64 lowercase hex> (or sha512:<128>)"
    return None


def mirror_problem(value: str) -> str | None:
    if not _MIRROR.fullmatch(value) or len(value) > _MAX_NAME:
        return (
            f"{value!r} is not a registry prefix: host[:port][/path], no scheme, no trailing slash "
            "(e.g. registry.example.org/mirror)"
        )
    return None


def registry_host_problem(value: str) -> str | None:
    """A key of Talos' `machine.registries.mirrors`: the registry as images name it, or `*` for all."""
    if value != "*" and not _REGISTRY_HOST.fullmatch(value):
        return f"{value!r} is not a registry host: host[:port] as image references name it (e.g. ghcr.io), or '*'"
    return None


def endpoint_problem(value: str) -> str | None:
    if len(value) > 2048 or not _ENDPOINT.fullmatch(value):
        return f"{value!r} is not a registry endpoint: http(s)://host[:port][/path] (e.g. https://registry.example.org)"
    return None
