"""The Cluster API contract check, from each package's `metadata.yaml` release-series table.

capi-operator runs the same check on the cluster and leaves a `CAPIVersionIncompatibility` condition
for someone to find; tenantctl refuses before anything is applied, naming both contracts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from tenantctl.problems import Problem, Severity

__all__ = ["ContractSource", "ReleaseSeries", "check_contracts", "parse_release_series"]

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.\d+")


@dataclass(frozen=True)
class ReleaseSeries:
    major: int
    minor: int
    contract: str


@dataclass(frozen=True)
class ContractSource:
    """One package at one version, with its metadata.yaml text when vendored or downloaded.

    `claimed` is the catalogue's contract, usable only when `version` is the catalogue's version;
    `at` is the path that chose the version, `metadata_path` where the table came from.
    """

    package: str
    version: str
    at: str
    metadata: str | None = None
    metadata_path: str = "metadata.yaml"
    claimed: str | None = None


class _MetadataError(ValueError):
    pass


def parse_release_series(text: str) -> tuple[ReleaseSeries, ...]:
    """The `releaseSeries` of a clusterctl Metadata document; anything else raises ValueError."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _MetadataError(f"malformed YAML: {exc}") from None
    series = doc.get("releaseSeries") if isinstance(doc, dict) else None
    if not isinstance(series, list) or not series:
        raise _MetadataError("no releaseSeries table")
    out: list[ReleaseSeries] = []
    for i, entry in enumerate(series):
        try:
            out.append(ReleaseSeries(int(entry["major"]), int(entry["minor"]), str(entry["contract"])))
        except (KeyError, TypeError, ValueError):
            raise _MetadataError(f"releaseSeries[{i}] needs major, minor and contract") from None
    return tuple(out)


def _contract_of(source: ContractSource) -> tuple[str | None, str | None, Problem | None]:
    """(contract, where it came from, problem) for one source; (None, None, None) if unknown."""
    match = _VERSION.match(source.version)
    if match is None:
        return None, None, None
    major, minor = int(match.group(1)), int(match.group(2))
    if source.metadata is None:
        return source.claimed, "the tenantctl catalogue" if source.claimed else None, None
    try:
        table = parse_release_series(source.metadata)
    except ValueError as exc:
        return None, None, Problem(source.metadata_path, f"{source.package}: {exc}")
    found = next((s for s in table if (s.major, s.minor) == (major, minor)), None)
    if found is None:
        known = ", ".join(f"{s.major}.{s.minor}" for s in table)
        return None, None, Problem(
            source.at,
            f"{source.package} {source.version} matches no release series in {source.metadata_path} "
            f"(series: {known}); capi-operator refuses such a provider",
        )
    return found.contract, f"release series {major}.{minor} in {source.metadata_path}", None


def check_contracts(core: ContractSource, providers: Sequence[ContractSource]) -> list[Problem]:
    """Every provider must declare the contract the core serves; an unknown contract is a warning."""
    problems: list[Problem] = []
    served, served_from, problem = _contract_of(core)
    if problem:
        problems.append(problem)
    unknown = [] if served or problem else [core]
    for source in providers:
        contract, origin, problem = _contract_of(source)
        if problem:
            problems.append(problem)
        elif contract is None:
            unknown.append(source)
        elif served is not None and contract != served:
            problems.append(Problem(
                source.at,
                f"{source.package} {source.version} declares contract {contract} ({origin}), but core "
                f"{core.version} serves {served} ({served_from}); capi-operator would refuse it "
                f"(CAPIVersionIncompatibility). Pick a release of {source.package} whose series declares {served}",
            ))
    problems.extend(
        Problem(
            s.at,
            f"contract of {s.package} {s.version} not checked: no metadata.yaml for that version "
            "(run `tenantctl vendor lock` and `tenantctl vendor fetch`)",
            Severity.WARNING,
        )
        for s in unknown
    )
    return problems
