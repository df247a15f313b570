"""An answer held without being decoded whole: `wire.stored` splices the server's JSON without
managedFields, and the cache holds exactly what decoding and re-encoding it would have held."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tenantctl.operator.kube import wire
from tenantctl.operator.kube.cache import WatchCache, _Entry, _Store
from tenantctl.operator.kube.client import Resource

SECRETS = Resource("v1", "Secret", "secrets", True)

LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))
VALUES = st.recursive(LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=12)
LABELS = st.dictionaries(st.text(min_size=1, max_size=6), st.text(max_size=6), max_size=3)


@st.composite
def answers(draw: st.DrawFn) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": draw(st.text(min_size=1, max_size=8)), "namespace": "ns",
                            "resourceVersion": str(draw(st.integers(1, 10**9)))}
    if draw(st.booleans()):
        meta["labels"] = draw(LABELS)
    if draw(st.booleans()):
        meta["managedFields"] = [{"manager": "m", "fieldsV1": draw(VALUES)}]
    meta.update(draw(st.dictionaries(st.sampled_from(["uid", "annotations", "generation"]), VALUES, max_size=2)))
    body = draw(st.dictionaries(st.sampled_from(["spec", "status", "data", "kind"]), VALUES, max_size=3))
    return {"apiVersion": "v1", **body, "metadata": meta}


@settings(max_examples=300, deadline=None)
@given(answer=answers(), pretty=st.booleans())
def test_a_spliced_answer_is_the_object_without_managed_fields(answer: dict[str, Any], pretty: bool) -> None:
    text = json.dumps(answer, indent=2 if pretty else None, ensure_ascii=pretty).encode()
    spliced = wire.stored(text)
    assert spliced is not None
    meta = answer["metadata"]
    assert (spliced.name, spliced.namespace, spliced.version, spliced.labels) == (
        meta["name"], "ns", meta["resourceVersion"], meta.get("labels") or {})
    whole = _Entry.of(json.loads(text))
    assert msgspec.json.decode(spliced.blob) == msgspec.json.decode(whole.blob)
    assert b"managedFields" not in spliced.blob or "managedFields" in json.dumps(answer["metadata"].get("annotations"))


def test_what_is_not_an_object_with_metadata_is_not_spliced() -> None:
    for text in (b"[]", b'{"kind": "Status"}', b'{"metadata": []}', b'{"metadata": {"labels": {"a": 1}}}', b"{"):
        assert wire.stored(text) is None, text


def _synced(store: _Store) -> WatchCache:
    cache = WatchCache()
    store.synced.set()
    cache._stores[(SECRETS.api_version, SECRETS.plural)] = store
    return cache


def test_an_answer_is_held_spliced_where_every_object_is_held_in_full() -> None:
    answer = {"apiVersion": "v1", "kind": "Secret", "data": {"v": "<&>"},
              "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "3", "managedFields": [{}]}}
    store = _Store(SECRETS)
    go = json.dumps(answer, separators=(",", ":")).replace("<", "\\u003c").replace("&", "\\u0026")  # as Go writes
    _synced(store).wrote_answer(SECRETS, go.encode())
    entry = store.objects["ns"]["a"]
    assert entry.blob == b'{"apiVersion":"v1","kind":"Secret","data":{"v":"\\u003c\\u0026>"},' \
                         b'"metadata":{"name":"a","namespace":"ns","resourceVersion":"3"}}', "spliced, not re-encoded"
    assert entry.version == "3" and store.find("ns", "a") == {**answer, "metadata": {
        "name": "a", "namespace": "ns", "resourceVersion": "3"}}
    _synced(store).wrote_answer(SECRETS, b'{"metadata":{"namespace":"ns","resourceVersion":"4"}}')
    assert list(store.objects["ns"]) == ["a"], "an answer naming no object is not held"


def test_an_answer_for_a_store_of_outlines_is_decoded_to_be_outlined() -> None:
    """Another shard's tenant is held as its outline: the answer is decoded and cut, not spliced whole."""
    answer = {"apiVersion": "v1", "kind": "Secret", "spec": {"s": 1}, "status": {"phase": "Ready"},
              "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "3"}}
    store = _Store(SECRETS, in_full=lambda obj: False)
    _synced(store).wrote_answer(SECRETS, json.dumps(answer).encode())
    held = store.find("ns", "a")
    assert held is not None and "status" not in held and held["spec"] == {"s": 1}
