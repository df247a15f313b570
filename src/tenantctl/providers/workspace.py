"""One platform directory as the commands see it: catalogue, checked platform, selection, lock, layout."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tenantctl.problems import InvalidInput, Problem, Problems
from tenantctl.providers.bundles import Selection, select_packages
from tenantctl.providers.catalogue import Catalogue, Package, load_catalogue
from tenantctl.providers.contract import ContractSource
from tenantctl.providers.layout import METADATA, PlatformLayout
from tenantctl.providers.lockfile import Lock, read_lock
from tenantctl.providers.platform import Platform, load_platform, suggest

__all__ = ["Workspace", "open_workspace"]


@dataclass(frozen=True)
class Workspace:
    catalogue: Catalogue
    platform: Platform
    selection: Selection
    layout: PlatformLayout
    lock: Lock
    warnings: tuple[Problem, ...]

    def targets(self, names: Sequence[str]) -> list[Package]:
        """The named packages (all enabled ones when none are named); unknown or disabled ones refused."""
        if not names:
            return [self.catalogue.get(n) for n in self.selection.packages]
        problems = Problems()
        for name in names:
            if name not in self.catalogue.names:
                problems.error(name, f"unknown package{suggest(name, self.catalogue.names)} "
                               f"(valid: {', '.join(self.catalogue.names)})")
            elif name not in self.selection.packages:
                problems.error(name, f"not enabled in {self.platform.at}; add it to spec.bundles.enabledPackages")
        problems.raise_if_errors()
        return [self.catalogue.get(n) for n in self.catalogue.names if n in names]

    def contract_source(self, package: Package, metadata: str | None, metadata_path: str) -> ContractSource:
        version, at = self.platform.version(package)
        claimed = package.contract if version == package.version else None
        return ContractSource(package.name, version, at, metadata, metadata_path, claimed)

    def vendored_metadata(self, package: Package) -> str | None:
        """The vendored metadata.yaml, if the lock pins the version the platform asks for."""
        entry = self.lock.packages.get(package.name)
        if entry is None or entry.version != self.platform.version(package)[0]:
            return None
        try:
            return self.layout.file(package.name, METADATA).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def open_workspace(platform_file: Path, vendor: Path | None = None) -> Workspace:
    """Load and check everything a command needs; raise `InvalidInput` with every problem found."""
    catalogue = load_catalogue()
    platform = load_platform(platform_file, catalogue)
    selection, problems = select_packages(platform, catalogue)
    layout = PlatformLayout.of(platform.directory, vendor)
    try:
        lock = read_lock(layout.lock)
    except InvalidInput as exc:
        raise InvalidInput([*problems, *exc.problems]) from None
    return Workspace(catalogue, platform, selection, layout, lock, tuple(problems.warnings))
