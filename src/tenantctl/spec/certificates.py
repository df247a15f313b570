"""CA bundles as the observed state carries them: base64 of PEM, each block a real X.509 certificate.

A typo in a CA reaches the worker's machine config and the tenant's kubeconfig verbatim, where it
surfaces as a node that never trusts its API server; it is refused where the user typed it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re

__all__ = ["ca_bundle_problem"]

_BLOCK = re.compile(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", re.S)


@functools.lru_cache(maxsize=2048)
def ca_bundle_problem(value: str) -> str | None:
    """Why `value` is not base64 of one or more PEM certificates, or None when it is.

    Parsed with `cryptography` (5 µs a certificate) rather than an `ssl.SSLContext` (300 µs to build one),
    and the verdict kept per bundle: every render of a tenant checks both of its CAs, and the operator
    renders each tenant on every resync with the same two (a tenth of a render before).
    """
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm

    try:
        text = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        return "is not base64 of a PEM certificate bundle"
    if not _BLOCK.search(text):
        return "decodes to no PEM '-----BEGIN CERTIFICATE-----' block"
    for block in _BLOCK.findall(text):
        try:
            x509.load_pem_x509_certificate(block.encode("ascii"))
        except (ValueError, UnsupportedAlgorithm) as exc:
            return f"holds a CERTIFICATE block that is not a decodable X.509 certificate ({exc})"
    return None
