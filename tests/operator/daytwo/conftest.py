"""The day-two suites share helpers module to module (the doctor's complete cluster): importable by name."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
