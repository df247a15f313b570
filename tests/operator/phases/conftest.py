"""The phase suites share fixtures module to module (teardown's, apply's): importable by name from here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
