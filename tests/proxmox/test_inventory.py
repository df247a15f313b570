"""What the doctor reads from a VM's config as PVE itself does."""

from __future__ import annotations

import pytest

from tenantctl.proxmox.inventory import agent_enabled


@pytest.mark.parametrize(
    ("agent", "enabled"),
    [("1", True), ("enabled=1,fstrim_cloned_disks=1", True), ("on", True), ("YES", True), ("True", True),
     ("0", False), ("enabled=0", False), ("off", False), ("no", False), ("false", False), (None, False),
     # Only the first property is the switch; the others are options of the agent.
     ("1,fstrim_cloned_disks=0", True), ("enabled=0,fstrim_cloned_disks=1", False)],
)
def test_the_guest_agent_is_on_for_every_boolean_pve_reads_as_true(agent: str | None, enabled: bool) -> None:
    assert agent_enabled({} if agent is None else {"agent": agent}) is enabled
