"""The end-to-end harness for a live stand: render its fixture, then run one tenant through its life.

May import the operator's API door and the Proxmox client; its command is `tenantctl.cli.e2e`.
"""
