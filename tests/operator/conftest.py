"""Two emulated API servers per test — the management cluster and one tenant — over loopback HTTP."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import kmock
import pytest

# `tests/operator` cannot be a package (it would shadow the stdlib `operator` under importlib mode),
# so its helper modules are imported from this directory by name.
sys.path.insert(0, str(Path(__file__).parent))

from kube_emulator import CORE, KubeEmulator, declare


@pytest.fixture()
async def mgmt() -> AsyncIterator[KubeEmulator]:
    async with KubeEmulator() as emulator, kmock.Server(emulator):
        declare(emulator, CORE)
        yield emulator


@pytest.fixture()
async def tenant() -> AsyncIterator[KubeEmulator]:
    async with KubeEmulator() as emulator, kmock.Server(emulator):
        declare(emulator, CORE)
        yield emulator
