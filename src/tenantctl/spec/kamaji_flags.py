"""Which Kamaji releases apply a change of the tenant apiserver's extra flags.

Kamaji up to 26.6.1-edge compares the apiserver's flags with what it would set only by their number
(internal/builders/controlplane/deployment.go); a change that keeps the number (a value changed, one flag
swapped for another) never reaches the Deployment, and a removed flag stays. Fixed in 126fe65, released
in 26.6.2-edge (../shared/design/backup-oidc.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from tenantctl.spec.versions import kamaji_key

__all__ = ["FLAGS_BY_VALUE_FROM", "flags_by_count_only", "unapplied_change"]

FLAGS_BY_VALUE_FROM = "26.6.2-edge"


def flags_by_count_only(release: str) -> bool:
    key, fixed = kamaji_key(release), kamaji_key(FLAGS_BY_VALUE_FROM)
    return key is not None and fixed is not None and key < fixed


def unapplied_change(release: str, live: Sequence[str], wanted: Sequence[str]) -> str | None:
    """Why a change of the extra flags from `live` to `wanted` would not reach the running apiserver under
    Kamaji `release` (None: it would)."""
    if not flags_by_count_only(release) or sorted(live) == sorted(wanted) or len(live) != len(wanted):
        return None
    gone, new = sorted(set(live) - set(wanted)), sorted(set(wanted) - set(live))
    return (f"Kamaji {release} sees a change of the apiserver's flags only by their number, and this one keeps "
            f"it ({len(wanted)}): {', '.join(new)} would not reach the running apiserver"
            + (f" and {', '.join(gone)} would stay" if gone else "")
            + f"; upgrade Kamaji to {FLAGS_BY_VALUE_FROM} or later first")
