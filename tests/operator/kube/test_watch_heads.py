"""Watch events judged by their head: an event that changes nothing held is never decoded whole, and the
store ends exactly as if every event had been (an equivalence checked on generated event streams)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tenantctl.operator.kube import wire
from tenantctl.operator.kube.cache import ByName, _Store
from tenantctl.operator.kube.client import Resource

SECRETS = Resource("v1", "Secret", "secrets", True)
NODES = Resource("v1", "Node", "nodes", False)
OURS = {"managed-by": "us"}


def event(kind: str, name: str, version: str, labels: dict[str, str] | None = None, namespace: str = "ns") -> bytes:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": version, "labels": labels or {},
                            "managedFields": [{"manager": "x", "fieldsV1": {"f:data": {}}}]}
    return json.dumps({"type": kind, "object": {"apiVersion": "v1", "kind": "Secret", "metadata": meta,
                                                "data": {"v": version}}}).encode()


def head(line: bytes) -> wire.EventHead:
    found = wire.event_head(line)
    assert found is not None
    return found


def test_the_head_names_the_object_of_an_event() -> None:
    assert wire.event_head(event("MODIFIED", "a", "7", OURS)) == wire.EventHead("MODIFIED", "a", "ns", "7", OURS)
    assert wire.event_head(b'{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}') == \
        wire.EventHead("BOOKMARK", "", None, "9", {})


def test_a_line_not_shaped_as_an_event_has_no_head() -> None:
    """The caller then decodes it whole and judges, as before there were heads."""
    assert wire.event_head(b'{"type": "ADDED", "object": {"metadata": {"labels": {"a": 1}}}}') is None
    assert wire.event_head(b'{"type": "ADDED", "object": []}') is None
    assert wire.event_head(b"not json") is None


def test_what_is_neither_held_nor_to_be_held_is_settled() -> None:
    store = _Store(SECRETS, owned=OURS)
    assert store.settled(head(event("ADDED", "theirs", "1")))
    assert store.settled(head(event("DELETED", "theirs", "2")))
    assert not store.settled(head(event("ADDED", "ours", "1", OURS))), "to be held"


def test_the_copy_held_already_is_settled_and_any_other_version_is_not() -> None:
    store = _Store(SECRETS, owned=OURS)
    store.put(json.loads(event("ADDED", "ours", "5", OURS))["object"])
    assert store.settled(head(event("MODIFIED", "ours", "5", OURS))), "our write's answer came first"
    assert not store.settled(head(event("MODIFIED", "ours", "6", OURS)))
    assert not store.settled(head(event("MODIFIED", "ours", "6"))), "it lost our label: dropped"
    assert not store.settled(head(event("DELETED", "ours", "5", OURS))), "a delete is never settled"


def test_a_name_asked_for_is_never_settled() -> None:
    """The store remembers what the watch said of a name asked for, even of an object it does not hold."""
    store = _Store(SECRETS, owned=OURS)
    assert not store.answers("ns", "asked")
    assert not store.settled(head(event("DELETED", "asked", "3")))


def test_a_cluster_scoped_object_is_found_without_its_namespace() -> None:
    store = _Store(NODES, owned=OURS)
    store.put({"metadata": {"name": "n", "resourceVersion": "4", "labels": OURS}})
    assert store.settled(head(event("MODIFIED", "n", "4", OURS, namespace="anything")))


NAMES = st.sampled_from(["a", "b", "c"])
STEP = st.one_of(
    st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), NAMES, st.integers(1, 12), st.booleans()),
    st.tuples(st.just("ASK"), NAMES, st.just(0), st.just(False)),
    st.tuples(st.just("WROTE"), NAMES, st.integers(1, 12), st.just(True)),
)


def _store(by_name: bool) -> _Store:
    extra = ByName(lambda key: key[1] == "c") if by_name else None
    return _Store(SECRETS, owned=OURS, extra=extra)


def _feed(store: _Store, steps: list[tuple[str, str, int, bool]], use_heads: bool) -> None:
    for kind, name, version, ours in steps:
        line = event(kind, name, str(version), OURS if ours else None)
        if kind == "ASK":
            store.answers("ns", name)
        elif kind == "WROTE":
            store.put(json.loads(line)["object"])
        elif use_heads and store.settled(head(line)):
            continue
        else:
            obj = wire.decode(line)["object"]
            (store.drop if kind == "DELETED" else store.put)(obj)


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(STEP, max_size=25), by_name=st.booleans())
def test_a_store_fed_by_heads_ends_as_one_fed_every_event_whole(
    steps: list[tuple[str, str, int, bool]], by_name: bool
) -> None:
    whole, by_heads = _store(by_name), _store(by_name)
    _feed(whole, copy.deepcopy(steps), use_heads=False)
    _feed(by_heads, steps, use_heads=True)
    assert by_heads.objects == whole.objects
    assert by_heads.wanted == whole.wanted


def test_a_store_held_by_name_holds_the_object_its_key_names_whatever_its_labels() -> None:
    """Its absence is answered from memory, so an object with our label that the scope gives to another
    replica is held all the same when its name is this replica's."""
    store = _Store(SECRETS, owned=OURS, scope=lambda namespace, labels: labels.get("shard") == "mine",
                   extra=ByName(lambda key: key[1] == "x"))
    theirs = {**OURS, "shard": "other"}
    store.put({"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "1", "labels": theirs}})
    assert store.answers("ns", "x") and store.find("ns", "x") is not None
    store.put({"metadata": {"name": "y", "namespace": "ns", "resourceVersion": "1", "labels": theirs}})
    assert store.find("ns", "y") is None, "not named by the key: the scope decides"
