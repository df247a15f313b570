"""Where a platform directory keeps its lock and vendored packages: one place decides the names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["BLOB", "COMPONENTS", "LOCK_FILE", "METADATA", "VENDOR_DIR", "PlatformLayout"]

LOCK_FILE = "providers.lock"
VENDOR_DIR = "vendor"
# Per package: the YAML a reviewer reads, the blob the ConfigMap ships, and the contract table.
COMPONENTS = "components.yaml"
BLOB = "components.yaml.gz"
METADATA = "metadata.yaml"


@dataclass(frozen=True)
class PlatformLayout:
    """`root` is the directory of platform.yaml; `vendor` may be moved with `--components`."""

    root: Path
    vendor: Path

    @classmethod
    def of(cls, root: Path, vendor: Path | None = None) -> PlatformLayout:
        return cls(root, vendor if vendor is not None else root / VENDOR_DIR)

    @property
    def lock(self) -> Path:
        return self.root / LOCK_FILE

    def package(self, name: str) -> Path:
        return self.vendor / name

    def file(self, name: str, which: str) -> Path:
        return self.vendor / name / which
