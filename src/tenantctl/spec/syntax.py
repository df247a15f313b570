"""The syntaxes of spec strings, written once for both judges: `validate` (Python) and the CRD (RE2).

Each pattern is anchored at both ends and uses only what RE2 and Python's `re` read alike (no `\\d`,
which Python widens to every Unicode digit), so the API server refuses exactly what `validate` does.
"""

from __future__ import annotations

__all__ = [
    "DNS_LABEL",
    "DNS_SUBDOMAIN",
    "GO_DURATION",
    "KUBE_VERSION",
    "LABEL_VALUE",
    "MINOR_PREFIX",
    "PERCENT_OR_INT",
    "PVE_EXTRA_NIC",
    "PVE_NODE",
    "PVE_TAG",
    "QUALIFIED_NAME",
    "SCHEMATIC_ID",
    "TALOS_VERSION",
]

KUBE_VERSION = r"^v[0-9]+\.[0-9]+(\.[0-9]+)?$"
TALOS_VERSION = r"^v[0-9]+\.[0-9]+\.[0-9]+$"
MINOR_PREFIX = r"^v[0-9]+[.][0-9]+"
"""The `vMAJOR.MINOR` at the start of a version (CEL `find` takes it out; `[.]`: no escape in a CEL string)."""
SCHEMATIC_ID = r"^[0-9a-f]{64}$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
LABEL_VALUE = r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$"
QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
"""`[prefix/]name` (apimachinery's IsQualifiedName; the prefix's 253-character bound is `validate`'s)."""
PVE_TAG = r"^[a-z0-9_][a-z0-9_+.-]*$"
# A Proxmox node name (pve-cluster's `pve-node` format: a host name label, either case).
PVE_NODE = r"^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$"
# The keys of a VM's further NICs: QEMU has net0…net31 and net0 is the default device.
PVE_EXTRA_NIC = r"^net([1-9]|[12][0-9]|3[01])$"
GO_DURATION = r"^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+$"
"""An unsigned Go duration (`20m`, `1h30m`, `1.5h`), as `time.ParseDuration` and CEL `duration()` read it."""
PERCENT_OR_INT = r"^[0-9]+%?$"
