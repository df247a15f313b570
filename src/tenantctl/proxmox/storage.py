"""What a Proxmox storage type can do for a worker disk, as data from pve-storage's plugin feature tables.

A linked clone (`full: false`) needs the `clone` feature on the template's base volume; a plain LVM
volume group, iSCSI LUNs and backup/ISO-only storages do not have it, and PVE refuses the clone with
"Linked clone feature is not supported".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LINKED_CLONE", "Disk", "template_disks"]

LINKED_CLONE: Mapping[str, bool] = {
    "dir": True,
    "nfs": True,
    "cifs": True,
    "glusterfs": True,
    "btrfs": True,
    "lvmthin": True,
    "zfspool": True,
    "zfs": True,
    "rbd": True,
    "lvm": False,
    "iscsi": False,
    "iscsidirect": False,
    "cephfs": False,
    "pbs": False,
}

_DISK_KEY = re.compile(r"^(scsi|virtio|sata|ide|efidisk|tpmstate)\d+$")


@dataclass(frozen=True)
class Disk:
    key: str
    storage: str
    volume: str

    @property
    def is_base(self) -> bool:
        """PVE renames a converted template's volumes to base-…; only those can be linked-cloned."""
        return "base-" in self.volume


def template_disks(config: Mapping[str, object]) -> list[Disk]:
    """The template's disks that a clone copies or links: no CD-ROMs, no cloud-init drives."""
    disks: list[Disk] = []
    for key in sorted(config):
        value = str(config[key])
        if not _DISK_KEY.match(key) or "media=cdrom" in value:
            continue
        volid = value.split(",", 1)[0]
        storage, sep, volume = volid.partition(":")
        if not sep or "cloudinit" in volume or volid == "none":
            continue
        disks.append(Disk(key, storage, volume))
    return disks
