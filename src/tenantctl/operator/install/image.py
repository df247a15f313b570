"""The one place the operator image is named: light enough for `--help` to show it without importing
the install renderer. The tag is the package version (`make image` builds and tags it)."""

from __future__ import annotations

from tenantctl import __version__
from tenantctl.render.images import TENANTCTL_REPOSITORY as IMAGE_REPOSITORY

__all__ = ["DEFAULT_IMAGE", "IMAGE_REPOSITORY"]

DEFAULT_IMAGE = f"{IMAGE_REPOSITORY}:{__version__}"
