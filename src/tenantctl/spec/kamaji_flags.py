"""Which Kamaji releases leave a dropped apiserver flag running.

Kamaji up to 26.6.1-edge builds the apiserver's arguments by merging the Deployment's current ones, its
own, then the TenantControlPlane's extra flags, the extra value winning
(internal/builders/controlplane/deployment.go, `buildKubeAPIServerCommand`). A changed value or an added
flag reaches the apiserver; a flag the spec no longer sets stays, with its last value, because the merge
starts from what runs. Seen with Kamaji 26.3.6-edge itself (tests/real/test_upstream_kamaji.py). Fixed in
126fe65, released in 26.6.2-edge (../shared/design/backup-oidc.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tenantctl.spec.versions import kamaji_key

__all__ = ["DROPS_FLAGS_FROM", "flag_name", "keeps_dropped_flags", "stranded_flags", "unapplied_change"]

DROPS_FLAGS_FROM = "26.6.2-edge"


def keeps_dropped_flags(release: str) -> bool:
    key, fixed = kamaji_key(release), kamaji_key(DROPS_FLAGS_FROM)
    return key is not None and fixed is not None and key < fixed


def flag_name(flag: str) -> str:
    """`--name=value` -> `--name` (Kamaji keys the merge by it)."""
    return flag.partition("=")[0]


def stranded_flags(release: str, live: Iterable[str], wanted: Iterable[str]) -> list[str]:
    """The flags of `live` whose name `wanted` no longer sets: under Kamaji `release` they keep running."""
    if not keeps_dropped_flags(release):
        return []
    names = {flag_name(f) for f in wanted}
    return sorted({f for f in live if flag_name(f) not in names})


def unapplied_change(release: str, live: Sequence[str], wanted: Sequence[str]) -> str | None:
    """Why a change of the extra flags from `live` to `wanted` would not reach the running apiserver as
    written under Kamaji `release` (None: it would)."""
    stranded = stranded_flags(release, live, wanted)
    if not stranded:
        return None
    return (f"Kamaji {release} keeps every apiserver flag a change drops: {', '.join(stranded)} would stay on "
            f"the running apiserver; upgrade Kamaji to {DROPS_FLAGS_FROM} or later first, or set the flag to "
            f"its default value instead of dropping it")
