"""What can be wrong with a credentials Secret, as values the operator reports as condition reasons.

Kept free of heavy imports: the operator's condition enums (loaded at CLI start) take their values here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["CredentialsFinding", "Finding"]


class CredentialsFinding(StrEnum):
    """Each value is the condition reason the operator reports (CamelCase, naming the key)."""

    MISSING_URL = "MissingURLKey"
    MISSING_TOKEN = "MissingTokenKey"
    MISSING_SECRET = "MissingSecretKey"
    MISSING_INSECURE = "MissingInsecureKey"
    INSECURE_CONTRADICTS_SPEC = "InsecureKeyContradictsSpec"
    UNREADABLE_ROOT_CA = "UnreadableRootCAKey"


@dataclass(frozen=True)
class Finding:
    """One problem with a Secret; `message` names keys, never values."""

    key: str
    finding: CredentialsFinding
    message: str
