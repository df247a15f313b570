"""Named requests and limits for the hosted control plane's containers: one table, one reader.

Names and limits are Cozystack's resource presets (cozystack/cozystack 3c780acd,
`packages/library/cozy-lib/templates/_resourcepresets.tpl`): `<series>.<size>`, the size fixing the
CPU limit and the series the memory per CPU. Requests follow the same library's sanitising
(`_resources.tpl`, default allocation ratios): CPU request = limit / 10, memory request = limit.
The defaults per component are the chart's (`packages/apps/kubernetes/values.yaml` `controlPlane.*`).
Cozystack's ephemeral-storage entry is left out: an ephemeral-storage limit evicts the apiserver
when its logs outgrow it, and nothing on the management cluster asks for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

__all__ = [
    "CPU_ALLOCATION_RATIO",
    "DEFAULT_PRESETS",
    "PRESETS",
    "Preset",
    "format_cpu",
    "format_memory",
    "preset_grammar",
    "presets_markdown",
]

# CPU limit of each size, in cores.
_SIZES: Mapping[str, Decimal] = {
    "nano": Decimal("0.25"),
    "micro": Decimal("0.5"),
    "small": Decimal(1),
    "medium": Decimal(2),
    "large": Decimal(4),
    "xlarge": Decimal(8),
    "2xlarge": Decimal(16),
    "4xlarge": Decimal(32),
}
# Memory limit per core of each series, in MiB (t1 1:0.5, c1 1:1, s1 1:2, u1 1:4, m1 1:8 GiB).
_SERIES_MIB_PER_CORE: Mapping[str, int] = {"t1": 512, "c1": 1024, "s1": 2048, "u1": 4096, "m1": 8192}
# A control plane mostly idles: the CPU request is a tenth of the limit it may burst to.
CPU_ALLOCATION_RATIO = 10


def format_cpu(cores: Decimal) -> str:
    millis = int(cores * 1000)
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


@dataclass(frozen=True)
class Preset:
    cpu: Decimal
    memory_mib: int

    def requirements(self) -> dict[str, dict[str, str]]:
        """`{requests, limits}` of a container: Burstable, never BestEffort."""
        memory = format_memory(self.memory_mib)
        return {
            "requests": {"cpu": format_cpu(self.cpu / CPU_ALLOCATION_RATIO), "memory": memory},
            "limits": {"cpu": format_cpu(self.cpu), "memory": memory},
        }


PRESETS: Mapping[str, Preset] = {
    f"{series}.{size}": Preset(cores, int(cores * mib_per_core))
    for series, mib_per_core in _SERIES_MIB_PER_CORE.items()
    for size, cores in _SIZES.items()
}

# Keyed by the field names under `spec.controlPlane.resources`.
DEFAULT_PRESETS: Mapping[str, str] = {
    "apiServer": "c1.medium",
    "controllerManager": "t1.micro",
    "scheduler": "t1.micro",
    "konnectivity": "t1.micro",
}


def preset_grammar() -> str:
    """How preset names are made, for a refusal to show: `<t1|c1|…>.<nano|micro|…>`."""
    return f"<{'|'.join(_SERIES_MIB_PER_CORE)}>.<{'|'.join(_SIZES)}>"


def presets_markdown() -> str:
    """The README's preset table: limits per series and size, requests derived as above."""
    sizes = list(_SIZES)
    lines = [
        "| series | " + " | ".join(sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for series in _SERIES_MIB_PER_CORE:
        cells = []
        for size in sizes:
            preset = PRESETS[f"{series}.{size}"]
            cells.append(f"{format_cpu(preset.cpu)} / {format_memory(preset.memory_mib)}")
        lines.append(f"| `{series}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
