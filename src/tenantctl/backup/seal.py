"""A backup's encryption: AES-256-GCM under a key the platform keeps in a Secret, before anything leaves.

The header names the key by a fingerprint (its SHA-256, truncated), so `verify` with the wrong key says
so instead of "corrupt", and the header is authenticated with the ciphertext.
"""

from __future__ import annotations

import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["KEY_BYTES", "SealError", "fingerprint", "seal", "unseal"]

MAGIC = b"TCTLBKP1"
KEY_BYTES = 32
_NONCE = 12
_PRINT = 8


class SealError(Exception):
    pass


def fingerprint(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[: 2 * _PRINT]


def _check(key: bytes) -> None:
    if len(key) != KEY_BYTES:
        raise SealError(f"the encryption key is {len(key)} bytes; it must be {KEY_BYTES} (AES-256)")


def seal(key: bytes, plain: bytes) -> bytes:
    _check(key)
    header = MAGIC + bytes.fromhex(fingerprint(key))
    nonce = os.urandom(_NONCE)
    return header + nonce + AESGCM(key).encrypt(nonce, plain, header)


def unseal(key: bytes, blob: bytes) -> bytes:
    _check(key)
    if not blob.startswith(MAGIC):
        raise SealError("not a tenantctl backup (no TCTLBKP1 header)")
    header, rest = blob[: len(MAGIC) + _PRINT], blob[len(MAGIC) + _PRINT:]
    sealed_with = header[len(MAGIC):].hex()
    if sealed_with != fingerprint(key):
        raise SealError(f"sealed with key {sealed_with}, not with the given key {fingerprint(key)}")
    try:
        return AESGCM(key).decrypt(rest[:_NONCE], rest[_NONCE:], header)
    except InvalidTag:
        raise SealError("the backup is corrupt: its authentication tag does not match") from None
