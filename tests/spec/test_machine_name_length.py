"""Machine names are `<cluster>-<pool>-xxxxx-xxxxx` and carried as a label value: 63 characters at most."""

from __future__ import annotations

from typing import Any

import pytest

from tenant_support import clone, doc, load_example
from tenantctl.problems import InvalidInput
from tenantctl.spec import parse_tenant_documents


def named(cluster: str, pool: str) -> list[dict[str, Any]]:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["metadata"]["name"] = cluster
    md = doc(docs, "NodePool", "md0")
    md["metadata"]["name"], md["spec"]["cluster"] = pool, cluster
    return [d for d in docs if d["kind"] == "TenantCluster" or d is md]


def test_a_machine_name_of_exactly_63_characters_is_accepted() -> None:
    parse_tenant_documents(named("c" * 25, "p" * 25))  # 25 + 1 + 25 + 12 = 63


def test_one_character_more_is_refused_with_the_length() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(named("c" * 25, "p" * 26))
    assert [(p.path, p.message) for p in err.value.errors] == [(
        f"NodePool/{'p' * 26}.metadata.name",
        f"cluster {'c' * 25!r} + pool {'p' * 26!r} give Machine names of 64 characters "
        "(<cluster>-<pool>-xxxxx-xxxxx), over the 63-character label limit",
    )]
