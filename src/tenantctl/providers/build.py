"""From downloaded components to the vendored files: patch, prove the patches, compress, prove again.

The second proof reads the blob back, because the blob is what a cluster runs: a patch that reached
only the readable YAML (cozystack#2946) is exactly the failure this exists to stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tenantctl.providers import blob, patches
from tenantctl.providers.manifests import ManifestError, parse_manifest
from tenantctl.providers.patches import Patch, PatchFailure

__all__ = ["BuildError", "Built", "build"]


class BuildError(ValueError):
    """The upstream file cannot become a vendored package; the message says why."""


@dataclass(frozen=True)
class Built:
    components: bytes
    blob: bytes


def build(components: bytes, declared: Sequence[Patch]) -> Built:
    """Patched YAML and its reproducible gzip, both shown to carry every declared patch."""
    try:
        manifest = parse_manifest(components.decode("utf-8"))
        patches.apply(manifest, declared)
        patched = manifest.text().encode("utf-8")
    except UnicodeDecodeError:
        raise BuildError("components are not UTF-8 text") from None
    except (ManifestError, PatchFailure) as exc:
        raise BuildError(str(exc)) from None
    compressed = blob.compress(patched)
    carried = parse_manifest(blob.decompress(compressed).decode("utf-8"))
    absent = patches.missing(carried, declared)
    if absent:
        raise BuildError(f"patched blob does not carry: {'; '.join(absent)}")
    return Built(patched, compressed)
