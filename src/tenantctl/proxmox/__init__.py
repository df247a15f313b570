"""Everything tenantctl knows about a Proxmox VE stand: token privileges (data) and the preflight doctor.

`privileges` is pure data shared with the README and `tenantctl audit`; the doctor modules talk to the
Proxmox API through proxmoxer and import it lazily.
"""
