"""`tests/spec` is not a package; its refusal cases are imported by name from this directory.

`own_catalog`: the CRDs generated from the models, as a catalog the validator judges objects against.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from tenantctl.spec.crds import render_crds
from tenantctl.validate import SchemaCatalog

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def own_catalog(tmp_path_factory: pytest.TempPathFactory) -> SchemaCatalog:
    path: Path = tmp_path_factory.mktemp("crds")
    for crd in render_crds():
        (path / f"{crd['metadata']['name']}.yaml").write_text(yaml.safe_dump(crd))
    return SchemaCatalog.from_dirs([path])
