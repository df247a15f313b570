"""`tests/spec` is not a package; its refusal cases are imported by name from this directory."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
