"""Image reference syntax: the limits a registry enforces, so a refusal comes before a failed pull."""

from __future__ import annotations

import pytest

from tenantctl.spec.image_refs import (
    digest_problem,
    endpoint_problem,
    mirror_problem,
    registry_host_problem,
    repository_problem,
)

LONG_PATH = "/".join(["abcdefghij"] * 30)


def test_a_repository_name_is_at_most_255_characters() -> None:
    assert repository_problem(f"registry.example.org/{LONG_PATH}") is not None
    assert repository_problem(f"registry.example.org/{LONG_PATH[:200]}") is None


def test_a_mirror_prefix_is_at_most_255_characters() -> None:
    assert mirror_problem(f"registry.example.org/{LONG_PATH}") is not None


def test_an_endpoint_is_at_most_2048_characters() -> None:
    assert endpoint_problem("https://registry.example.org/" + "a" * 2048) is not None
    assert endpoint_problem("https://registry.example.org/" + "a" * 100) is None


@pytest.mark.parametrize("digest", ["sha256:" + "0" * 64, "sha512:" + "0" * 128])
def test_sha256_and_sha512_digests_are_accepted(digest: str) -> None:
    assert digest_problem(digest) is None


@pytest.mark.parametrize("digest", ["sha256:" + "0" * 63, "sha256:" + "A" * 64, "md5:" + "0" * 32])
def test_other_digests_are_refused(digest: str) -> None:
    assert digest_problem(digest) is not None


def test_the_wildcard_registry_host_is_accepted() -> None:
    assert registry_host_problem("*") is None
    assert registry_host_problem("*.example.org") is not None
