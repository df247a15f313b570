"""The one-sweep overlap check of worker address pools, held to the pairwise definition it replaces.

The sweep keeps the furthest-reaching range and the furthest-reaching one of another pool; a wrong
hand-over between the two either misses a shared address or reports a pool against itself.
"""

from __future__ import annotations

import ipaddress
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from tenantctl.problems import Problems
from tenantctl.spec.address_pools import WorkerPool, check_address_overlaps
from tenantctl.spec.addresses import AddressEntry

BASE = int(ipaddress.IPv4Address("10.0.0.0"))
SEGMENT = ("vmbr0", None)


def pool(source: str, *ranges: tuple[int, int], segment: tuple[str, int | None] = SEGMENT) -> WorkerPool:
    entries = tuple(
        AddressEntry(ipaddress.IPv4Address(BASE + first), ipaddress.IPv4Address(BASE + last))
        for first, last in ranges
    )
    return WorkerPool(source, segment, 4, entries)


def overlaps(*pools: WorkerPool) -> Problems:
    problems = Problems()
    check_address_overlaps(pools, problems)
    return problems


def reported_pairs(problems: Problems) -> set[frozenset[str]]:
    return {
        frozenset({p.path.removesuffix(".addresses"), p.message.split(" is also in ")[1].split(" on ")[0]})
        for p in problems.errors
    }


def test_a_pool_overtaking_another_is_not_reported_against_its_own_ranges() -> None:
    """B's [3, 200] takes the lead from A; B's later [10, 20] lies inside B's own [2, 50] and A's [1, 100]:
    only the pair already reported, never B against B."""
    problems = overlaps(pool("A", (1, 100)), pool("B", (2, 50), (3, 200), (10, 20)))
    assert [(p.path, p.message.split(":")[0]) for p in problems.errors] == [
        ("B.addresses", "10.0.0.2-10.0.0.50 is also in A on bridge vmbr0"),
    ]


def test_a_pool_ahead_of_its_own_lead_range_finds_the_runner_up() -> None:
    """B's [0, 200] leads; C's [1, 5] is reported against it and becomes the runner-up; B's [3, 4] must
    find C there, not its own lead."""
    problems = overlaps(pool("B", (0, 200), (3, 4)), pool("C", (1, 5)))
    assert sorted(p.path for p in problems.errors) == ["B.addresses", "C.addresses"]
    assert reported_pairs(problems) == {frozenset({"B", "C"})}


def test_pools_on_other_segments_or_families_may_share_a_range() -> None:
    assert not overlaps(pool("A", (1, 10)), pool("B", (1, 10), segment=("vmbr0", 7))).errors
    assert not overlaps(pool("A", (1, 10)), pool("B", (1, 10), segment=("vmbr1", None))).errors


ranges = st.tuples(st.integers(0, 40), st.integers(0, 12)).map(lambda r: (r[0], r[0] + r[1]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(ranges, min_size=1, max_size=3), min_size=1, max_size=4))
def test_every_pool_that_shares_an_address_is_named_and_nothing_else_is(layout: list[list[tuple[int, int]]]) -> None:
    """The sweep names, for each conflicting range, the furthest-reaching range of another pool: not every
    pair (a range inside three pools gets one refusal, not three; hostile input cannot make it quadratic),
    but every pool in a conflict appears, and every pair it names does share an address."""
    pools = [pool(f"P{i}", *rs) for i, rs in enumerate(layout)]
    sharing = {
        frozenset({a.source, b.source})
        for a, b in combinations(pools, 2)
        if any(int(x.first) <= int(y.last) and int(y.first) <= int(x.last) for x in a.entries for y in b.entries)
    }
    named = reported_pairs(overlaps(*pools))
    assert named <= sharing
    assert set().union(*named) == set().union(*sharing)
